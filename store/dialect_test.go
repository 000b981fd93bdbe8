package store

import (
	"context"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agentledger/ledger/compact"
)

// TestGiveBackDiscards: a connection given a setting of its own goes back
// to the pool only once the setting is put back; when that fails, it is
// discarded, and the pool's next connection has the DSN's settings.
func TestGiveBackDiscards(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTemp(t)
	s.db.SetMaxOpenConns(1) // the pool's next connection is this one, unless discarded
	timeout := func() int {
		t.Helper()
		var ms int
		if err := s.db.GetContext(ctx, &ms, `PRAGMA busy_timeout`); err != nil {
			t.Fatal(err)
		}
		return ms
	}
	for _, tc := range []struct {
		name  string
		reset string
		want  int
	}{
		// Closed as it is, the connection keeps its setting: what the
		// other cases must not do.
		{"closed without reset", "", 1234},
		{"reset", `PRAGMA busy_timeout = 5000`, defaultBusyTimeout},
		{"reset failed", `PRAGMA no_such_thing(`, defaultBusyTimeout},
	} {
		conn, err := s.db.Connx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(ctx, `PRAGMA busy_timeout = 1234`); err != nil {
			t.Fatal(err)
		}
		if tc.reset == "" {
			conn.Close()
		} else {
			giveBack(ctx, conn, tc.reset)
		}
		if got := timeout(); got != tc.want {
			t.Errorf("%s: the pool's connection has busy_timeout %d, want %d", tc.name, got, tc.want)
		}
		if _, err := s.db.ExecContext(ctx, `PRAGMA busy_timeout = 5000`); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHoldIngest: the writers of one ingest run on one connection with the
// ingest's settings, set once; a lock deadline on one of them is put back
// after it; once released, no connection of the pool keeps the settings.
func TestHoldIngest(t *testing.T) {
	t.Parallel()
	s := openSQLite(t)
	ctx := context.Background()
	bulk, release, err := s.HoldIngest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	write := func(ctx context.Context, uuid string) (cache, busy int64) {
		t.Helper()
		w, err := s.NewWriter(ctx, "claude")
		if err != nil {
			t.Fatal(err)
		}
		defer w.Rollback()
		if _, err := w.AddMessage(ctx, compact.Message{UUID: uuid, SessionID: "s1", Role: compact.RoleUser,
			Blocks: []compact.Block{{Kind: compact.BlockText, Text: "hello " + uuid}}}); err != nil {
			t.Fatal(err)
		}
		if err := w.tx.GetContext(ctx, &cache, `PRAGMA cache_size`); err != nil {
			t.Fatal(err)
		}
		if err := w.tx.GetContext(ctx, &busy, `PRAGMA busy_timeout`); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(ctx, nil); err != nil {
			t.Fatal(err)
		}
		return cache, busy
	}
	if cache, _ := write(bulk, "m1"); cache != -32768 {
		t.Errorf("cache_size %d in the ingest's first transaction, want -32768", cache)
	}
	if cache, busy := write(WithLockDeadline(bulk, time.Now().Add(time.Hour)), "m2"); cache != -32768 || busy < 3_000_000 {
		t.Errorf("cache_size %d, busy_timeout %d under a lock deadline", cache, busy)
	}
	if _, busy := write(bulk, "m3"); busy != defaultBusyTimeout {
		t.Errorf("busy_timeout %d after the deadline's transaction, want %d", busy, defaultBusyTimeout)
	}
	release()
	release()         // twice is once
	write(bulk, "m4") // after release: a connection of its own
	// Every connection of the pool, taken at once, has the usual settings.
	var conns []*sqlx.Conn
	for range 4 {
		c, err := s.db.Connx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for i, c := range conns {
		var cache int64
		if err := c.GetContext(ctx, &cache, `PRAGMA cache_size`); err != nil || cache != -2000 {
			t.Errorf("connection %d: cache_size %d, %v; want -2000", i, cache, err)
		}
		c.Close()
	}
	if n, err := s.Messages(ctx, "s1", 0); err != nil || len(n) != 4 {
		t.Errorf("Messages = %d, %v; want 4", len(n), err)
	}
}
