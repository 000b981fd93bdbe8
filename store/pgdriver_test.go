package store

import (
	"strings"
	"testing"
	"time"
)

func TestIsURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{
		"postgres://u@h/db": true, "postgresql://h/db": true, "POSTGRES://h/db": true,
		"postgres:": false, "postgres:db": false, "./postgres://x": false, "/tmp/ledger.db": false, "": false,
	} {
		if got := IsURL(in); got != want {
			t.Errorf("IsURL(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestPGDuration(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1000", time.Second, true}, {"0", 0, true}, {"30s", 30 * time.Second, true}, {"2min", 2 * time.Minute, true},
		{"1.5h", 90 * time.Minute, true}, {"250ms", 250 * time.Millisecond, true}, {" 5 s ", 5 * time.Second, true},
		{"soon", 0, false}, {"5 weeks", 0, false}, {"", 0, false},
	} {
		got, ok := pgDuration(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("pgDuration(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	u := withTimeouts("postgres://u@h/db?statement_timeout=0")
	if !strings.Contains(u, "connect_timeout=10") || !strings.Contains(u, "statement_timeout=0") {
		t.Errorf("withTimeouts kept the URL's own and added the default: %s", u)
	}
}
