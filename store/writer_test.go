package store

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentledger/ledger/compact"
)

// TestWriterStopsWithItsContext: a writer's per-record statements run
// under a context that cannot end (rowContext), prepared once per
// transaction; the ingest's context still ends the transaction: what it
// added is rolled back, compactions and all, the held connection is given
// back, and the next writer writes, using its own prepared statements.
func TestWriterStopsWithItsContext(t *testing.T) {
	t.Parallel()
	s := openAt(t, filepath.Join(t.TempDir(), "ledger.db"))
	bg := context.Background()
	held, release, err := s.HoldIngest(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	write := func(ctx context.Context, session string, cancel func()) error {
		w, err := s.NewWriter(ctx, "claude")
		if err != nil {
			return err
		}
		defer w.Rollback()
		for i := range 3 {
			if _, err := w.AddMessage(ctx, compact.Message{UUID: fmt.Sprintf("m%d", i), SessionID: session, Role: compact.RoleUser,
				Blocks: []compact.Block{{Kind: compact.BlockText, Text: "hello"}}}); err != nil {
				return err
			}
			if _, err := w.AddBoundary(ctx, compact.Boundary{SessionID: session, UUID: fmt.Sprintf("b%d", i), Trigger: "auto"}); err != nil {
				return err
			}
		}
		if cancel != nil {
			cancel()
		}
		return w.Commit(ctx, nil)
	}
	// database/sql rolls a stopped transaction back in a goroutine of its
	// own: the next writer begins at once, many times, so that a writer
	// that could begin before that rollback is over would be seen to.
	want := map[string]int{}
	for i := range 30 {
		stopped, after := fmt.Sprintf("stopped%d", i), fmt.Sprintf("after%d", i)
		ctx, cancel := context.WithCancel(held)
		if err := write(ctx, stopped, cancel); err == nil {
			t.Fatal("a writer whose context ended committed")
		}
		if err := write(held, after, nil); err != nil {
			t.Fatalf("writer after a stopped one (%d): %v", i, err)
		}
		want[stopped], want[after] = 0, 3
	}
	if err := write(held, "last", nil); err != nil {
		t.Fatalf("second writer after a stopped one: %v", err)
	}
	want["last"] = 3
	for session, want := range want {
		var msgs, comps int
		if err := s.db.Get(&msgs, `SELECT count(*) FROM messages WHERE session_id = ?`, session); err != nil {
			t.Fatal(err)
		}
		if err := s.db.Get(&comps, `SELECT count(*) FROM compactions WHERE session_id = ?`, session); err != nil {
			t.Fatal(err)
		}
		if msgs != want || comps != want {
			t.Errorf("session %s: %d messages, %d compactions; want %d of each", session, msgs, comps, want)
		}
	}
}

// TestHeldIngestReleasedWithoutItsConnection: a writer stopped by its
// context gives the held connection back and the ingest takes one again;
// where none can be taken (here the pool is closed), the next writer
// begins on a connection of its own, which fails as the pool does, and
// releasing the hold has nothing to give back.
func TestHeldIngestReleasedWithoutItsConnection(t *testing.T) {
	t.Parallel()
	s := openAt(t, filepath.Join(t.TempDir(), "ledger.db"))
	held, release, err := s.HoldIngest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(held)
	w, err := s.NewWriter(ctx, "claude")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddMessage(ctx, compact.Message{UUID: "m", SessionID: "s", Role: compact.RoleUser,
		Blocks: []compact.Block{{Kind: compact.BlockText, Text: "hello"}}}); err != nil {
		t.Fatal(err)
	}
	s.db.Close()
	cancel()
	if err := w.Commit(ctx, nil); err == nil {
		t.Fatal("a writer whose context ended committed")
	}
	if h := heldBulk(held, s.db); h == nil || h.conn != nil {
		t.Fatalf("the hold %+v kept a connection of a closed pool", h)
	}
	if _, err := s.NewWriter(held, "claude"); err == nil || !strings.Contains(err.Error(), "database is closed") {
		t.Errorf("writer on a closed pool: %v", err)
	}
	release()
}
