package store

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// exhaustive is the search without a window: every match ranked, as FTS5's
// ORDER BY rank does it. The reference for the windowed search.
func exhaustive(t *testing.T, s *Store, match string, limit int) []int64 {
	t.Helper()
	var ids []int64
	if err := s.db.Select(&ids, `SELECT m.id FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid
		WHERE messages_fts MATCH ? AND m.compact_summary = 0 ORDER BY messages_fts.rank, m.at DESC LIMIT ?`, match, limit); err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestSearchWindow checks the ranking window: exact (the same hits in the
// same order as ranking every match) while a query has at most rankWindow
// matches, and the best of the newest rankWindow beyond.
func TestSearchWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 3,000 generated messages")
	}
	ctx := context.Background()
	s, rare := genLedger(t, 3)
	count := func(match string) int {
		var n int
		if err := s.db.Get(&n, `SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?`, match); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, q := range []string{rare, "flaky", "goroutine deadline", `"nil pointer"`, "parseConfig", "lib/billing/invoice.ts",
		"ReserveStock OR InvoiceTotal", "summary", "continued", "timeout", "the", "pkg/auth/session_store.go", "cache_test.go -race"} {
		for _, limit := range []int{1, 5, 20, 100} {
			t.Run(fmt.Sprintf("%s/%d", q, limit), func(t *testing.T) {
				query := ParseQuery(q)
				res, err := s.Search(ctx, SearchOptions{Query: query, Limit: limit, Kind: KindMessage})
				if err != nil {
					t.Fatal(err)
				}
				var got []int64
				for _, h := range res.Hits {
					got = append(got, h.ID)
					if h.Snippet == "" {
						t.Errorf("hit %d has no snippet", h.ID)
					}
				}
				match := query.MatchAll()
				n := count(match)
				t.Logf("%d matches", n)
				if n <= rankWindow {
					if want := exhaustive(t, s, match, limit); !slices.Equal(got, want) {
						t.Errorf("%d matches: got %v, want %v", n, got, want)
					}
					return
				}
				// Beyond the window: every hit is among the newest rankWindow.
				var oldest int64
				if err := s.db.Get(&oldest, `SELECT min(id) FROM (SELECT rowid AS id FROM messages_fts WHERE messages_fts MATCH ?
					ORDER BY rowid DESC LIMIT ?)`, match, rankWindow); err != nil {
					t.Fatal(err)
				}
				if len(got) != limit {
					t.Errorf("%d matches: %d hits, want %d", n, len(got), limit)
				}
				for _, id := range got {
					if id < oldest {
						t.Errorf("%d matches: hit %d is older than the window (from %d)", n, id, oldest)
					}
				}
			})
		}
	}
}
