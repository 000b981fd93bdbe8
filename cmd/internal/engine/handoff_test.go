package engine

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/store/storetest"
)

// git runs git in dir for a test, with an identity of its own.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=Test", "-c", "user.email=test@example.com",
		"-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func putFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// claudeLines writes a Claude Code transcript of one session that starts
// in cwd and then works from a sub-folder, editing three files.
func claudeLines(session, cwd, repo string, at time.Time) string {
	ts := func(i int) string {
		return at.Add(time.Duration(i) * time.Second).UTC().Format("2006-01-02T15:04:05.000Z")
	}
	line := func(i int, dir, typ, msg string) string {
		return fmt.Sprintf(`{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":%q,"sessionId":%q,"version":"2.1.39","gitBranch":"main","type":%q,"message":%s,"uuid":"u%d","timestamp":%q}`,
			dir, session, typ, msg, i, ts(i))
	}
	edit := func(id, p string) string {
		return fmt.Sprintf(`{"role":"assistant","model":"claude-opus-4-6","id":"m%s","content":[{"type":"tool_use","id":%q,"name":"Edit","input":{"file_path":%q,"old_string":"x","new_string":"y"}}]}`, id, id, p)
	}
	write := func(id, p string) string {
		return fmt.Sprintf(`{"role":"assistant","model":"claude-opus-4-6","id":"m%s","content":[{"type":"tool_use","id":%q,"name":"Write","input":{"file_path":%q,"content":"package c"}}]}`, id, id, p)
	}
	result := func(id, text string) string {
		return fmt.Sprintf(`{"role":"user","content":[{"tool_use_id":%q,"type":"tool_result","content":%q}]}`, id, text)
	}
	sub := filepath.Join(repo, "sub")
	return strings.Join([]string{
		line(1, cwd, "user", `{"role":"user","content":"Tidy the parser package"}`),
		line(2, sub, "assistant", edit("t1", filepath.Join(repo, "a.go"))),
		line(3, sub, "user", result("t1", "The file has been updated successfully.")),
		line(4, sub, "assistant", edit("t2", filepath.Join(repo, "b.go"))),
		line(5, sub, "user", result("t2", "The file has been updated successfully.")),
		line(6, sub, "assistant", write("t3", filepath.Join(repo, "c.go"))),
		line(7, sub, "user", result("t3", "File created successfully at: "+filepath.Join(repo, "c.go"))),
	}, "\n") + "\n"
}

// TestHandoffProjectAndLiveFiles: the project is the repository root of
// the session's first folder (not a sub-folder it moved to), and when the
// checkout is on this machine the files' states come from git: a file git
// shows changed is uncommitted, one committed since the session started
// is committed, a new one is new.
func TestHandoffProjectAndLiveFiles(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := t.TempDir()
	git(t, repo, "init", "-q")
	putFile(t, filepath.Join(repo, "a.go"), "package a\n")
	putFile(t, filepath.Join(repo, "b.go"), "package b\n")
	putFile(t, filepath.Join(repo, "sub", "keep.txt"), "x\n")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "start")

	start := time.Now().Add(-10 * time.Minute)
	session := "3f0c7a52-1111-4c2d-9e0f-aa11bb22cc33"
	tr := filepath.Join(t.TempDir(), session+".jsonl")
	// The session starts in a sub-folder of the checkout.
	putFile(t, tr, claudeLines(session, filepath.Join(repo, "sub"), repo, start))

	// On disk: a.go changed and not committed, b.go changed and committed,
	// c.go new and untracked.
	putFile(t, filepath.Join(repo, "a.go"), "package a // tidied\n")
	putFile(t, filepath.Join(repo, "b.go"), "package b // tidied\n")
	git(t, repo, "commit", "-q", "-m", "tidy b", "b.go")
	putFile(t, filepath.Join(repo, "c.go"), "package c\n")

	e, _ := openEngine(t)
	ctx := context.Background()
	if _, err := e.Ingest(ctx, []string{tr}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	h, err := e.Compact(ctx, session, HandoffRequest{Trigger: "manual", Budget: handoff.DefaultBudget, Source: "cli",
		Out: filepath.Join(t.TempDir(), "h.md")})
	if err != nil {
		t.Fatal(err)
	}
	if h.Project != repo {
		t.Errorf("project %q, want the checkout's root %q", h.Project, repo)
	}
	want := map[string]handoff.FileChange{
		filepath.Join(repo, "a.go"): {Status: handoff.FileModified, Git: handoff.GitUncommitted},
		filepath.Join(repo, "b.go"): {Status: handoff.FileModified, Git: handoff.GitCommitted},
		filepath.Join(repo, "c.go"): {Status: handoff.FileAdded, Git: handoff.GitUncommitted},
	}
	if len(h.Files) != len(want) {
		t.Fatalf("files %+v", h.Files)
	}
	for _, f := range h.Files {
		w := want[f.Path]
		if f.Status != w.Status || f.Git != w.Git {
			t.Errorf("%s: %s/%s, want %s/%s", f.Path, f.Status, f.Git, w.Status, w.Git)
		}
	}
	if !strings.Contains(h.Markdown, "- a.go (uncommitted)\n- b.go\n- c.go (new, uncommitted)\n") {
		t.Errorf("markdown:\n%s", h.Markdown)
	}
}

