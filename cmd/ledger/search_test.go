package main

import (
	"path/filepath"
	"strings"
	"testing"
)

type hit struct {
	Session string  `json:"session"`
	Kind    string  `json:"kind"`
	ID      int64   `json:"id"`
	At      string  `json:"at"`
	Role    string  `json:"role"`
	Snippet string  `json:"snippet"`
	Score   float64 `json:"score"`
}

func search(t *testing.T, home, db string, args ...string) ([]hit, result) {
	t.Helper()
	r := runCmd(t, home, "", append([]string{"--db", db, "search", "--json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("search %v: exit %d: %s", args, r.code, r.stderr)
	}
	var hits []hit
	decodeJSON(t, r.stdout, &hits)
	return hits, r
}

func searchFixture(t *testing.T) (home, db string) {
	t.Helper()
	home = t.TempDir()
	db = filepath.Join(home, "ledger.db")
	ingest(t, home, db, sampleDir(t))
	if r := runCmd(t, home, "", "--db", db, "compact", "7c1d"); r.code != 0 {
		t.Fatalf("compact: %s", r.stderr)
	}
	return home, db
}

func TestSearchHostileQueriesNeverFail(t *testing.T) {
	t.Parallel()
	home, db := searchFixture(t)
	for _, q := range []string{`"unbalanced`, `AND`, `NEAR(`, `*`, `)`, `(`, `OR`, `NOT`, `-`, `"`, `^`, `col:x`, `a AND OR NOT b`,
		`"a" "b`, `'; DROP TABLE messages; --`, `***`, `NEAR(a b, 3)`, `{a b}`, `-"x"`} {
		t.Run(q, func(t *testing.T) {
			r := runCmd(t, home, "", "--db", db, "search", "--json", "--", q)
			if r.code != 0 || strings.Contains(r.stderr, "syntax") {
				t.Fatalf("search %q: exit %d: %s", q, r.code, r.stderr)
			}
			var hits []hit
			decodeJSON(t, r.stdout, &hits)
		})
	}
	// The ledger is untouched by any of it.
	if hits, _ := search(t, home, db, "SessionStore"); len(hits) == 0 {
		t.Error("no hits after the hostile queries")
	}
}

func TestSearchPathsAndIdentifiers(t *testing.T) {
	t.Parallel()
	home, db := searchFixture(t)
	for _, q := range []string{"pkg/auth/session_store.go", "session_store.go", "TestSessionExpiry", "inventory/reserve.py", "RESERVE_SQL"} {
		t.Run(q, func(t *testing.T) {
			hits, _ := search(t, home, db, q)
			if len(hits) == 0 {
				t.Fatalf("no hits for %s", q)
			}
			first := strings.ToLower(strings.FieldsFunc(q, func(r rune) bool { return r == '/' || r == '.' || r == '_' })[0])
			for _, h := range hits {
				// the snippet shows the match, or its start where the
				// snippet window ends
				if !strings.Contains(strings.ToLower(h.Snippet), first) {
					t.Errorf("hit %+v does not show %s", h, q)
				}
				if strings.ContainsAny(h.Snippet, "\x02\x03\x1b") {
					t.Errorf("JSON snippet carries highlight marks: %q", h.Snippet)
				}
			}
		})
	}
	// A path does not match its parts scattered elsewhere.
	if hits, _ := search(t, home, db, `"auth session store"`); len(hits) != 0 {
		for _, h := range hits {
			if !strings.Contains(h.Snippet, "auth") {
				t.Errorf("phrase matched unrelated text: %q", h.Snippet)
			}
		}
	}
}

func TestSearchLanguageAndFilters(t *testing.T) {
	t.Parallel()
	home, db := searchFixture(t)
	const claude, codex = "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57", "0199f3a2-7d4e-7c10-b2a9-5e8f1d3c6a20"
	all := func(hits []hit, ok func(hit) bool) bool {
		for _, h := range hits {
			if !ok(h) {
				return false
			}
		}
		return len(hits) > 0
	}
	tests := []struct {
		name string
		args []string
		ok   func(hit) bool
		none bool
	}{
		{"kind handoff", []string{"SessionStore", "--kind", "handoff"}, func(h hit) bool { return h.Kind == "handoff" }, false},
		{"kind compaction", []string{"reservation", "--kind", "compaction"}, func(h hit) bool { return h.Kind == "compaction" && h.Session == codex }, false},
		{"kind message", []string{"clock", "--kind", "message"}, func(h hit) bool { return h.Kind == "message" }, false},
		{"session prefix", []string{"test", "--session", "0199"}, func(h hit) bool { return h.Session == codex }, false},
		{"project", []string{"test", "--project", "/home/dev/src/payments"}, func(h hit) bool { return h.Session == claude }, false},
		{"role user", []string{"integration", "--role", "user"}, func(h hit) bool { return h.Role == "user" && h.Kind == "message" }, false},
		{"role tool", []string{"passed", "--role", "tool"}, func(h hit) bool { return h.Role == "tool" }, false},
		{"since", []string{"test", "--since", "2026-03-02T12:00:00Z", "--kind", "message"}, func(h hit) bool { return h.At >= "2026-03-02T12:00:00Z" }, false},
		{"until", []string{"test", "--until", "2026-03-02T12:00:00Z", "--kind", "message"}, func(h hit) bool { return h.At < "2026-03-02T12:00:00Z" }, false},
		{"exclusion", []string{"reserve -race"}, func(h hit) bool { return !strings.Contains(strings.ToLower(h.Snippet), "race") }, false},
		{"prefix", []string{"reserv*"}, func(h hit) bool { return strings.Contains(strings.ToLower(h.Snippet), "reserv") }, false},
		{"phrase", []string{`"atomic UPDATE"`}, func(h hit) bool { return strings.Contains(h.Snippet, "atomic UPDATE") }, false},
		{"or", []string{"STRIPE_TEST_KEY OR RESERVE_SQL", "--kind", "message"}, func(h hit) bool {
			return strings.Contains(h.Snippet, "STRIPE_TEST_KEY") || strings.Contains(h.Snippet, "RESERVE_SQL")
		}, false},
		{"limit", []string{"test", "--limit", "2"}, func(hit) bool { return true }, false},
		{"nothing", []string{"zyxwvut"}, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hits, _ := search(t, home, db, tc.args...)
			if tc.none {
				if len(hits) != 0 {
					t.Errorf("%d hits, want none", len(hits))
				}
				return
			}
			if !all(hits, tc.ok) {
				t.Errorf("hits do not all satisfy the filter (%d hits): %+v", len(hits), hits)
			}
			if tc.name == "limit" && len(hits) != 2 {
				t.Errorf("%d hits, want 2", len(hits))
			}
			for i := 1; i < len(hits); i++ {
				if hits[i].Score > hits[i-1].Score {
					t.Errorf("hits not best first at %d", i)
				}
			}
		})
	}
	// Words that never meet: fall back to any, and say so on stderr.
	hits, r := search(t, home, db, "STRIPE_TEST_KEY", "RESERVE_SQL")
	if len(hits) == 0 || !strings.Contains(r.stderr, "no hit has every word") {
		t.Errorf("fallback: %d hits, stderr %q", len(hits), r.stderr)
	}
	for _, bad := range [][]string{{"x", "--kind", "tweet"}, {"x", "--role", "robot"}, {"x", "--limit", "0"}, {"x", "--since", "soon"}} {
		if r := runCmd(t, home, "", append([]string{"--db", db, "search"}, bad...)...); r.code != 2 {
			t.Errorf("search %v: exit %d, want 2", bad, r.code)
		}
	}
	if r := runCmd(t, home, "", "--db", db, "search", "x", "--session", "ffff"); r.code != 3 {
		t.Errorf("unknown --session: exit %d, want 3", r.code)
	}
}

// TestSearchQueryStartingWithDash: the documented exclusions work as the
// first word, unquoted by the shell (ledger search -docker, -"a phrase"),
// before or after flags; `--` still ends the flags; a misspelt long flag is
// a usage error that shows the `--` form.
func TestSearchQueryStartingWithDash(t *testing.T) {
	t.Parallel()
	home, db := searchFixture(t)
	excluded := func(word string) func([]hit) bool {
		return func(hits []hit) bool {
			for _, h := range hits {
				if strings.Contains(strings.ToLower(h.Snippet), word) {
					return false
				}
			}
			return true
		}
	}
	tests := []struct {
		name string
		args []string
		ok   func([]hit) bool
	}{
		{"exclusion first", []string{"search", "-race", "reserve", "--json"}, func(h []hit) bool { return len(h) > 0 && excluded("race")(h) }},
		{"exclusion alone", []string{"search", "-docker", "--json"}, excluded("docker")},
		{"phrase exclusion", []string{"search", `-"data race"`, "reserve", "--json"}, func(h []hit) bool { return len(h) > 0 && excluded("data race")(h) }},
		{"flags first", []string{"search", "--json", "--limit", "5", "-race", "reserve"}, func(h []hit) bool { return len(h) > 0 && len(h) <= 5 && excluded("race")(h) }},
		{"flag value after", []string{"search", "-race", "--kind", "message", "reserve", "--json"}, func(h []hit) bool {
			return len(h) > 0 && excluded("race")(h) && h[0].Kind == "message"
		}},
		{"double dash", []string{"search", "--json", "--", "-race", "reserve"}, func(h []hit) bool { return len(h) > 0 && excluded("race")(h) }},
		{"global flag after", []string{"search", "-race", "reserve", "--json", "--db", db}, func(h []hit) bool { return len(h) > 0 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if !strings.Contains(strings.Join(args, " "), "--db") {
				args = append([]string{"--db", db}, args...)
			}
			r := runCmd(t, home, "", args...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			var hits []hit
			decodeJSON(t, r.stdout, &hits)
			if !tc.ok(hits) {
				t.Errorf("%d hits: %+v", len(hits), hits)
			}
		})
	}
	r := runCmd(t, home, "", "--db", db, "search", "--dockr")
	if r.code != 2 || !strings.Contains(r.stderr, "ledger search -- '--dockr'") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("unknown long flag: exit %d, stderr %q; want 2 and the -- form", r.code, r.stderr)
	}
	if r := runCmd(t, home, "", "--db", db, "search", "-h"); r.code != 0 || !strings.Contains(r.stdout, "Usage:") {
		t.Errorf("search -h: exit %d, %.100q", r.code, r.stdout)
	}
}
