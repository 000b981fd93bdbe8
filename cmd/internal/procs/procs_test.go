package procs

import (
	"strings"
	"testing"
)

// TestOneCore: the commands that run on one processor are found past the
// root's flags and their values; every other command line keeps them all.
func TestOneCore(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args string
		want bool
	}{
		{"search withRetry", true},
		{"--db /tmp/l.db search x", true},
		{"--db=/tmp/l.db resume 7c1d --format hook", true},
		{"--no-redact --cpuprofile cpu.out version", true},
		{"statusline", true},
		{"sessions --limit 5", true},
		{"--db search ingest DIR", false}, // a database named search
		{"ingest DIR", false},
		{"hook", false},
		{"serve", false},
		{"sync --to URL", false},
		{"--verbose search x", false}, // a flag the root does not have
		{"", false},
		{"help search", false},
	} {
		if got := OneCore(strings.Fields(c.args)); got != c.want {
			t.Errorf("OneCore(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}