// TestHandoffsOfOneSecondKeepTheirFiles: handoffs of one session written
// in the same second (named by the second) each keep a file of their own,
// the one their row names, whether stored at once, in the project, or
// left pending by a PreCompact hook; a file already there is never
// written over.
func TestHandoffsOfOneSecondKeepTheirFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	project := filepath.Join(dir, "payments")
	putFile(t, filepath.Join(project, "README"), "x\n")
	tr := filepath.Join(dir, "t.jsonl")
	b, err := os.ReadFile(filepath.Join(sampleDir(t), "claude", "-home-dev-src-payments", "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	putFile(t, tr, strings.ReplaceAll(string(b), "/home/dev/src/payments", project))
	s, err := store.Open(ctx, storetest.MigratedFile(t, filepath.Join(dir, "ledger.db")))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	e := newEngine(Config{DB: s.Path(), Mode: Write, Now: func() time.Time { return at }}, func(context.Context) (*store.Store, error) { return s, nil })
	if _, err := e.Ingest(ctx, []string{tr}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	const session = "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57"
	// A file ledger did not write, where the first handoff would go.
	squatter := defaultHandoffPath(s.Path(), project, session, at)
	putFile(t, squatter, "the user's own notes\n")

	files := map[string]string{} // path: the task its handoff says
	for i, inProject := range []bool{false, false, true, true} {
		task := fmt.Sprintf("task number %d", i)
		h, err := e.WriteHandoff(ctx, session, HandoffRequest{Task: task, Trigger: "manual", Budget: handoff.DefaultBudget, Source: "cli", InProject: inProject})
		if err != nil {
			t.Fatal(err)
		}
		if _, dup := files[h.Path]; dup || h.Path == squatter {
			t.Errorf("handoff %d went to %s, a file already there", h.ID, h.Path)
		}
		files[h.Path] = task
	}
	// Two drafts a locked ledger leaves pending, of the same second.
	for i := range 2 {
		d, err := e.draftHandoff(ctx, s, store.Session{ID: session, Project: project}, nil, HandoffRequest{Task: fmt.Sprintf("pending %d", i), Budget: handoff.DefaultBudget})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := deferHandoff(s, &d); err != nil {
			t.Fatal(err)
		}
		drafts := pendingDrafts(s.Path(), session)
		if len(drafts) != i+1 {
			t.Fatalf("%d drafts pending, want %d", len(drafts), i+1)
		}
		p := drafts[i].Path
		if _, dup := files[p]; dup || p == squatter {
			t.Errorf("pending handoff %d went to %s, a file already there", i, p)
		}
		files[p] = fmt.Sprintf("pending %d", i)
	}
	if got, _ := os.ReadFile(squatter); string(got) != "the user's own notes\n" {
		t.Errorf("%s was written over: %q", squatter, got)
	}
	rows, err := s.Handoffs(ctx, session, 0)
	if err != nil || len(rows) != 4 {
		t.Fatalf("%d handoffs, %v", len(rows), err)
	}
	for _, r := range rows {
		if files[r.Path] == "" {
			t.Errorf("handoff %d names %s, not the file it wrote", r.ID, r.Path)
		}
	}
	for p, task := range files {
		if got, err := os.ReadFile(p); err != nil || !strings.Contains(string(got), task) {
			t.Errorf("%s: %v, does not hold %q:\n%.300s", p, err, task, got)
		}
	}
}
