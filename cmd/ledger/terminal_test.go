package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentledger/ledger/cmd/internal/term"
	"github.com/agentledger/ledger/store/storetest"
)

// TestTerminalProgressAndColour: on a terminal (the App's streams taken
// for one, gh's iostreams.Test shape), ingest shows a progress bar on
// stderr and search highlights its hits in colour, unless NO_COLOR; a
// pipe gets neither, only the text.
func TestTerminalProgressAndColour(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))

	c := newCmd(home, "")
	c.app.StdoutTTY, c.app.StderrTTY = true, true
	r := c.run("--db", db, "ingest", sampleDir(t))
	if r.code != 0 || !strings.Contains(r.stdout, "2 sessions") {
		t.Fatalf("ingest on a terminal: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "\ringest ") || !strings.Contains(r.stderr, "%") {
		t.Errorf("ingest on a terminal: no progress bar on stderr: %q", r.stderr)
	}
	if r := runCmd(t, home, "", "--db", db, "ingest", sampleDir(t)); r.stderr != "" {
		t.Errorf("ingest to a pipe: stderr %q, want nothing", r.stderr)
	}

	for _, tc := range []struct {
		name     string
		tty      bool
		env      []string
		hit, not string
	}{
		{"terminal", true, nil, term.HighlightOn, "["},
		{"terminal, NO_COLOR", true, []string{"NO_COLOR=1"}, "[", term.HighlightOn},
		{"pipe", false, nil, "[", term.HighlightOn},
	} {
		c := newCmd(home, "", tc.env...)
		c.app.StdoutTTY = tc.tty
		r := c.run("--db", db, "search", "expiry")
		if r.code != 0 || !strings.Contains(r.stdout, tc.hit+"expiry") || strings.Contains(r.stdout, tc.not+"expiry") {
			t.Errorf("search on a %s: exit %d, %q; want hits marked %q", tc.name, r.code, r.stdout, tc.hit)
		}
	}
}
