package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/handoff"
)

// fillConversation writes session s1: six main messages (two API
// responses with usage), a compaction whose boundary follows m3, the
// summary after it, and one subagent message, added last but of the time
// of m2 (so numbered after it: a1 is seq 2, m3 seq 3); s2 has one message.
func fillConversation(t *testing.T, s *Store) time.Time {
	t.Helper()
	ctx := context.Background()
	w, err := s.NewWriter(ctx, "claude")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	msg := func(uuid, parent string, role compact.Role, i int) compact.Message {
		return compact.Message{UUID: uuid, ParentUUID: parent, SessionID: "s1", Role: role, Time: at.Add(time.Duration(i) * time.Minute),
			Blocks: []compact.Block{{Kind: compact.BlockText, Text: "text of " + uuid}}}
	}
	m1 := msg("m1", "", compact.RoleUser, 1)
	m2 := msg("m2", "m1", compact.RoleAssistant, 2)
	m2.Usage = &compact.Usage{InputTokens: 10, CacheReadInputTokens: 1000, OutputTokens: 5}
	m3 := msg("m3", "m2", compact.RoleAssistant, 3)
	m3.Usage = &compact.Usage{InputTokens: 20, CacheCreationInputTokens: 3000, OutputTokens: 5}
	sum := msg("m4", "b1", compact.RoleUser, 5)
	sum.CompactSummary = true
	m5 := msg("m5", "m4", compact.RoleAssistant, 6)
	m5.Usage = &compact.Usage{InputTokens: 500, OutputTokens: 5}
	side := msg("a1", "", compact.RoleAssistant, 2)
	side.Sidechain = true
	side.Usage = &compact.Usage{InputTokens: 99999, OutputTokens: 1}
	for _, m := range []compact.Message{m1, m2, m3} {
		if _, err := w.AddMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	b := compact.NewBoundary("s1", "b1", "auto", at.Add(4*time.Minute), 3020, 0)
	b.LogicalParentUUID = "m3"
	if _, err := w.AddBoundary(ctx, b); err != nil {
		t.Fatal(err)
	}
	for _, m := range []compact.Message{sum, m5, side} {
		if _, err := w.AddMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	other := msg("x1", "", compact.RoleUser, 9)
	other.SessionID = "s2"
	if _, err := w.AddMessage(ctx, other); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx, nil); err != nil {
		t.Fatal(err)
	}
	return at
}

func TestConversationReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTemp(t)
	at := fillConversation(t, s)

	cs, err := s.Compactions(ctx, CompactionFilter{SessionID: "s1"})
	if err != nil || len(cs) != 1 {
		t.Fatalf("compactions: %v %v", cs, err)
	}
	c := cs[0]
	if c.BoundaryUUID != "b1" || c.LogicalParentUUID != "m3" || c.Summary != "text of m4" {
		t.Errorf("compaction: boundary %q, parent %q, summary %q", c.BoundaryUUID, c.LogicalParentUUID, c.Summary)
	}
	if got, err := s.CompactionByID(ctx, c.ID); err != nil || got.ID != c.ID || got.Summary != c.Summary {
		t.Errorf("CompactionByID = %+v, %v", got, err)
	}
	if _, err := s.CompactionByID(ctx, 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("CompactionByID(999) = %v, want ErrNotFound", err)
	}

	// The cut: the logical parent; without it, before the summary; without
	// a boundary either, by time.
	for _, tc := range []struct {
		name   string
		mutate func(*Compaction)
		want   int64
	}{
		{"logical parent", func(*Compaction) {}, 3},
		{"parent not in the ledger", func(c *Compaction) { c.LogicalParentUUID = "gone" }, 3},
		{"no boundary", func(c *Compaction) {
			c.LogicalParentUUID = ""
			c.BoundaryUUID = ""
			c.At = at.Add(2 * time.Minute)
		}, 1},
	} {
		cc := c
		tc.mutate(&cc)
		if got, ok, err := s.CutSeq(ctx, cc); err != nil || !ok || got != tc.want {
			t.Errorf("CutSeq, %s = %d, %v, %v; want %d", tc.name, got, ok, err, tc.want)
		}
	}
	early := c
	early.LogicalParentUUID, early.BoundaryUUID, early.At = "", "", at
	if _, ok, err := s.CutSeq(ctx, early); ok || err != nil {
		t.Errorf("CutSeq before every message: ok %v, %v; want none", ok, err)
	}

	msgs, err := s.MessagesThrough(ctx, "s1", 3, at.Add(3*time.Minute))
	if err != nil || len(msgs) != 4 || msgs[2].UUID != "a1" || msgs[3].UUID != "m3" {
		t.Errorf("MessagesThrough = %d messages, %v; want m1-m3 and the subagent's", len(msgs), err)
	}
	page, seqs, err := s.MessageRange(ctx, "s1", 1, 3)
	if err != nil || len(page) != 2 || page[0].UUID != "m2" || seqs[1] != 2 {
		t.Errorf("MessageRange(1, 3) = %v %v, %v", page, seqs, err)
	}
	if when, err := s.MessageAt(ctx, "s1", 3); err != nil || !when.Equal(at.Add(3*time.Minute)) {
		t.Errorf("MessageAt = %v, %v", when, err)
	}
	series, err := s.ContextSeries(ctx, "s1")
	if err != nil || len(series) != 3 || series[0].Tokens != 1010 || series[1].Tokens != 3020 || series[2].Seq != 5 {
		t.Errorf("ContextSeries = %+v, %v; want the main conversation's three responses", series, err)
	}
	peaks, err := s.PeakContexts(ctx, []string{"s1", "s2"})
	if err != nil || len(peaks) != 1 || peaks["s1"] != 3020 {
		t.Errorf("PeakContexts = %v, %v; want s1 3020 (the subagent's left out), s2 absent", peaks, err)
	}
	var id int64
	if err := s.db.Get(&id, `SELECT id FROM messages WHERE uuid = 'm5'`); err != nil {
		t.Fatal(err)
	}
	if p, err := s.MessagePlace(ctx, id); err != nil || p.SessionID != "s1" || p.Seq != 5 {
		t.Errorf("MessagePlace = %+v, %v", p, err)
	}
	if _, err := s.MessagePlace(ctx, 12345); !errors.Is(err, ErrNotFound) {
		t.Errorf("MessagePlace(12345) = %v, want ErrNotFound", err)
	}
}

