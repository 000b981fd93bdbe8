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
