package engine

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/store"
)

// TestCopilotAgentStopWaitsForItsRecord: Copilot CLI writes its
// events.jsonl behind it, and at its agentStop hook the turn's records
// may not be in the file yet (a real run of 1.0.102 on an idle machine:
// none of the file at the hook's start, all of it 0.3 s later). The hook
// waits for its own hook.start record, then reads the turn whole; a file
// that never gets it is read as it is within the budget, and the hook
// ends fine. The file is the real session's (testdata/agents), cut before
// its first agentStop's record and completed while the hook waits.
func TestCopilotAgentStopWaitsForItsRecord(t *testing.T) {
	t.Parallel()
	const session = "66fcbb38-f834-48de-bcfa-712cc7192b3c"
	src := filepath.Join("..", "..", "..", "testdata", "agents", "copilot-1.0.102", "session-state", session, "events.jsonl")
	all, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	// The first agentStop's hook.start, and the turn's records before it
	// from the tool call's result on.
	lines := bytes.SplitAfter(all, []byte("\n"))
	stop := -1
	for i, l := range lines {
		if bytes.Contains(l, []byte(`"hook.start"`)) && bytes.Contains(l, []byte(`"hookType":"agentStop"`)) {
			stop = i
			break
		}
	}
	if stop < 8 {
		t.Fatalf("no agentStop hook.start in %s", src)
	}
	input := func(path string) string {
		return `{"sessionId":"` + session + `","timestamp":1795678436414,"cwd":"/tmp/ledger-fixtures/copilot/proj","transcriptPath":"` +
			path + `","stopReason":"end_turn","stop_hook_active":false}`
	}
	o := func(home string) HookOptions {
		return HookOptions{Agent: "copilot", Event: "agentStop", StateDir: filepath.Join(home, "state")}
	}
	ctx := context.Background()

	t.Run("the records come while it waits", func(t *testing.T) {
		t.Parallel()
		e, s, home := hookEngine(t)
		path := filepath.Join(home, ".copilot", "session-state", session, "events.jsonl")
		cut := stop - 6 // the session's start, without the turn's end
		copyBytes(t, path, bytes.Join(lines[:cut], nil))
		go func() {
			time.Sleep(150 * time.Millisecond)
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			for _, l := range lines[cut : stop+1] {
				f.Write(l) // a record at a time, as Copilot CLI flushes them
			}
		}()
		run := e.RunHook(ctx, strings.NewReader(input(path)), o(home))
		if run.Receipt.Outcome != store.OutcomeOK || !strings.Contains(run.Receipt.Detail, "waited") {
			t.Fatalf("agentStop: %+v (warning %q), want it to wait for its record", run.Receipt, run.Warning)
		}
		// Everything before the hook is in the ledger: the turn's last
		// answer too.
		var want int
		for _, l := range lines[:stop+1] {
			if bytes.Contains(l, []byte(`"type":"assistant.message"`)) || bytes.Contains(l, []byte(`"type":"user.message"`)) {
				want++
			}
		}
		got, err := s.Messages(ctx, session, 0)
		if err != nil {
			t.Fatal(err)
		}
		var said int
		for _, m := range got {
			if m.Role == compact.RoleUser || m.Role == compact.RoleAssistant {
				said++
			}
		}
		if said < want {
			t.Errorf("the ledger holds %d of the %d user and assistant messages written before the hook", said, want)
		}
	})

	// A file replaced by a shorter one (the cursor past its end) is read
	// from its start, by the wait as by the ingest: the record in it is
	// found at once, not waited for until the wait's time is out.
	t.Run("the file was replaced by a shorter one", func(t *testing.T) {
		t.Parallel()
		e, s, home := hookEngine(t)
		path := filepath.Join(home, ".copilot", "session-state", session, "events.jsonl")
		copyBytes(t, path, all)
		if _, err := e.Ingest(ctx, []string{path}, IngestOptions{}); err != nil {
			t.Fatal(err)
		}
		if cur, err := s.Cursor(ctx, path); err != nil || cur.Offset != int64(len(all)) {
			t.Fatalf("cursor after the ingest: %+v, %v", cur, err)
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		copyBytes(t, path, bytes.Join(lines[:stop+1], nil))
		run := e.RunHook(ctx, strings.NewReader(input(path)), o(home))
		if run.Receipt.Outcome != store.OutcomeOK || strings.Contains(run.Receipt.Detail, "had not written") ||
			strings.Contains(run.Receipt.Detail, "waited") {
			t.Errorf("agentStop on the shorter file: %+v (warning %q), want its record found at once", run.Receipt, run.Warning)
		}
	})

	t.Run("the record never comes", func(t *testing.T) {
		t.Parallel()
		e, _, home := hookEngine(t)
		path := filepath.Join(home, ".copilot", "session-state", session, "events.jsonl")
		copyBytes(t, path, bytes.Join(lines[:stop], nil))
		start := time.Now()
		run := e.RunHook(ctx, strings.NewReader(input(path)), o(home))
		budget, _ := HookBudget("Stop")
		if took := time.Since(start); took > e.scaled(budget)+time.Second {
			t.Errorf("agentStop took %v, past its budget of %v", took, budget)
		}
		if run.Receipt.Outcome != store.OutcomeOK || !strings.Contains(run.Receipt.Detail, "had not written the records up to this hook") ||
			!strings.Contains(run.Receipt.Detail, "ingested") {
			t.Errorf("agentStop without its record: %+v (warning %q), want what there is read and the wait noted", run.Receipt, run.Warning)
		}
	})
}
