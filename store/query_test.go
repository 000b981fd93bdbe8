package store

import (
	"context"
	"testing"
)

func TestParseQuery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, all, any string
	}{
		{`flaky test`, `("flaky" AND "test")`, `("flaky" OR "test")`},
		{`"exact phrase"`, `("exact" + "phrase")`, `("exact" + "phrase")`},
		{`sess*`, `("sess"*)`, `("sess"*)`},
		{`auth -oauth`, `(("auth")) NOT ("oauth")`, `(("auth")) NOT ("oauth")`},
		{`a OR b c`, `("a") OR ("b" AND "c")`, `("a") OR ("b" OR "c")`},
		{`pkg/auth/session_store.go`, `("pkg" + "auth" + "session" + "store" + "go")`, `("pkg" + "auth" + "session" + "store" + "go")`},
		{`TestSessionExpiry`, `("testsessionexpiry")`, `("testsessionexpiry")`},
		{`"unbalanced`, `("unbalanced")`, `("unbalanced")`},
		{`AND`, `("and")`, `("and")`},
		{`NEAR(`, `("near")`, `("near")`},
		{`*`, ``, ``},
		{`)`, ``, ``},
		{`-only`, ``, ``},
		{`OR`, ``, ``},
		{`col:val ^x`, `("col" + "val" AND "x")`, `("col" + "val" OR "x")`},
		{`""`, ``, ``},
		{`- x`, `("x")`, `("x")`},
		{`--strict`, `("strict")`, `("strict")`},
		{`go --race -v`, `(("go" AND "race")) NOT ("v")`, `(("go" OR "race")) NOT ("v")`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			q := ParseQuery(tc.in)
			if got := q.MatchAll(); got != tc.all {
				t.Errorf("MatchAll = %s, want %s", got, tc.all)
			}
			if got := q.MatchAny(); got != tc.any {
				t.Errorf("MatchAny = %s, want %s", got, tc.any)
			}
		})
	}
}

// FuzzQuery: no input makes an FTS5 syntax error.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{`flaky test`, `"unbalanced`, `AND`, `NEAR(`, `*`, `)`, `a OR -b`, `"a""b"`, `x* -"y z"*`, "\x00\xff", `ü ß 日本`} {
		f.Add(s)
	}
	s := openTemp(f)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, in string) {
		q := ParseQuery(in)
		for _, m := range []string{q.MatchAll(), q.MatchAny()} {
			if m == "" {
				continue
			}
			var n int
			if err := s.db.GetContext(ctx, &n, `SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?`, m); err != nil {
				t.Fatalf("query %q -> %q: %v", in, m, err)
			}
		}
	})
}
