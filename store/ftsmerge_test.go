package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/compact"
)

// TestIngestTransactionWritesOneMessagesSegment: an ingest transaction's
// messages reach the full-text index as one segment, not one per megabyte
// of index data (FTS5's default hashsize), and segments are merged 8 at a
// time (migration 00015). Three transactions of 500 messages (2.5 MB of
// index data each) leave three segments; with FTS5's defaults they left
// nine.
func TestIngestTransactionWritesOneMessagesSegment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTemp(t)
	rnd := rand.New(rand.NewPCG(15, 8))
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	vocabulary := make([]string, 30_000)
	for i := range vocabulary {
		var b strings.Builder
		for range 9 {
			b.WriteByte(byte('a' + rnd.IntN(26)))
		}
		vocabulary[i] = b.String()
	}
	word := func() string { return vocabulary[rnd.IntN(len(vocabulary))] }
	for tx := range 3 {
		writeWords(t, ctx, s, "s1", fmt.Sprint(tx), at.Add(time.Duration(tx*500)*time.Second), 500, 1000, word)
	}
	segs, err := s.FTSSegments(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var cfg []string
	if err := s.db.Select(&cfg, `SELECT k || '=' || v FROM messages_fts_config ORDER BY k`); err != nil {
		t.Fatal(err)
	}
	if got := segs["messages_fts"]; got != 3 {
		t.Errorf("messages_fts holds %d segments after 3 ingest transactions, want 3 (config %v)", got, cfg)
	}
	var data int64
	if err := s.db.Get(&data, `SELECT sum(length(block)) FROM messages_fts_data`); err != nil || data < 6<<20 {
		t.Errorf("index data %d bytes (%v): the test needs more than 2 MB a transaction", data, err)
	}
	res, err := s.Search(ctx, SearchOptions{Query: ParseQuery(vocabulary[0]), Limit: 5})
	if err != nil || len(res.Hits) != 5 {
		t.Errorf("search across the segments: %d hits, %v; want 5", len(res.Hits), err)
	}
}

// writeWords writes n messages of perMessage words each (word's) to
// session, in one writer transaction begun with ctx: their ids start with
// prefix, their times a second apart from start.
func writeWords(t *testing.T, ctx context.Context, s *Store, session, prefix string, start time.Time, n, perMessage int, word func() string) {
	t.Helper()
	w, err := s.NewWriter(ctx, "claude")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Rollback()
	for i := range n {
		words := make([]string, perMessage)
		for j := range words {
			words[j] = word()
		}
		m := compact.Message{UUID: fmt.Sprintf("%s-%d", prefix, i), SessionID: session, Role: compact.RoleUser,
			Time: start.Add(time.Duration(i) * time.Second), Blocks: []compact.Block{{Kind: compact.BlockText, Text: strings.Join(words, " ")}}}
		if _, err := w.AddMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(ctx, nil); err != nil {
		t.Fatal(err)
	}
}

// TestSettleSearchFinishesTheMerge: nine ingest transactions make eight
// segments FTS5 begins to merge and a ninth, and 18 compactions, a
// statement each, three segments FTS5's default usermerge (4) would leave
// as they are; after a write of 10,000 messages SettleSearch finishes the
// messages' merge and merges the compactions' into one (migration 00016),
// and every message is still found. After a smaller write it leaves both
// to the writes to come, and it never merges a level of the messages'
// FTS5 would not.
func TestSettleSearchFinishesTheMerge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTemp(t)
	rnd := rand.New(rand.NewPCG(16, 8))
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	word := func() string {
		var b [7]byte
		for i := range b {
			b[i] = byte('a' + rnd.IntN(26))
		}
		return string(b[:])
	}
	segmentsOf := func(index string) int64 {
		t.Helper()
		segs, err := s.FTSSegments(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return segs[index]
	}
	segments := func() int64 { return segmentsOf("messages_fts") }
	const perTx = 1200
	for tx := range 4 {
		writeWords(t, ctx, s, "s1", fmt.Sprint(tx), at.Add(time.Duration(tx*perTx)*time.Second), perTx, 60, word)
	}
	// Four segments, no merge begun: nothing to settle (FTS5's default
	// usermerge, 4, would merge them).
	if err := s.SettleSearch(ctx, 4*perTx*3); err != nil {
		t.Fatal(err)
	}
	if got := segments(); got != 4 {
		t.Fatalf("%d segments after four transactions and SettleSearch, want 4: it merged a level FTS5 had not begun to", got)
	}
	for tx := 4; tx < 9; tx++ {
		writeWords(t, ctx, s, "s1", fmt.Sprint(tx), at.Add(time.Duration(tx*perTx)*time.Second), perTx, 60, word)
	}
	begun := segments()
	if begun <= 2 {
		t.Fatalf("%d segments after nine transactions: the test needs a merge left begun", begun)
	}
	// Compactions, a statement each, as an ingest and the hooks write
	// them: FTS5 writes the small index a segment each time.
	for i := range 18 {
		if _, err := s.db.Exec(`INSERT INTO compactions (session_id, boundary_uuid, at, trigger, summary, source)
			VALUES ('s1', $1, $2, 'auto', $3, 'transcript')`, fmt.Sprint("b", i), at.Add(time.Duration(i)*time.Minute),
			strings.Repeat(word()+" ", 200)); err != nil {
			t.Fatal(err)
		}
	}
	small := segmentsOf("compactions_fts")
	if small < 2 {
		t.Fatalf("%d segments of compactions after 18 statements: the test needs more", small)
	}
	if err := s.SettleSearch(ctx, settleMessages-1); err != nil {
		t.Fatal(err)
	}
	if got := segments(); got != begun {
		t.Fatalf("a write of %d messages: %d segments after SettleSearch, %d before; want it left to the writes", settleMessages-1, got, begun)
	}
	if got := segmentsOf("compactions_fts"); got != small {
		t.Fatalf("a write of %d messages: %d segments of compactions after SettleSearch, %d before", settleMessages-1, got, small)
	}
	if err := s.SettleSearch(ctx, 9*perTx); err != nil {
		t.Fatal(err)
	}
	if got := segments(); got > 2 {
		t.Errorf("%d segments after SettleSearch (%d before), want the merge's output and the ninth", got, begun)
	}
	if got := segmentsOf("compactions_fts"); got != 1 {
		t.Errorf("%d segments of compactions after SettleSearch (%d before), want one", got, small)
	}
	// The index still holds every message: FTS5's own check, and a word of
	// the first transaction's first message found.
	for _, index := range []string{"messages_fts", "compactions_fts"} {
		if _, err := s.db.Exec(`INSERT INTO ` + index + ` (` + index + `) VALUES ('integrity-check')`); err != nil {
			t.Errorf("integrity-check of %s after the merge: %v", index, err)
		}
	}
	var text string
	if err := s.db.Get(&text, `SELECT text FROM messages WHERE uuid = '0-0'`); err != nil {
		t.Fatal(err)
	}
	res, err := s.Search(ctx, SearchOptions{Query: ParseQuery(strings.Fields(text)[0]), Limit: 5})
	if err != nil || len(res.Hits) == 0 {
		t.Errorf("a word of the first message: %d hits, %v", len(res.Hits), err)
	}
}
