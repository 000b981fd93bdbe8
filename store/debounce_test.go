package store

import (
	"context"
	"testing"
	"time"

	"github.com/agentledger/ledger/compact"
)

// TestDebounceEndsAtTheCompaction: a PreCompact record keeps a second one
// of the same compaction out (an agent may fire the hook twice at once),
// but once the transcript's compaction has completed it, a PreCompact
// soon after is the next compaction's, and gets its handoff (Qwen Code ran
// an auto compaction and a /compress six seconds apart).
func TestDebounceEndsAtTheCompaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openSQLite(t)
	at := time.Date(2026, 11, 26, 7, 33, 36, 0, time.UTC)
	w, err := s.NewWriter(ctx, "qwen")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddMessage(ctx, compact.Message{UUID: "u1", SessionID: "s1", Role: compact.RoleUser, Time: at,
		Blocks: []compact.Block{{Kind: compact.BlockText, Text: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx, nil); err != nil {
		t.Fatal(err)
	}
	hook := func(at time.Time) (bool, error) {
		_, written, err := s.AddHandoff(ctx, NewHandoff{Doc: handoffDoc("s1", at),
			Record: &CompactionRecord{Source: "hook", Trigger: "auto", At: at, LogicalParent: "u1", Debounce: time.Minute}})
		return written, err
	}
	if w, err := hook(at); !w || err != nil {
		t.Fatalf("first PreCompact: written %v, %v", w, err)
	}
	if w, err := hook(at.Add(time.Second)); w || err != nil {
		t.Fatalf("the same compaction's second PreCompact: written %v, %v; want nothing", w, err)
	}
	// The compaction reaches the transcript and completes the record.
	w, err = s.NewWriter(ctx, "qwen")
	if err != nil {
		t.Fatal(err)
	}
	b := compact.NewBoundary("s1", "b1", "auto", at.Add(2*time.Second), 180000, 700)
	b.LogicalParentUUID = "u1"
	if _, err := w.AddBoundary(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if w, err := hook(at.Add(6 * time.Second)); !w || err != nil {
		t.Errorf("the next compaction's PreCompact, 6 s later: written %v, %v; want its handoff", w, err)
	}
	cs, err := s.Compactions(ctx, CompactionFilter{SessionID: "s1"})
	if err != nil || len(cs) != 2 {
		t.Errorf("%d compaction records, want 2 (%v)", len(cs), err)
	}
}

// TestPendingHandoffJoinsItsCompaction: a PreCompact whose row waited for
// the write lock (a pending handoff) while the transcript's compaction at
// its point was read joins that compaction: one record, with the handoff
// and the transcript's summary. A PreCompact made after that compaction,
// at the same point, is another one's.
func TestPendingHandoffJoinsItsCompaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openSQLite(t)
	at := time.Date(2026, 11, 26, 13, 47, 10, 0, time.UTC)
	w, err := s.NewWriter(ctx, "pi")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddMessage(ctx, compact.Message{UUID: "u1", SessionID: "s1", Role: compact.RoleUser, Time: at,
		Blocks: []compact.Block{{Kind: compact.BlockText, Text: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	b := compact.NewBoundary("s1", "b1", "auto", at.Add(1500*time.Millisecond), 15560, 0)
	b.LogicalParentUUID, b.Summary = "u1", "## Goal\nthe summary"
	if _, err := w.AddBoundary(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx, nil); err != nil {
		t.Fatal(err)
	}
	hook := func(at time.Time) (int64, bool) {
		t.Helper()
		id, written, err := s.AddHandoff(ctx, NewHandoff{Doc: handoffDoc("s1", at),
			Record: &CompactionRecord{Source: "hook", Trigger: "auto", At: at, LogicalParent: "u1", Debounce: time.Minute}})
		if err != nil {
			t.Fatal(err)
		}
		return id, written
	}
	id, written := hook(at)
	if !written {
		t.Fatal("the pending PreCompact wrote no handoff")
	}
	cs, err := s.Compactions(ctx, CompactionFilter{SessionID: "s1"})
	if err != nil || len(cs) != 1 || cs[0].Source != "hook" || cs[0].HandoffID == nil || *cs[0].HandoffID != id ||
		cs[0].Summary != "## Goal\nthe summary" {
		t.Fatalf("compactions %+v (%v), want the transcript's with handoff %d", cs, err, id)
	}
	if again, written := hook(at); written || again != id {
		t.Errorf("the same PreCompact again: handoff %d, written %v; want %d, nothing written", again, written, id)
	}
	if _, written := hook(at.Add(5 * time.Second)); !written {
		t.Error("a PreCompact made after the compaction wrote nothing")
	}
	if cs, err := s.Compactions(ctx, CompactionFilter{SessionID: "s1"}); err != nil || len(cs) != 2 {
		t.Errorf("%d compaction records, want 2 (%v)", len(cs), err)
	}
}
