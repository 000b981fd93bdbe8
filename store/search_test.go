package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentledger/ledger/handoff"
)

// searchFixture is genLedger's 3,000 generated messages, with handoffs and
// notes, so that every index has rows: a copy of a ledger written once per
// test process (writing it cost each test that reads it 6 CPU-seconds
// under -race).
func searchFixture(t *testing.T) (*Store, string) {
	t.Helper()
	db, rare := searchTemplate(t)
	path := filepath.Join(t.TempDir(), "ledger.db")
	if err := os.WriteFile(path, db, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, rare
}

// searchTemplateOf holds the search fixture's file once made.
var searchTemplateOf struct {
	sync.Mutex
	db   []byte
	rare string
}

// searchTemplate is the search fixture's file, written by the first test
// that asks (the others wait for it; if it fails, the next tries again).
func searchTemplate(t *testing.T) ([]byte, string) {
	t.Helper()
	tpl := &searchTemplateOf
	tpl.Lock()
	defer tpl.Unlock()
	if tpl.db != nil {
		return tpl.db, tpl.rare
	}
	ctx := context.Background()
	s, rare := genLedger(t, 3)
	var sessions []string
	if err := s.db.Select(&sessions, `SELECT id FROM sessions ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for i, id := range sessions {
		d := handoff.Doc{Session: id, CreatedAt: at.Add(time.Duration(i) * time.Hour), Trigger: "manual",
			Task: "Fix the flaky timeout in pkg/auth/session_store.go", NextSteps: []string{"rerun the deadline test", rare}}
		d = d.Rendered(0, nil)
		if _, _, err := s.AddHandoff(ctx, NewHandoff{Doc: d}); err != nil {
			t.Fatal(err)
		}
		for _, text := range []string{"decision: keep the timeout at 5s", "flaky goroutine deadline in cache_test.go"} {
			if _, err := s.AddNote(ctx, Note{SessionID: id, Kind: handoff.NoteDecision, Text: text, CreatedAt: at}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Closing checkpoints the WAL into the file: the file alone is the
	// ledger.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	tpl.db, tpl.rare = db, rare
	return db, rare
}

// matches is what the ranking before issue 15 returned for a query with
// a limit as large as its window, kind by kind: every row of the index
// the MATCH finds, the newest 1,000 (its window), compaction summary
// messages left out (they are found as their compactions).
func matches(t *testing.T, s *Store, ix searchIndex, match string) []int64 {
	t.Helper()
	var ids []int64
	if err := s.db.Select(&ids, `SELECT t.id FROM `+ix.fts+` JOIN `+ix.table+` t ON t.id = `+ix.fts+`.rowid
		WHERE `+ix.fts+` MATCH ?`+ix.where+` ORDER BY t.id DESC LIMIT 1000`, match); err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	return ids
}

// TestSearchFindsWhatItFound checks that ranking without bm25 finds the
// same hits as before (the order may differ): for each query and each
// kind, the set of hits at a limit as large as the old window is the set
// of rows the MATCH finds, and the any-word fallback happens when it did.
func TestSearchFindsWhatItFound(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes 3,000 generated messages")
	}
	ctx := context.Background()
	s, rare := searchFixture(t)
	for _, q := range []string{rare, "flaky", "goroutine deadline", `"nil pointer"`, "parseConfig", "lib/billing/invoice.ts",
		"ReserveStock OR InvoiceTotal", "summary", "continued", "timeout", "the", "pkg/auth/session_store.go", "cache_test.go -race",
		"flak*", "zyxwvut flaky", "zyxwvut", "timeout deadline OR parseConfig", "decision", `"rerun the deadline"`} {
		query := ParseQuery(q)
		for _, ix := range searchIndexes {
			t.Run(fmt.Sprintf("%s/%s", q, ix.kind), func(t *testing.T) {
				res, err := s.Search(ctx, SearchOptions{Query: query, Limit: 1000, Kind: ix.kind})
				if err != nil {
					t.Fatal(err)
				}
				var got []int64
				for _, h := range res.Hits {
					got = append(got, h.ID)
					if h.Kind != ix.kind {
						t.Errorf("hit of kind %s", h.Kind)
					}
				}
				slices.Sort(got)
				want := matches(t, s, ix, query.MatchAll())
				any := false
				if len(want) == 0 && query.Words() > 1 {
					want, any = matches(t, s, ix, query.MatchAny()), true
				}
				if !slices.Equal(got, want) {
					t.Errorf("%d hits %v, want the %d matches %v", len(got), shortIDs(got), len(want), shortIDs(want))
				}
				if res.Any != (any && len(want) > 0) {
					t.Errorf("Any = %v, want %v", res.Any, any && len(want) > 0)
				}
			})
		}
	}
}

func shortIDs(ids []int64) []int64 {
	if len(ids) > 12 {
		return ids[:12]
	}
	return ids
}

// TestSearchRanking checks the order: every word must match, newest first;
// some terms may be missing, the hits that hold more (and rarer) terms
// first; and that a limit keeps the best.
func TestSearchRanking(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes 3,000 generated messages")
	}
	ctx := context.Background()
	s, _ := searchFixture(t)
	newestFirst := func(hits []Hit) bool {
		return slices.IsSortedFunc(hits, func(a, b Hit) int { return b.At.Compare(a.At) })
	}
	for _, q := range []string{"timeout", "goroutine deadline", "pkg/auth/session_store.go"} {
		res, err := s.Search(ctx, SearchOptions{Query: ParseQuery(q), Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != 20 || !newestFirst(res.Hits) {
			t.Errorf("%q: %d hits, newest first %v", q, len(res.Hits), newestFirst(res.Hits))
		}
		// The newest matches of the messages index, whatever their number.
		all := matches(t, s, searchIndexes[0], ParseQuery(q).MatchAll())
		for _, h := range res.Hits {
			if h.Kind == KindMessage && h.ID < all[len(all)-40] {
				t.Errorf("%q: hit %d is not among the newest matches", q, h.ID)
			}
		}
	}
	// Optional terms: holding both words beats holding one.
	res, err := s.Search(ctx, SearchOptions{Query: ParseQuery("parseConfig OR goroutine deadline"), Limit: 50, Kind: KindMessage})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSortedFunc(res.Hits, func(a, b Hit) int { return cmpFloat(b.Score, a.Score) }) {
		t.Error("scored hits not best first")
	}
	both := func(h Hit) bool {
		var n int
		s.db.Get(&n, `SELECT count(*) FROM messages_fts WHERE messages_fts MATCH '"goroutine" AND "deadline"' AND rowid = ?`, h.ID)
		return n == 1
	}
	seenOne := false
	for _, h := range res.Hits {
		var p int
		s.db.Get(&p, `SELECT count(*) FROM messages_fts WHERE messages_fts MATCH '"parseconfig"' AND rowid = ?`, h.ID)
		switch {
		case p == 1 && both(h):
			if seenOne {
				t.Errorf("hit %d holds every term but comes after one that holds fewer", h.ID)
			}
		default:
			seenOne = true
		}
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestSearchNewestAtAnyLimit checks that a query whose words must all
// match gives its newest matches at any limit: a query with
// a digit goes oldest first when it has few matches (newestOfFew), the
// others newest first; both must agree with the MATCH.
func TestSearchNewestAtAnyLimit(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes 3,000 generated messages")
	}
	ctx := context.Background()
	s, rare := searchFixture(t)
	var sessions []string
	if err := s.db.Select(&sessions, `SELECT id FROM sessions ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for i := range 30 {
		text := fmt.Sprintf("build 7 failed at step %d", i)
		if i%10 == 0 {
			text = "build 7 passed"
		}
		if _, err := s.AddNote(ctx, Note{SessionID: sessions[i%len(sessions)], Kind: handoff.NoteDecision, Text: text, CreatedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{rare, "build 7", "build 7 passed", `"7 failed"`, "flaky timeout", "pkg/auth/session_store.go"} {
		query := ParseQuery(q)
		for _, ix := range searchIndexes {
			for _, limit := range []int{1, 3, 5, 20} {
				res, err := s.Search(ctx, SearchOptions{Query: query, Limit: limit, Kind: ix.kind})
				if err != nil {
					t.Fatal(err)
				}
				if res.Any {
					continue // the any-word fallback ranks otherwise
				}
				var got []int64
				for _, h := range res.Hits {
					got = append(got, h.ID)
				}
				// The newest by id; bestOf then orders them by time.
				want := matches(t, s, ix, query.MatchAll())
				slices.Reverse(want)
				want = want[:min(len(want), limit)]
				slices.Sort(want)
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("%q, %s, limit %d: %v, want the newest matches %v", q, ix.kind, limit, got, want)
				}
			}
		}
	}
}
