package engine

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNoNagOnAGuessedWindow: Claude Code 2.1.328's default model,
// claude-opus-5-5, has a 1M window that headless runs state nowhere ledger
// reads. PostToolUse at 990,100 tokens used to tell the agent "the context
// is 495% full" (of the 200,000 ledger assumed). On a window ledger only
// guesses, it says nothing; once the agent has stated its window (the
// status line's context_window_size, recorded by LearnWindow), it speaks
// at 80% of that window, with the figures of that window. Its budgets are
// sixty times the promised ones: what the hook says is the subject here,
// not how fast it says it (a loaded machine under -race spent the real 1s).
func TestNoNagOnAGuessedWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _ := openEngine(t)
	e.hookScale = 60
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	e.now = func() time.Time { return now }
	e.hookScale = 60 // what the hook does, not its budget: room under -race on a loaded machine
	const session = "0b2b4a37-6992-4334-9bb4-03f2b977b028"
	dir := t.TempDir()
	path := filepath.Join(dir, session+".jsonl")
	c := &claudeLog{t: t, session: session, cwd: dir, at: now.Add(-time.Hour)}
	c.user("u1", "", "write a.txt")
	c.assistant("a1", "u1", []any{map[string]any{"type": "tool_use", "id": "t1", "name": "Write", "input": map[string]any{"file_path": "a.txt"}}})
	c.user("u2", "a1", []any{map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": "written"}})
	c.write(path)
	postToolUse := func() HookRun {
		t.Helper()
		in, _ := json.Marshal(map[string]any{"session_id": session, "transcript_path": path, "cwd": dir,
			"hook_event_name": "PostToolUse", "tool_name": "Write"})
		run := e.RunHook(ctx, strings.NewReader(string(in)), HookOptions{})
		if run.Warning != "" {
			t.Fatalf("PostToolUse: %s", run.Warning)
		}
		return run
	}
	if run := postToolUse(); run.Output != nil || strings.Contains(run.Receipt.Detail, "full") {
		t.Fatalf("on a guessed window: output %+v, receipt %q; want nothing said", run.Output, run.Receipt.Detail)
	}
	// Nor does clear mode ask for a handoff at Stop on a guess.
	stop, _ := json.Marshal(map[string]any{"session_id": session, "transcript_path": path, "cwd": dir, "hook_event_name": "Stop"})
	if run := e.RunHook(ctx, strings.NewReader(string(stop)), HookOptions{Mode: "clear"}); run.Output != nil ||
		!strings.Contains(run.Receipt.Detail, "clear mode: no block, the model's window is not known from the agent") {
		t.Errorf("clear mode's Stop on a guessed window: output %+v, receipt %q", run.Output, run.Receipt.Detail)
	}
	m, err := e.Meter(ctx, session, MeterOptions{})
	if err != nil || m.LimitTokens != 1_000_000 || m.LimitFromAgent {
		t.Errorf("meter = %d tokens, from agent %v (%v); want the table's 1,000,000 for claude-opus-5-5, not from the agent", m.LimitTokens, m.LimitFromAgent, err)
	}

	if err := e.LearnWindow(ctx, session, 1_000_000); err != nil {
		t.Fatal(err)
	}
	run := postToolUse()
	out, ok := run.Output.(PostToolUseOutput)
	if !ok || !strings.Contains(out.HookSpecificOutput.AdditionalContext, "the context is 99% full (990100 of 1000000 tokens)") {
		t.Errorf("on the window the agent stated: output %+v, receipt %q; want the suggestion at 99%% of 1,000,000", run.Output, run.Receipt.Detail)
	}
	if m, err := e.Meter(ctx, session, MeterOptions{}); err != nil || !m.LimitFromAgent || m.LimitTokens != 1_000_000 {
		t.Errorf("meter after LearnWindow = %+v (%v)", m, err)
	}
}
