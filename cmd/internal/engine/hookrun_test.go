package engine

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/store/storetest"
)

// hookEngine is an engine over a new ledger in a temporary home folder,
// whose clock is fixed at 2026-03-02 09:00 UTC.
func hookEngine(t *testing.T) (*Engine, *store.Store, string) {
	t.Helper()
	home := t.TempDir()
	// A copy of the migrated template: a migration from scratch is most
	// of what opening a new ledger costs, and what these tests prove
	// begins after it.
	s, err := store.Open(context.Background(), storetest.MigratedFile(t, filepath.Join(home, "ledger.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	e := newEngine(Config{DB: s.Path(), Mode: Write, Home: home, Now: func() time.Time { return time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC) }},
		func(context.Context) (*store.Store, error) { return s, nil })
	return e, s, home
}

// hookLogOf is what the hook log under home holds.
func hookLogOf(t *testing.T, home string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, ".local", "state", "ledger", "hook.log"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(b)
}

// TestRunHookBadInput: input that is not a hook's fails open: a warning
// (in the hook log too, at the engine's time), a failed receipt in the
// ledger, no output; an event ledger does not handle gets nothing at all.
func TestRunHookBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, stdin, warning string }{
		{"garbage", "garbage{", "hook input is not JSON"},
		{"empty", "", "hook input is not JSON"},
		{"no event name", `{"session_id":"x"}`, "hook input has no hook_event_name"},
		{"too large", `{"hook_event_name":"Stop","x":"` + strings.Repeat("a", maxHookInput) + `"}`, "hook input larger than"},
		{"no transcript", `{"hook_event_name":"Stop","session_id":"x"}`, "Stop: hook input has no transcript_path"},
		{"missing transcript", `{"hook_event_name":"SessionEnd","session_id":"x","transcript_path":"/nonexistent/t.jsonl"}`, "SessionEnd: open /nonexistent/t.jsonl: no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, s, home := hookEngine(t)
			// What the run does with its input is the subject, not how
			// fast a loaded machine reads 4 MB and writes a receipt:
			// the wait for the input (and so the receipt's deadline)
			// is a minute.
			e.hookScale = 60
			run := e.RunHook(context.Background(), strings.NewReader(tc.stdin), HookOptions{})
			if run.Output != nil || run.Err != nil || !strings.Contains(run.Warning, tc.warning) {
				t.Errorf("run = %+v, want only a warning with %q", run, tc.warning)
			}
			if log := hookLogOf(t, home); !strings.Contains(log, "2026-03-02T09:00:00Z "+run.Warning+"\n") {
				t.Errorf("hook log %q lacks the warning at the engine's time", log)
			}
			rs, err := s.HookReceipts(context.Background(), store.ReceiptFilter{})
			if err != nil || len(rs) != 1 || rs[0].Outcome != store.OutcomeFailed || rs[0].Detail != run.Receipt.Detail {
				t.Errorf("receipts %+v (%v), want the run's, failed", rs, err)
			}
		})
	}
	t.Run("not an event ledger handles", func(t *testing.T) {
		t.Parallel()
		e, s, home := hookEngine(t)
		run := e.RunHook(context.Background(), strings.NewReader(`{"hook_event_name":"Notification","message":"hi"}`), HookOptions{})
		if run != (HookRun{}) {
			t.Errorf("run = %+v, want nothing", run)
		}
		if rs, _ := s.HookReceipts(context.Background(), store.ReceiptFilter{}); len(rs) != 0 || hookLogOf(t, home) != "" {
			t.Errorf("receipts %+v, log %q: want none", rs, hookLogOf(t, home))
		}
	})
}

// TestRunHookStdinNeverEnds: a hook whose stdin is never closed waits for
// its input a second at most; when its context ends first (the process's
// signal), at once.
func TestRunHookStdinNeverEnds(t *testing.T) {
	t.Parallel()
	for _, cancelled := range []bool{false, true} {
		e, _, _ := hookEngine(t)
		r, w := io.Pipe()
		defer w.Close()
		go w.Write([]byte(`{"hook_event_name":"Stop",`))
		ctx, cancel := context.WithCancel(context.Background())
		if cancelled {
			time.AfterFunc(50*time.Millisecond, cancel)
		}
		start := time.Now()
		run := e.RunHook(ctx, r, HookOptions{})
		took := time.Since(start)
		cancel()
		want := "no complete hook input on stdin within 1s"
		if cancelled {
			want = "reading the hook input: interrupted"
		}
		if !strings.Contains(run.Warning, want) || run.Receipt.Outcome != store.OutcomeFailed {
			t.Errorf("cancelled %v: run %+v after %v, want a failed receipt and a warning %q", cancelled, run, took, want)
		}
		// What ended the wait is in the warning; its length is the
		// budget's, whatever the machine's load adds.
		if !cancelled && took < hookInputWait {
			t.Errorf("gave up on stdin after %v, before its %v", took, hookInputWait)
		}
	}
}

// TestRunHookReceiptWhileLocked: a run's receipt waits for the write lock
// a moment at most; when another connection holds it, the receipt goes to
// the hook log, and the run still ends within its budget.
func TestRunHookReceiptWhileLocked(t *testing.T) {
	t.Parallel()
	e, s, home := hookEngine(t)
	lock, err := rawDB(t, s.Path()).Beginx()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Exec(`INSERT INTO sessions (id, source) VALUES ('held', 'claude')`); err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback()
	start := time.Now()
	run := e.RunHook(context.Background(), strings.NewReader(`{"hook_event_name":"Stop","session_id":"x"}`), HookOptions{})
	took := time.Since(start)
	if run.Receipt.Outcome != store.OutcomeFailed || !strings.Contains(hookLogOf(t, home), ` receipt {"`) {
		t.Errorf("run %+v; hook log %q: want the receipt in the log", run, hookLogOf(t, home))
	}
	// A receipt that waited for the lock as other writes do would wait
	// SQLite's busy timeout (5 s), whatever the machine's load; the run's
	// own budget is 1 s, and a loaded machine may add to it.
	if took >= 5*time.Second {
		t.Errorf("the run took %v: its receipt waited for the lock", took)
	}
}