func TestSessionFilters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTemp(t)
	at := fillConversation(t, s)
	for _, tc := range []struct {
		f    SessionFilter
		want []string
	}{
		{SessionFilter{}, []string{"s2", "s1"}},
		{SessionFilter{Source: "claude"}, []string{"s2", "s1"}},
		{SessionFilter{Source: "codex"}, nil},
		{SessionFilter{Since: at.Add(8 * time.Minute)}, []string{"s2"}},
		{SessionFilter{Until: at.Add(8 * time.Minute)}, []string{"s1"}},
		{SessionFilter{Limit: 1, Offset: 1}, []string{"s1"}},
		{SessionFilter{Offset: 1}, []string{"s1"}},
	} {
		list, err := s.Sessions(ctx, tc.f)
		var got []string
		for _, x := range list {
			got = append(got, x.ID)
		}
		if err != nil || len(got) != len(tc.want) || len(got) > 0 && got[0] != tc.want[0] {
			t.Errorf("Sessions(%+v) = %v, %v; want %v", tc.f, got, err, tc.want)
		}
	}
	if _, _, err := s.AddHandoff(ctx, NewHandoff{Doc: handoffDoc("s1", at)}); err != nil {
		t.Fatal(err)
	}
	later := handoffDoc("s1", at.Add(time.Hour))
	later.Task = "the later one"
	if _, _, err := s.AddHandoff(ctx, NewHandoff{Doc: later}); err != nil {
		t.Fatal(err)
	}
	hs, err := s.LatestHandoffs(ctx, []string{"s1", "s2"})
	if err != nil || len(hs) != 1 || hs["s1"].Task != "the later one" {
		t.Errorf("LatestHandoffs = %+v, %v", hs, err)
	}
}

// TestOpenReadOnly: the read-only store (ReadOnly) reads, refuses every
// write, and never creates a database.
func TestOpenReadOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	rw, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	fillConversation(t, rw)
	rw.Close()
	ro, err := Open(ctx, path, ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if list, err := ro.Sessions(ctx, SessionFilter{}); err != nil || len(list) != 2 {
		t.Errorf("read: %d sessions, %v", len(list), err)
	}
	if _, err := ro.AddNote(ctx, Note{SessionID: "s1", Kind: "decision", Text: "x"}); err == nil {
		t.Error("a note was written through the read-only store")
	}
	missing := filepath.Join(t.TempDir(), "none.db")
	if _, err := Open(ctx, missing, ReadOnly()); err == nil {
		t.Error("a read-only Open of a missing file succeeded")
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("a read-only Open created %s", missing)
	}
}

func handoffDoc(session string, at time.Time) handoff.Doc {
	return handoff.Doc{Session: session, CreatedAt: at, Trigger: "manual", Task: "a task", Markdown: "# Handoff", Tokens: 3}
}
