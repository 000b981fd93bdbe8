package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/store"
)

// claudeLog builds Claude Code transcript lines of one session.
type claudeLog struct {
	t       *testing.T
	session string
	cwd     string
	at      time.Time
	lines   []string
}

func (c *claudeLog) add(rec map[string]any) {
	c.t.Helper()
	c.at = c.at.Add(time.Second)
	rec["sessionId"], rec["cwd"], rec["timestamp"] = c.session, c.cwd, c.at.Format(time.RFC3339Nano)
	b, err := json.Marshal(rec)
	if err != nil {
		c.t.Fatal(err)
	}
	c.lines = append(c.lines, string(b))
}

func (c *claudeLog) user(uuid, parent string, content any) {
	c.add(map[string]any{"type": "user", "uuid": uuid, "parentUuid": parent, "message": map[string]any{"role": "user", "content": content}})
}

func (c *claudeLog) assistant(uuid, parent string, content any) {
	c.add(map[string]any{"type": "assistant", "uuid": uuid, "parentUuid": parent, "message": map[string]any{
		"id": "msg_" + uuid, "role": "assistant", "model": "claude-opus-5-5", "content": content,
		"usage": map[string]any{"input_tokens": 100, "cache_read_input_tokens": 990_000, "output_tokens": 50}}})
}

// hookContext is the attachment Claude Code 2.1.328 writes for a hook's
// additionalContext: a line of the uuid chain that is not conversation.
func (c *claudeLog) hookContext(uuid, parent, text string) {
	c.add(map[string]any{"type": "attachment", "uuid": uuid, "parentUuid": parent,
		"attachment": map[string]any{"type": "hook_additional_context", "content": []string{text}, "hookName": "PostToolUse", "hookEvent": "PostToolUse"}})
}

func (c *claudeLog) boundary(uuid, logicalParent string) {
	c.add(map[string]any{"type": "system", "subtype": "compact_boundary", "uuid": uuid, "parentUuid": nil,
		"logicalParentUuid": logicalParent, "content": "Conversation compacted",
		"compactMetadata": map[string]any{"trigger": "auto", "preTokens": 990_100}})
}

func (c *claudeLog) write(path string) {
	c.t.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(c.lines, "\n")+"\n"), 0o600); err != nil {
		c.t.Fatal(err)
	}
}

// TestPreCompactOncePerTranscriptPoint: one compaction is one point of the
// transcript, not a time window. PreCompact fired twice at the same point
// writes one handoff; a second compaction seconds later, after more work,
// gets a handoff of its own; and each transcript boundary completes its
// own record (matched through the hook attachments that follow the last
// message, as Claude Code 2.1.328 writes them).
func TestPreCompactOncePerTranscriptPoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st := openEngine(t)
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	e.now = func() time.Time { return now }
	e.hookScale = 60 // what the hook does, not its budget: room under -race on a loaded machine
	const session = "5b3e9c1a-7d24-4f6e-b0a8-2c91e4d7f3a6"
	dir := t.TempDir()
	path := filepath.Join(dir, session+".jsonl")
	c := &claudeLog{t: t, session: session, cwd: dir, at: now.Add(-time.Hour)}
	c.user("u1", "", "write a.txt")
	c.assistant("a1", "u1", []any{map[string]any{"type": "tool_use", "id": "t1", "name": "Write", "input": map[string]any{"file_path": "a.txt"}}})
	c.user("u2", "a1", []any{map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": "written"}})
	c.hookContext("x1", "u2", "ledger: this session has made 50 tool calls.")
	c.write(path)

	preCompact := func() HookRun {
		t.Helper()
		in, _ := json.Marshal(map[string]any{"session_id": session, "transcript_path": path, "cwd": dir,
			"hook_event_name": "PreCompact", "trigger": "auto"})
		run := e.RunHook(ctx, strings.NewReader(string(in)), HookOptions{})
		if run.Warning != "" {
			t.Fatalf("PreCompact: %s", run.Warning)
		}
		return run
	}
	first := preCompact()
	again := preCompact() // fired twice for one compaction
	if !strings.Contains(first.Receipt.Detail, "written to") || !strings.Contains(again.Receipt.Detail, "written for this compaction already") {
		t.Fatalf("at one point: %q then %q, want a handoff then the same one", first.Receipt.Detail, again.Receipt.Detail)
	}

	// The compaction, then more work, and a second compaction 20 s later.
	c.boundary("b1", "x1")
	c.add(map[string]any{"type": "user", "uuid": "s1", "parentUuid": "b1", "isCompactSummary": true,
		"message": map[string]any{"role": "user", "content": "This session is being continued: a.txt is written."}})
	c.assistant("a2", "s1", []any{map[string]any{"type": "tool_use", "id": "t2", "name": "Write", "input": map[string]any{"file_path": "b.txt"}}})
	c.user("u3", "a2", []any{map[string]any{"type": "tool_result", "tool_use_id": "t2", "content": "written"}})
	c.hookContext("x2", "u3", "more context")
	c.write(path)
	now = now.Add(20 * time.Second)
	second := preCompact()
	if !strings.Contains(second.Receipt.Detail, "written to") {
		t.Fatalf("a second compaction 20 s later, after more work: %q, want a handoff of its own", second.Receipt.Detail)
	}

	c.boundary("b2", "x2")
	c.write(path)
	if _, err := e.IngestFile(ctx, path, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	cs, err := st.Compactions(ctx, store.CompactionFilter{SessionID: session})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 {
		t.Fatalf("%d compactions, want 2: %+v", len(cs), cs)
	}
	for i, want := range []struct{ boundary, parent string }{{"b1", "u2"}, {"b2", "u3"}} {
		got := cs[i]
		if got.Source != "hook" || got.HandoffID == nil || got.BoundaryUUID != want.boundary || got.LogicalParentUUID != want.parent {
			t.Errorf("compaction %d = %+v, want the hook's record with its handoff, completed by %s after %s", i+1, got, want.boundary, want.parent)
		}
	}
	if orZero(cs[0].HandoffID) == orZero(cs[1].HandoffID) {
		t.Errorf("both compactions have handoff %d", orZero(cs[0].HandoffID))
	}
}
