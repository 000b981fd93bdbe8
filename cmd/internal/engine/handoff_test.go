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
