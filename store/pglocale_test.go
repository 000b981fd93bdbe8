package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentledger/ledger/store/pgtest"
)

// TestSearchWordsWithNonASCIILetters: a word with letters outside ASCII is
// one word to every backend, found by itself whatever its case, as
// SQLite's unicode61 finds it; on PostgreSQL that holds on a database in
// the C locale too (initdb's when no locale is set), where [:alnum:] knows
// only ASCII and split "wörld" into w and rld before migration 00009.
func TestSearchWordsWithNonASCIILetters(t *testing.T) {
	t.Parallel()
	texts := []string{"Héllo Wörld from ÉMILE", "a naïve café au lait", "die Straße entlang",
		"“quoted” — and dashed", "日本語 テキスト"}
	queries := map[string]int{"wörld": 0, "émile": 0, "Émile": 0, "café": 1, "naïve": 1, "straße": 2,
		"quoted": 3, "dashed": 3, "日本語": 4}
	openC := func(t testing.TB, opts ...Option) *Store {
		s, err := Open(context.Background(), pgtest.URLInCLocale(t), WithLocalPath(filepath.Join(t.TempDir(), "ledger.db")))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		var ctype string
		if err := s.db.Get(&ctype, `SELECT datctype FROM pg_database WHERE datname = current_database()`); err != nil || ctype != "C" {
			t.Fatalf("the database's LC_CTYPE is %q (%v), want C", ctype, err)
		}
		return s
	}
	for _, b := range append(backends, backend{"postgres in the C locale", openC}) {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := b.open(t)
			i, start := 0, time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
			writeWords(t, ctx, s, "s1", "m", start, len(texts), 1, func() string { i++; return texts[i-1] })
			for q, want := range queries {
				res, err := s.Search(ctx, SearchOptions{Query: ParseQuery(q), Limit: 5})
				if err != nil || len(res.Hits) != 1 || !res.Hits[0].At.Equal(start.Add(time.Duration(want)*time.Second)) {
					t.Errorf("search %q = %+v (%v), want message %d: %q", q, res.Hits, err, want, texts[want])
				}
			}
			if b.name != "postgres in the C locale" {
				return
			}
			// Down, the columns are 00001's again (the word split); up, whole.
			hits := func() int {
				res, err := s.Search(ctx, SearchOptions{Query: ParseQuery("wörld"), Limit: 5})
				if err != nil {
					t.Fatal(err)
				}
				return len(res.Hits)
			}
			if err := s.MigrateDown(ctx, 8); err != nil {
				t.Fatal(err)
			}
			if n := hits(); n != 0 {
				t.Errorf("at schema 8, wörld is found %d times, want none (00001's split)", n)
			}
			if err := s.MigrateUp(ctx); err != nil {
				t.Fatal(err)
			}
			if n := hits(); n != 1 {
				t.Errorf("up again, wörld is found %d times, want 1", n)
			}
		})
	}
}
