package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/store/storetest"
)

// writeLongLineTranscript writes a Claude Code transcript of a short first
// message, one line of about size bytes (a user message), and a last
// message saying word; it returns its path.
func writeLongLineTranscript(t *testing.T, dir, session string, size int, word string) string {
	t.Helper()
	path := filepath.Join(dir, session+".jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	msg := func(uuid, text string) {
		b, _ := json.Marshal(map[string]any{"type": "user", "uuid": uuid, "sessionId": session, "cwd": "/home/dev/src/big",
			"timestamp": "2026-03-02T09:00:00Z", "message": map[string]any{"role": "user", "content": text}})
		w.Write(append(b, '\n'))
	}
	msg("first", "cat the whole log")
	w.WriteString(`{"type":"user","uuid":"big","sessionId":"` + session + `","cwd":"/home/dev/src/big","timestamp":"2026-03-02T09:00:01Z","message":{"role":"user","content":"`)
	chunk := strings.Repeat("INFO request served in 3ms path=/api/v1/items ", 1<<12)
	for n := 0; n < size; n += len(chunk) {
		w.WriteString(chunk)
	}
	w.WriteString("\"}}\n")
	msg("after", word+" comes after the long line")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestHookPassesAnOverLongLine: a transcript line too long for a hook to
// read in its budget (150 MB, at the real default limits) is skipped,
// counted in the receipt, and the cursor moves past it: the lines after
// it are recorded by the same hook run or the next, each run within its
// budget. Before, every Stop, PostToolUse and SessionEnd spent its budget
// on the line and recorded nothing after it, every turn.
func TestHookPassesAnOverLongLine(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	const session = "5b5b5b5b-0000-4000-8000-000000000150"
	path := writeLongLineTranscript(t, home, session, 150<<20, "zebrafinch")
	fi, _ := os.Stat(path)
	in := hookInput("Stop", session, path, home, map[string]any{"stop_hook_active": false})
	found := recordedWithin(t, home, db, in, "Stop", "hook")
	if !found {
		t.Fatal("two Stop runs did not record the line after the 150 MB one")
	}
	var off int64
	rawDB(t, db).Get(&off, `SELECT coalesce(max(offset), 0) FROM cursors`)
	if off != fi.Size() {
		t.Errorf("cursor at %d, want the end of the file (%d)", off, fi.Size())
	}
	if r := runBin(t, home, "", "--db", db, "hooks", "log", "--json"); !strings.Contains(r.stdout, "skipped 1 line") {
		t.Errorf("no receipt says a line was skipped: %.1000s", r.stdout)
	}
	// What is appended later is recorded by the next hook, at once.
	appendFile(t, path, []byte(`{"type":"user","uuid":"later","sessionId":"`+session+`","cwd":"/home/dev/src/big","timestamp":"2026-03-02T09:00:05Z","message":{"role":"user","content":"quokka later on"}}`+"\n"))
	p := startBin(t, home, in, "--db", db, "hook")
	endsWithin(t, p, time.Second+slack)
	if hits, _ := search(t, home, db, "quokka"); len(hits) == 0 {
		t.Errorf("the line appended after the long one is not recorded by the next Stop")
	}
}

// TestCopilotStopPassesAnOverLongLine: at Copilot CLI's native agentStop,
// ledger first waits for the hook's own hook.start record in events.jsonl;
// a line too long to read in the budget (60 MB) before that record is
// passed over by the wait, holding no more of it than a record's worth,
// and then read or skipped by the ingest as at any other hook: the lines
// after it are recorded by the same run or the next, each within its
// budget.
// Before, the wait read the whole tail into memory at every poll, the run
// overran its budget and was abandoned, and every agentStop did the same
// again, recording nothing after the line.
func TestCopilotStopPassesAnOverLongLine(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	const session = "66fcbb38-f834-48de-bcfa-712cc7192b3c"
	const stamp = 1795678451269
	path := filepath.Join(home, ".copilot", "session-state", session, "events.jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(`{"type":"session.start","data":{"sessionId":"` + session + `","version":1,"producer":"copilot-agent","copilotVersion":"1.0.102","startTime":"2026-11-26T07:33:53.501Z","selectedModel":"m","context":{"cwd":"/home/dev/src/big"}},"id":"e1","timestamp":"2026-11-26T07:33:53.501Z","parentId":null}` + "\n")
	w.WriteString(`{"type":"user.message","data":{"content":"`)
	chunk := strings.Repeat("INFO request served in 3ms path=/api/v1/items ", 1<<12)
	for n := 0; n < 60<<20; n += len(chunk) {
		w.WriteString(chunk)
	}
	w.WriteString(`"},"id":"e2","timestamp":"2026-11-26T07:33:55.072Z","parentId":"e1"}` + "\n")
	w.WriteString(`{"type":"user.message","data":{"content":"zebrafinch comes after the long line"},"id":"e3","timestamp":"2026-11-26T07:33:56.000Z","parentId":"e2"}` + "\n")
	w.WriteString(`{"type":"hook.start","data":{"hookInvocationId":"h1","hookType":"agentStop","input":{"sessionId":"` + session + `","timestamp":1795678451269,"cwd":"/home/dev/src/big","stopReason":"end_turn"}},"id":"e4","timestamp":"2026-11-26T07:33:57.000Z","parentId":"e3"}` + "\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	b, _ := json.Marshal(map[string]any{"sessionId": session, "timestamp": stamp, "cwd": "/home/dev/src/big",
		"transcriptPath": path, "stopReason": "end_turn", "stop_hook_active": false})
	found := recordedWithin(t, home, db, string(b), "agentStop", "hook", "--agent", "copilot", "--event", "agentStop")
	r := runBin(t, home, "", "--db", db, "hooks", "log", "--json")
	if !found {
		t.Fatalf("two agentStop runs did not record the line after the 60 MB one; receipts: %.2000s", r.stdout)
	}
	if strings.Contains(r.stdout, `"timeout"`) || strings.Contains(r.stdout, `"failed"`) {
		t.Errorf("a run overran its budget or failed: %.2000s", r.stdout)
	}
}

// TestHookPassesALineOfManyAssignments: a line of 38 KB holding 1,600
// assignments the redaction drops (password=hunter2hunter2, a low-entropy
// value) is redacted in time, and the hook records the lines after it.
// Before, each dropped value was searched again over the 512 bytes after
// it, and each dropped value found there again, four deep: the line took
// 77 s to redact, every Stop spent its budget on it, and nothing after it
// was ever recorded.
func TestHookPassesALineOfManyAssignments(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	const session = "5b5b5b5b-0000-4000-8000-000000000160"
	var b strings.Builder
	msg := func(uuid, text string) {
		line, _ := json.Marshal(map[string]any{"type": "user", "uuid": uuid, "sessionId": session, "cwd": "/home/dev/src/big",
			"timestamp": "2026-03-02T09:00:00Z", "message": map[string]any{"role": "user", "content": text}})
		b.Write(append(line, '\n'))
	}
	msg("first", "print the config")
	msg("dense", strings.Repeat(" password=hunter2hunter2", 1600))
	msg("after", "zebrafinch comes after the dense line")
	path := filepath.Join(home, session+".jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	in := hookInput("Stop", session, path, home, map[string]any{"stop_hook_active": false})
	found := recordedWithin(t, home, db, in, "Stop", "hook")
	if !found {
		r := runBin(t, home, "", "--db", db, "hooks", "log", "--json")
		t.Fatalf("two Stop runs did not record the line after the dense one; receipts: %.2000s", r.stdout)
	}
}

// recordedWithin runs the hook (ledger --db db ARGS, stdin in) up to
// twice, each run within its one-second budget and exiting 0, until the
// word "zebrafinch", written after the hostile line, is in the ledger;
// it reports whether it is.
func recordedWithin(t *testing.T, home, db, in, event string, args ...string) bool {
	t.Helper()
	for run := 1; run <= 2; run++ {
		p := startBin(t, home, in, append([]string{"--db", db}, args...)...)
		took := endsWithin(t, p, time.Second+slack)
		if p.exitCode != 0 {
			t.Errorf("%s run %d: exit %d after %v: %s", event, run, p.exitCode, took, p.errb.String())
		}
		hits, _ := search(t, home, db, "zebrafinch")
		t.Logf("%s run %d: %v, the line after recorded: %v", event, run, took.Round(time.Millisecond), len(hits) > 0)
		if len(hits) > 0 {
			return true
		}
	}
	return false
}
