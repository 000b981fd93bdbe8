package engine

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/agentledger/ledger/handoff"
)

// TestStalenessSinceTheHandoff: what resume says moved in the project
// since its handoff: the branch and HEAD of its checkout (read from .git),
// the session's files changed on disk after the handoff's second (not
// within it: created_at has one-second precision), and those no longer on
// disk, unless the session deleted them itself, or none of them is there
// (the project is elsewhere on this machine, not emptied). A project
// the ledger does not know says nothing.
func TestStalenessSinceTheHandoff(t *testing.T) {
	t.Parallel()
	const oldHead, newHead = "4f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39", "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d"
	project := t.TempDir()
	putFile(t, filepath.Join(project, ".git", "HEAD"), "ref: refs/heads/next\n")
	putFile(t, filepath.Join(project, ".git", "refs", "heads", "next"), newHead+"\n")
	at := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	touch := func(rel string, mod time.Time) {
		t.Helper()
		p := filepath.Join(project, rel)
		putFile(t, p, "package x\n")
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	touch("pkg/changed.go", at.Add(time.Minute))
	touch("pkg/same_second.go", at.Add(900*time.Millisecond))
	touch("pkg/before.go", at.Add(-time.Hour))
	d := handoff.Doc{Branch: "main", Head: oldHead, CreatedAt: at,
		FilesModified: []string{filepath.Join(project, "pkg", "changed.go"), "pkg/same_second.go", "pkg/before.go", "pkg/gone.go", "pkg/removed.go"},
		Files:         []handoff.FileChange{{Path: "pkg/removed.go", Status: handoff.FileDeleted}}}
	want := []string{
		"the branch is now next (the handoff was written on main)",
		"HEAD moved from 4f2a9c1d8e to 9e8d7c6b5a",
		"changed on disk since: " + filepath.Join("pkg", "changed.go"),
		"no longer on disk: pkg/gone.go",
	}
	if got := staleness(project, d); !reflect.DeepEqual(got, want) {
		t.Errorf("staleness =\n%q\nwant\n%q", got, want)
	}

	// Nothing moved.
	d.Branch, d.Head, d.FilesModified = "next", newHead, []string{"pkg/before.go", "pkg/same_second.go"}
	if got := staleness(project, d); len(got) != 0 {
		t.Errorf("staleness when nothing moved: %q", got)
	}
	// None of the files is there: the project is elsewhere, not emptied.
	d.FilesModified = []string{"pkg/a.go", "pkg/b.go"}
	if got := staleness(project, d); len(got) != 0 {
		t.Errorf("staleness when no file is there: %q", got)
	}
	if got := staleness("", d); got != nil {
		t.Errorf("staleness of no project: %q", got)
	}
}
