package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentledger/ledger/cmd/internal/engine"
)

// gitInit makes dir a git checkout, or skips the test without git.
func gitInit(t *testing.T, dir string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
}

// gitStatus is `git status --porcelain --untracked-files=all` in dir.
func gitStatus(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=all").CombinedOutput()
	if err != nil {
		t.Fatalf("git status: %v %s", err, out)
	}
	return string(out)
}

// A handoff goes to the database's folder by default: the project's
// working tree stays clean. Asked for in the project (--in-project, --out),
// the file is excluded from git once, and ledger says so once.
func TestHandoffFilesStayOutOfTheWorkingTree(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	project := filepath.Join(home, "src", "payments")
	os.MkdirAll(project, 0o755)
	gitInit(t, project)
	const id = "cccccccc-1111-4222-8333-444444444444"
	db := filepath.Join(home, "data", "ledger.db")
	ingest(t, home, db, sampleInProject(t, home, project, id))

	r := runCmd(t, home, "", "--db", db, "compact", id)
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(home, "data", "handoffs", engine.ProjectDirName(project), id, "*.md"))
	if len(files) != 1 || !strings.Contains(r.stderr, files[0]) {
		t.Fatalf("default handoff files %v; stderr %s", files, r.stderr)
	}
	if s := gitStatus(t, project); s != "" {
		t.Fatalf("git status after a default compact: %q", s)
	}
	if strings.Contains(r.stderr, "exclude") {
		t.Errorf("a default compact touched .git/info/exclude: %s", r.stderr)
	}

	// --in-project: the file is in the project, git does not see it, and
	// ledger said it added /.ledger/ to the exclude file.
	r = runCmd(t, home, "", "--db", db, "compact", id, "--in-project")
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	inProject, _ := filepath.Glob(filepath.Join(project, ".ledger", "handoffs", id, "*.md"))
	if len(inProject) != 1 {
		t.Fatalf("in-project handoff files %v", inProject)
	}
	exclude := filepath.Join(project, ".git", "info", "exclude")
	if !strings.Contains(r.stderr, "added /.ledger/ to "+exclude) {
		t.Errorf("compact --in-project did not say it excluded the folder: %s", r.stderr)
	}
	if s := gitStatus(t, project); s != "" {
		t.Fatalf("git status after compact --in-project: %q", s)
	}
	// Once: a second run adds nothing and says nothing.
	r = runCmd(t, home, "", "--db", db, "compact", id, "--in-project", "--out", filepath.Join(project, ".ledger", "again.md"))
	if r.code != 0 || strings.Contains(r.stderr, "exclude") {
		t.Fatalf("second in-project compact: exit %d, %s", r.code, r.stderr)
	}
	b, _ := os.ReadFile(exclude)
	if n := strings.Count(string(b), "/.ledger/\n"); n != 1 {
		t.Errorf("exclude has /.ledger/ %d times:\n%s", n, b)
	}

	// --out a file at the checkout's top: that file is excluded.
	r = runCmd(t, home, "", "--db", db, "compact", id, "--out", filepath.Join(project, "HANDOFF.md"))
	if r.code != 0 || !strings.Contains(r.stderr, "added /HANDOFF.md to") {
		t.Fatalf("compact --out HANDOFF.md: exit %d, %s", r.code, r.stderr)
	}
	if s := gitStatus(t, project); s != "" {
		t.Fatalf("git status after compact --out: %q", s)
	}
	// --out outside any checkout: nothing to exclude.
	r = runCmd(t, home, "", "--db", db, "compact", id, "--out", filepath.Join(home, "h.md"))
	if r.code != 0 || strings.Contains(r.stderr, "exclude") {
		t.Fatalf("compact --out outside a checkout: exit %d, %s", r.code, r.stderr)
	}
}
