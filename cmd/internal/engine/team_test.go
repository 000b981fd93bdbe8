package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// transcriptBuilder writes a Claude Code transcript line by line, for
// tests that need a session of their own shape.
type transcriptBuilder struct {
	session, cwd string
	at           time.Time
	lines        []string
	n            int
	parent       string
}

func newTranscript(session, cwd string, at time.Time) *transcriptBuilder {
	return &transcriptBuilder{session: session, cwd: cwd, at: at}
}

func (b *transcriptBuilder) line(fields map[string]any) {
	b.n++
	uuid := fmt.Sprintf("%s-%d", b.session[:8], b.n)
	rec := map[string]any{"parentUuid": nil, "isSidechain": false, "userType": "external", "cwd": b.cwd,
		"sessionId": b.session, "version": "2.1.90", "gitBranch": "main", "uuid": uuid,
		"timestamp": b.at.Add(time.Duration(b.n) * time.Second).UTC().Format("2006-01-02T15:04:05.000Z")}
	if b.parent != "" {
		rec["parentUuid"] = b.parent
	}
	for k, v := range fields {
		rec[k] = v
	}
	data, _ := json.Marshal(rec)
	b.lines = append(b.lines, string(data))
	b.parent = uuid
}

func (b *transcriptBuilder) user(text string) *transcriptBuilder {
	b.line(map[string]any{"type": "user", "origin": map[string]any{"kind": "human"}, "promptSource": "typed",
		"message": map[string]any{"role": "user", "content": text}})
	return b
}

func (b *transcriptBuilder) say(text string) *transcriptBuilder {
	b.line(map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant", "model": "claude-opus-4-6",
		"id": fmt.Sprintf("msg%d", b.n), "content": []any{map[string]any{"type": "text", "text": text}}}})
	return b
}

// call makes a tool call and its result.
func (b *transcriptBuilder) call(name string, input map[string]any, result string, isError bool) *transcriptBuilder {
	id := fmt.Sprintf("toolu_%s_%d", b.session[:4], b.n)
	b.line(map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant", "model": "claude-opus-4-6",
		"id": fmt.Sprintf("msg%d", b.n), "content": []any{map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}}}})
	b.line(map[string]any{"type": "user", "toolUseResult": map[string]any{"stdout": result},
		"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result",
			"tool_use_id": id, "content": result, "is_error": isError}}}})
	return b
}

// compaction writes a compact_boundary and the summary after it.
func (b *transcriptBuilder) compaction(summary string) *transcriptBuilder {
	b.line(map[string]any{"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
		"compactMetadata": map[string]any{"trigger": "auto", "preTokens": 150000}, "logicalParentUuid": b.parent})
	b.line(map[string]any{"type": "user", "isCompactSummary": true, "isVisibleInTranscriptOnly": true,
		"message": map[string]any{"role": "user", "content": summary}})
	return b
}

func (b *transcriptBuilder) write(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, b.session+".jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(b.lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTeamTasksFromTheLead: a teammate's session names the lead's items by
// id only; its resume shows their subjects, read from the lead's session,
// and not the item the lead closed since.
func TestTeamTasksFromTheLead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _ := openEngine(t)
	dir := t.TempDir()
	project := "/home/ines/src/ledgerline"
	at := time.Date(2026, 4, 2, 9, 0, 0, 0, time.UTC)
	lead := newTranscript("1ead0000-0000-4000-8000-000000000001", project, at).
		user("Split the billing migration into tasks for the team.").
		call("TaskCreate", map[string]any{"subject": "Add the invoices.currency column"}, "Task #1 created successfully: Add the invoices.currency column", false).
		call("TaskCreate", map[string]any{"subject": "Backfill currency from the accounts table"}, "Task #2 created successfully: Backfill currency from the accounts table", false).
		call("TaskCreate", map[string]any{"subject": "Drop the legacy_amount view"}, "Task #3 created successfully: Drop the legacy_amount view", false).
		call("TaskUpdate", map[string]any{"taskId": "3", "status": "completed"}, "Updated task #3 status", false)
	mate := newTranscript("3a7e0000-0000-4000-8000-000000000002", project, at.Add(time.Minute)).
		user("Take the next billing task from the team list.").
		call("TaskUpdate", map[string]any{"taskId": "1", "status": "completed"}, "Updated task #1 status", false).
		call("TaskUpdate", map[string]any{"taskId": "2", "status": "in_progress"}, "Updated task #2 status", false).
		call("TaskUpdate", map[string]any{"taskId": "3", "status": "in_progress"}, "Updated task #3 status", false).
		call("Edit", map[string]any{"file_path": project + "/db/backfill.sql", "old_string": "a", "new_string": "b"}, "The file has been updated successfully.", false)
	// The teammate's session comes first: its resume state is extracted
	// while the lead's is not in the ledger yet, and is current after.
	if _, err := e.Ingest(ctx, []string{lead.write(t, dir), mate.write(t, dir)}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := e.Resume(ctx, ResumeRequest{Session: "3a7e", Budget: 1500})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[in progress] #2: Backfill currency from the accounts table", "[done] #1: Add the invoices.currency column"} {
		if !strings.Contains(r.Markdown, want) {
			t.Errorf("resume lacks %q:\n%s", want, r.Markdown)
		}
	}
	if strings.Contains(r.Markdown, "[in progress] #3") {
		t.Errorf("the item the lead closed is still in progress:\n%s", r.Markdown)
	}
}

// TestWindowsProjectReadElsewhere: a transcript written on Windows, read
// on another system, keeps its folder as its project (it is not looked up
// relative to this process's folder), and its handoff shows files under it.
func TestWindowsProjectReadElsewhere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st := openEngine(t)
	p := `C:\Users\ana\src\kiln`
	b := newTranscript("71d0e000-0000-4000-8000-000000000004", p, time.Date(2026, 4, 4, 9, 0, 0, 0, time.UTC)).
		user("Make the batch timer configurable.").
		call("Edit", map[string]any{"file_path": p + `\app\timer.py`, "old_string": "a", "new_string": "b"}, "The file has been updated successfully.", false)
	if _, err := e.Ingest(ctx, []string{b.write(t, t.TempDir())}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	sess, err := st.Session(ctx, "71d0e000-0000-4000-8000-000000000004")
	if err != nil || sess.Project != p {
		t.Fatalf("project %q (%v), want %q", sess.Project, err, p)
	}
	r, err := e.Resume(ctx, ResumeRequest{Session: "71d0", Budget: 1500})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Markdown, "- app\\: timer.py (edited)\n") {
		t.Errorf("resume:\n%s", r.Markdown)
	}
}
