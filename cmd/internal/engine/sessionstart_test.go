package engine

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/store"
)

// TestSessionStartReceiptSaysItInjected: a SessionStart that injects the
// resume context did its work, even when its ingest found nothing new in
// the transcript (Claude Code's --resume of an ingested session): its
// receipt said "nothing" beside "injected 732 characters".
func TestSessionStartReceiptSaysItInjected(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _ := openEngine(t)
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	e.now = func() time.Time { return now }
	e.hookScale = 60 // what the hook does, not its budget: room under -race on a loaded machine
	const session = "9b8929b7-4a00-4eff-b029-ea2349a5b756"
	dir := t.TempDir()
	path := filepath.Join(dir, session+".jsonl")
	c := &claudeLog{t: t, session: session, cwd: dir, at: now.Add(-time.Hour)}
	c.user("u1", "", "write tides.md")
	c.assistant("a1", "u1", []any{map[string]any{"type": "text", "text": "tides.md is written."}})
	c.write(path)
	if _, err := e.IngestFile(ctx, path, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(map[string]any{"session_id": session, "transcript_path": path, "cwd": dir,
		"hook_event_name": "SessionStart", "source": "resume"})
	run := e.RunHook(ctx, strings.NewReader(string(in)), HookOptions{})
	if run.Output == nil || !strings.Contains(run.Receipt.Detail, "injected") {
		t.Fatalf("SessionStart resume: output %v, receipt %+v", run.Output, run.Receipt)
	}
	if run.Receipt.Outcome != store.OutcomeOK {
		t.Errorf("receipt outcome %q (%s), want ok: it injected the context", run.Receipt.Outcome, run.Receipt.Detail)
	}
}

// TestPreCompactReceiptSaysItWroteTheHandoff: a PreCompact that writes a
// handoff did its work, even when its ingest found nothing new in the
// transcript (Qwen Code's /compress after a run whose Stop ingested
// everything): its receipt said "nothing" beside "handoff 1 written".
func TestPreCompactReceiptSaysItWroteTheHandoff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _ := openEngine(t)
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	e.now = func() time.Time { return now }
	e.hookScale = 60 // what the hook does, not its budget: room under -race on a loaded machine
	const session = "80ba58df-656b-4528-8280-f9ed94832659"
	dir := t.TempDir()
	path := filepath.Join(dir, session+".jsonl")
	c := &claudeLog{t: t, session: session, cwd: dir, at: now.Add(-time.Hour)}
	c.user("u1", "", "write tides.md")
	c.assistant("a1", "u1", []any{map[string]any{"type": "text", "text": "tides.md is written."}})
	c.write(path)
	if _, err := e.IngestFile(ctx, path, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(map[string]any{"session_id": session, "transcript_path": path, "cwd": dir,
		"hook_event_name": "PreCompact", "trigger": "manual"})
	run := e.RunHook(ctx, strings.NewReader(string(in)), HookOptions{})
	if !strings.Contains(run.Receipt.Detail, "handoff 1 written") {
		t.Fatalf("PreCompact: receipt %+v, want the handoff written", run.Receipt)
	}
	if run.Receipt.Outcome != store.OutcomeOK {
		t.Errorf("receipt outcome %q (%s), want ok: it wrote the handoff", run.Receipt.Outcome, run.Receipt.Detail)
	}
}
