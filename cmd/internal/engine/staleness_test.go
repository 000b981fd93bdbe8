package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentledger/ledger/compact"
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

// TestFitResumeWithinCharacters: the context a SessionStart hook injects
// is cut to fit MaxHookContext characters (Claude Code injects no more
// whole), counted as characters, not bytes, by giving the handoff a
// smaller token budget: it keeps its head (whose session it is) and
// loses the least useful lines. Without a cap the budget alone counts.
func TestFitResumeWithinCharacters(t *testing.T) {
	t.Parallel()
	d := handoff.Doc{Session: "s1", Project: "/home/dev/src/app", Task: "Port the résumé exporter to the new façade",
		CreatedAt: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)}
	for i := range 300 {
		d.Decisions = append(d.Decisions, fmt.Sprintf("décision %d: keep the café's naïve coöperation in the exporter façade, as agreed", i))
		d.FilesModified = append(d.FilesModified, fmt.Sprintf("/home/dev/src/app/pkg/exporter/façade_%03d.go", i))
	}
	in := handoff.ResumeInput{Session: "s1", Source: "claude", Project: d.Project, Handoff: d, Extracted: true}
	count := compact.DefaultMemo()
	whole := fitResume(in, 20_000, 0, count)
	if n := utf8.RuneCountInString(whole); n <= MaxHookContext {
		t.Fatalf("the uncapped resume has %d characters: too few to test the cap", n)
	}
	capped := fitResume(in, 20_000, MaxHookContext, count)
	if n := utf8.RuneCountInString(capped); n > MaxHookContext || n < MaxHookContext/2 {
		t.Errorf("the capped resume has %d characters, want at most %d (and not far below)", n, MaxHookContext)
	}
	if len(capped) <= MaxHookContext {
		t.Errorf("the capped resume has %d bytes: the cap was counted in bytes, not characters", len(capped))
	}
	if !strings.Contains(capped, "s1") || !strings.Contains(capped, "résumé exporter") {
		t.Errorf("the capped resume lost its head:\n%s", capped[:min(len(capped), 600)])
	}
}
