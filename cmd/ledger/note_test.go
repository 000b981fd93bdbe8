package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentledger/ledger/store/storetest"
)

// TestNote: a note is recorded for a session (by id, or the latest of the
// current project), the next handoff carries it verbatim in its section,
// search finds it, and bad usage is a usage error.
func TestNote(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	ingest(t, home, db, sampleDir(t))

	r := runCmd(t, home, "", "--db", db, "note", sampleSession[:8], "--decision", "Clock injection over time.Now: tests pin the clock", "--json")
	if r.code != 0 {
		t.Fatalf("note: %d %s", r.code, r.stderr)
	}
	var n struct {
		ID      int64  `json:"id"`
		Session string `json:"session"`
		Kind    string `json:"kind"`
		Text    string `json:"text"`
	}
	decodeJSON(t, r.stdout, &n)
	if n.Session != sampleSession || n.Kind != "decision" || n.ID == 0 {
		t.Errorf("note = %+v", n)
	}
	// Without SESSION: the latest session of the project of the folder.
	r = runCmdIn(t, home, "/home/dev/src/payments", "", "--db", db, "note", "--next", "Ask ops about the staging keys")
	if r.code != 0 || !strings.Contains(r.stdout, sampleSession) {
		t.Fatalf("note by project: %d %q %s", r.code, r.stdout, r.stderr)
	}
	r = runCmd(t, home, "", "--db", db, "note", sampleSession, "--blocker", "the CI runner is down")
	if r.code != 0 {
		t.Fatalf("blocker note: %s", r.stderr)
	}

	r = runCmd(t, home, "", "--db", db, "compact", sampleSession, "--json")
	if r.code != 0 {
		t.Fatalf("compact: %s", r.stderr)
	}
	var h struct {
		Decisions []string `json:"decisions"`
		NextSteps []string `json:"next_steps"`
		Blockers  []string `json:"blockers"`
		Notes     []struct {
			Kind string `json:"kind"`
			Text string `json:"text"`
		} `json:"notes"`
		Markdown string `json:"markdown"`
	}
	decodeJSON(t, r.stdout, &h)
	if len(h.Decisions) == 0 || h.Decisions[0] != "Clock injection over time.Now: tests pin the clock" {
		t.Errorf("decisions %q: the note first, verbatim", h.Decisions)
	}
	if len(h.NextSteps) == 0 || h.NextSteps[0] != "Ask ops about the staging keys" {
		t.Errorf("next steps %q: the note first", h.NextSteps)
	}
	if len(h.Blockers) == 0 || h.Blockers[0] != "the CI runner is down" {
		t.Errorf("blockers %q", h.Blockers)
	}
	if len(h.Notes) != 3 || !strings.Contains(h.Markdown, "- Clock injection over time.Now: tests pin the clock\n") {
		t.Errorf("notes %+v; markdown:\n%s", h.Notes, h.Markdown)
	}

	r = runCmd(t, home, "", "--db", db, "search", "staging keys", "--kind", "note", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"kind": "note"`) {
		t.Errorf("search --kind note: %d %s %s", r.code, r.stdout, r.stderr)
	}

	for _, bad := range [][]string{
		{"note", sampleSession},
		{"note", sampleSession, "--decision", "a", "--next", "b"},
	} {
		if r := runCmd(t, home, "", append([]string{"--db", db}, bad...)...); r.code != 2 {
			t.Errorf("%q: exit %d, want 2 (%s)", bad, r.code, r.stderr)
		}
	}
	if r := runCmd(t, home, "", "--db", db, "note", "ffffffff", "--next", "x"); r.code != 3 {
		t.Errorf("unknown session: exit %d, want 3 (%s)", r.code, r.stderr)
	}
	if r := runCmdIn(t, home, t.TempDir(), "", "--db", db, "note", "--next", "x"); r.code != 3 || !strings.Contains(r.stderr, "no session of project") {
		t.Errorf("a folder with no session: exit %d, want 3 (%s)", r.code, r.stderr)
	}
}
