package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/store/storetest"
)

func hookJSON(t *testing.T, fields map[string]any) string {
	t.Helper()
	b, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type auditRow struct {
	Session   string `json:"session"`
	Trigger   string `json:"trigger"`
	PreTokens *int64 `json:"pre_tokens"`
	Source    string `json:"source"`
	HandoffID *int64 `json:"handoff_id"`
	Summary   int    `json:"summary_tokens"`
}

func auditRows(t *testing.T, home, db string) []auditRow {
	t.Helper()
	r := runCmd(t, home, "", "--db", db, "audit", "--json")
	if r.code != 0 {
		t.Fatalf("audit: %s", r.stderr)
	}
	var rows []auditRow
	decodeJSON(t, r.stdout, &rows)
	return rows
}

// boundaryOf is a transcript's lines and the index of its last
// compact_boundary line.
func boundaryOf(t *testing.T, path string) ([][]byte, int) {
	t.Helper()
	lines := splitLines(t, path)
	boundary := -1
	for i, l := range lines {
		if strings.Contains(string(l), `"subtype":"compact_boundary"`) {
			boundary = i
		}
	}
	if boundary < 0 {
		t.Fatalf("no compact_boundary in %s", path)
	}
	return lines, boundary
}

// TestHookEndToEnd drives the built binary with Claude Code's hook inputs
// over a real transcript (spotter-258c7280, an auto compaction at line
// 1286): PreCompact before the compaction reaches the transcript, then the
// transcript's own boundary, then the session's next start.
func TestHookEndToEnd(t *testing.T) {
	t.Parallel()
	const session = "258c7280-ae70-4798-800f-63464d01a85d"
	lines, boundary := boundaryOf(t, filepath.Join(corpusDir(t), "claude", "spotter-"+session+".jsonl"))
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	path := filepath.Join(home, ".claude", "projects", "-home-USER-projects-spotter", session+".jsonl")
	os.MkdirAll(filepath.Dir(path), 0o700)
	write := func(ls [][]byte) {
		var b []byte
		for _, l := range ls {
			b = append(b, l...)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(lines[:boundary])
	in := func(event string, extra map[string]any) string {
		m := map[string]any{"session_id": session, "transcript_path": path, "cwd": "/home/USER/projects/spotter-worktrees/spotter-gqc",
			"hook_event_name": event}
		for k, v := range extra {
			m[k] = v
		}
		return hookJSON(t, m)
	}
	hook := func(stdin string, args ...string) result {
		t.Helper()
		start := time.Now()
		r := runBin(t, home, stdin, append([]string{"--db", db, "hook"}, args...)...)
		t.Logf("%s: %v", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
		return r
	}

	// PreCompact: a handoff and one compaction record, source hook. Claude
	// Code may fire it twice for one compaction: still one record.
	pre := in("PreCompact", map[string]any{"trigger": "auto", "custom_instructions": nil})
	for range 2 {
		if r := hook(pre); r.code != 0 || r.stderr != "" {
			t.Fatalf("PreCompact: exit %d, stderr %q", r.code, r.stderr)
		}
	}
	rows := auditRows(t, home, db)
	if len(rows) != 1 || rows[0].Source != "hook" || rows[0].HandoffID == nil || rows[0].Trigger != "auto" {
		t.Fatalf("after PreCompact: %+v, want one hook record with a handoff", rows)
	}
	hs := runBin(t, home, "", "--db", db, "handoff", "show", session)
	if hs.code != 0 || !strings.Contains(hs.stdout, "## Files modified") {
		t.Fatalf("handoff show: %d %s", hs.code, hs.stderr)
	}

	// The compaction happens; its boundary reaches the transcript and the
	// session ends: still one record, now completed from the transcript.
	write(lines)
	if r := hook(in("SessionEnd", map[string]any{"reason": "other"})); r.code != 0 || r.stderr != "" {
		t.Fatalf("SessionEnd: exit %d, stderr %q", r.code, r.stderr)
	}
	rows = auditRows(t, home, db)
	if len(rows) != 1 {
		t.Fatalf("after the boundary: %d records, want 1: %+v", len(rows), rows)
	}
	if r := rows[0]; r.Source != "hook" || r.PreTokens == nil || *r.PreTokens != 167094 || r.Summary < 2000 {
		t.Errorf("the record was not completed from the transcript: %+v (want pre_tokens 167094 and the summary)", r)
	}

	// SessionStart after /compact (same session) and after /clear (a new
	// session of the same project) inject the handoff.
	for _, tc := range []struct{ source, id string }{{"compact", session}, {"clear", "99999999-0000-4000-8000-000000000000"}} {
		r := hook(hookJSON(t, map[string]any{"session_id": tc.id, "transcript_path": path, "cwd": "/home/USER/projects/spotter-worktrees/spotter-gqc",
			"hook_event_name": "SessionStart", "source": tc.source}))
		if r.code != 0 {
			t.Fatalf("SessionStart %s: exit %d: %s", tc.source, r.code, r.stderr)
		}
		var out engine.SessionStartOutput
		decodeJSON(t, r.stdout, &out)
		ctx := out.HookSpecificOutput.AdditionalContext
		if out.HookSpecificOutput.HookEventName != "SessionStart" || !strings.Contains(ctx, "Session "+session) ||
			!strings.Contains(ctx, "## Files modified") || len([]rune(ctx)) > engine.MaxHookContext {
			t.Errorf("SessionStart %s: context does not carry the handoff:\n%.400s", tc.source, ctx)
		}
	}
	// startup injects nothing unless asked to.
	start := hookJSON(t, map[string]any{"session_id": "88888888-0000-4000-8000-000000000000", "cwd": "/home/USER/projects/spotter-worktrees/spotter-gqc",
		"hook_event_name": "SessionStart", "source": "startup"})
	if r := hook(start); r.code != 0 || r.stdout != "" {
		t.Errorf("SessionStart startup: exit %d, stdout %q; want nothing", r.code, r.stdout)
	}
	if r := hook(start, "--startup"); r.code != 0 || !strings.Contains(r.stdout, "additionalContext") {
		t.Errorf("SessionStart startup --startup: exit %d, stdout %.100q", r.code, r.stdout)
	}

	// SessionEnd ingests an appended line.
	before := sessionMessages(t, home, db)[session]
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"one more thing"},"uuid":"aaaaaaaa-0000-4000-8000-000000000001","timestamp":"2026-02-11T22:00:00.000Z","sessionId":"` + session + `","cwd":"/x"}` + "\n")
	f.Close()
	if r := hook(in("SessionEnd", map[string]any{"reason": "logout"})); r.code != 0 {
		t.Fatalf("SessionEnd: %s", r.stderr)
	}
	if after := sessionMessages(t, home, db)[session]; after != before+1 {
		t.Errorf("SessionEnd ingested %v messages, want 1", after-before)
	}

	// Clear mode blocks an auto compaction once the handoff is written
	// (exit 2, the reason on stderr), never a manual one.
	time.Sleep(10 * time.Millisecond)
	r := runBin(t, home, in("PreCompact", map[string]any{"trigger": "auto"}), "--db", db, "hook", "--mode", "clear")
	if r.code != 2 || !strings.Contains(r.stderr, "/clear") {
		t.Errorf("clear mode, auto: exit %d, stderr %q; want 2 and a /clear message", r.code, r.stderr)
	}
	r = runBin(t, home, in("PreCompact", map[string]any{"trigger": "manual"}), "--db", db, "hook", "--mode", "clear")
	if r.code != 0 {
		t.Errorf("clear mode, manual: exit %d, want 0", r.code)
	}
}

// TestHookFailsOpen: whatever goes wrong, exit 0, one warning line, the
// same line in the hook log, and quickly.
func TestHookFailsOpen(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	notDir := filepath.Join(home, "file")
	os.WriteFile(notDir, []byte("x"), 0o600)
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	tests := []struct {
		name  string
		stdin string
		args  []string
	}{
		{"garbage on stdin", "garbage{", nil},
		{"empty stdin", "", nil},
		{"no event name", `{"session_id":"x"}`, nil},
		{"missing transcript", `{"session_id":"x","transcript_path":"/nonexistent/t.jsonl","hook_event_name":"Stop"}`, nil},
		{"database cannot be opened", `{"session_id":"x","transcript_path":"/nonexistent/t.jsonl","hook_event_name":"SessionEnd"}`, []string{"--db", filepath.Join(notDir, "l.db")}},
		{"unknown session at PreCompact", `{"session_id":"x","transcript_path":"/nonexistent/t.jsonl","hook_event_name":"PreCompact","trigger":"auto"}`, []string{"--mode", "clear"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if !strings.Contains(strings.Join(args, " "), "--db") {
				args = append([]string{"--db", db}, args...)
			}
			start := time.Now()
			r := runCmd(t, home, tc.stdin, append(args, "hook")...)
			took := time.Since(start)
			if r.code != 0 {
				t.Errorf("exit %d, want 0 (stderr %q)", r.code, r.stderr)
			}
			lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "ledger: warning: ") {
				t.Errorf("stderr = %q, want one warning line", r.stderr)
			}
			// Each event's budget is the binary's to keep (see
			// TestHookBudgetsWhileLocked); here, only that failing
			// never hangs: a bound well past what a loaded machine
			// takes (3 s seen at a load of 18 under -race).
			if took > 10*time.Second {
				t.Errorf("took %v", took)
			}
			log, err := os.ReadFile(filepath.Join(home, ".state", "ledger", "hook.log"))
			if err != nil || !strings.Contains(string(log), strings.TrimPrefix(lines[0], "ledger: warning: ")) {
				t.Errorf("hook log lacks the warning (%v):\n%s", err, log)
			}
		})
	}
	// Events ledger does not handle: nothing at all.
	r := runCmd(t, home, `{"hook_event_name":"Notification","message":"hi"}`, "--db", db, "hook")
	if r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Errorf("Notification: %+v", r)
	}
}

// TestHookPostToolUseThresholds: PostToolUse suggests a handoff once per
// threshold passed (50, 100 and 150 tool calls), then stays silent.
func TestHookPostToolUseThresholds(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	// ae4a77f8 makes 242 tool calls: the 50, 100 and 150 marks have passed.
	path := filepath.Join(corpusDir(t), "claude", "spotter-ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl")
	in := hookJSON(t, map[string]any{"session_id": "ae4a77f8-aedd-4bc1-888f-c94edc91af04", "transcript_path": path,
		"cwd": "/x", "hook_event_name": "PostToolUse", "tool_name": "Bash"})
	// Ingested first (by the built binary: the setup, not the subject):
	// the thresholds are the test's, not how much of the transcript a
	// loaded machine reads within PostToolUse's 1 s budget.
	ingestBin(t, home, db, path)
	var said []string
	for runs, tries := 0, 0; runs < 4; tries++ {
		r := runCmd(t, home, in, "--db", db, "hook")
		if r.code == 0 && strings.Contains(r.stderr, "budget of ") && tries < 20 {
			// The machine was too busy for the hook's budget: it did
			// nothing, said so, and the next event does it.
			t.Logf("run %d: %s", tries+1, strings.TrimSpace(r.stderr))
			continue
		}
		runs++
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if r.stdout != "" {
			var out engine.PostToolUseOutput
			decodeJSON(t, r.stdout, &out)
			if !strings.Contains(out.SystemMessage, "ledger compact") || out.HookSpecificOutput.HookEventName != "PostToolUse" {
				t.Errorf("output %s", r.stdout)
			}
			said = append(said, out.SystemMessage)
		}
	}
	// One suggestion per threshold, then silence: three marks, three runs.
	if len(said) != 3 {
		t.Errorf("%d suggestions over 4 runs, want 3 (one per mark):\n%s", len(said), strings.Join(said, "\n"))
	}
}

// TestConcurrentPreCompactOneRecord starts 8 real `ledger hook` processes
// at once with the same PreCompact input, as Claude Code may for one
// /compact: one handoff and one compaction record, whoever wins. (The check
// for an earlier record and the write are one immediate transaction.)
func TestConcurrentPreCompactOneRecord(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	project := filepath.Join(home, "payments")
	if err := os.MkdirAll(project, 0o700); err != nil {
		t.Fatal(err)
	}
	path := sampleInProject(t, home, project, sampleSession)
	if r := runCmd(t, home, "", "--db", db, "init"); r.code != 0 {
		t.Fatalf("init: %s", r.stderr)
	}
	pre := hookJSON(t, map[string]any{"session_id": sampleSession, "transcript_path": path, "cwd": project,
		"hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": nil})
	var procs []*proc
	for range 8 {
		procs = append(procs, startBin(t, home, pre, "--db", db, "hook"))
	}
	for _, p := range procs {
		p.wait(t)
		p.wantClean(t)
	}
	var handoffs []map[string]any
	r := runCmd(t, home, "", "--db", db, "handoff", "list", "--json")
	decodeJSON(t, r.stdout, &handoffs)
	rows := auditRows(t, home, db)
	var hookRows int
	for _, row := range rows {
		if row.Source == "hook" {
			hookRows++
		}
	}
	if len(handoffs) != 1 || hookRows != 1 {
		t.Fatalf("8 concurrent PreCompact hooks wrote %d handoffs and %d hook records, want 1 and 1: %+v", len(handoffs), hookRows, rows)
	}
	if id := rows[len(rows)-1].HandoffID; id == nil || int64(handoffs[0]["id"].(float64)) != *id {
		t.Errorf("the record is not linked to the handoff: %+v, %v", rows, handoffs[0]["id"])
	}
	files, _ := filepath.Glob(filepath.Join(engine.HandoffsDir(db, project), sampleSession, "*.md"))
	if len(files) != 1 {
		t.Errorf("handoff files: %v, want exactly one", files)
	}
}
