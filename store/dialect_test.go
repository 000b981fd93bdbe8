package store

import (
	"context"
	"testing"
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
