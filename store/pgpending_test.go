package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"testing"
	"time"
)

// pendingPages files the GIN pending list of messages' text index and
// says how many pages it held.
func pendingPages(t *testing.T, s *Store) int64 {
	t.Helper()
	var n int64
	if err := s.db.Get(&n, `SELECT gin_clean_pending_list('messages_tsv'::regclass)`); err != nil {
		t.Fatal(err)
	}
	return n
}

// writeDistinctWords writes n messages of 200 words each, most of them
// new to the index (a GIN pending list grows by every word of every row),
// in one writer transaction begun with ctx.
func writeDistinctWords(t *testing.T, ctx context.Context, s *Store, session string, n int) {
	t.Helper()
	rnd := rand.New(rand.NewPCG(uint64(n), 27))
	writeWords(t, ctx, s, session, session, time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC), n, 200,
		func() string { return fmt.Sprintf("w%x", rnd.Uint32()) })
}

// TestPendingListOfATeamLedger: on PostgreSQL a search reads the whole
// pending list of each GIN index it uses. A write under a hook's lock
// deadline keeps that list within 256 kB (32 pages); SettleSearch, which
// an ingest and a sync call once done, files what other writes left. 600
// messages of new words leave about 100 pages pending under the server's
// default limit (4 MB).
func TestPendingListOfATeamLedger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openPG(t)

	writeDistinctWords(t, ctx, s, "plain", 600)
	if n := pendingPages(t, s); n <= 40 {
		t.Fatalf("a write outside a hook left %d pages pending; the test needs more than 40", n)
	}

	hook := WithLockDeadline(ctx, time.Now().Add(time.Minute))
	writeDistinctWords(t, hook, s, "hook", 600)
	if n := pendingPages(t, s); n > 40 {
		t.Errorf("a hook's write left %d pages pending, want at most 32 (256 kB) and the page being filled", n)
	}

	// Under a role that does not own the indexes, filing them is not
	// allowed: SettleSearch does nothing and says nothing.
	writeDistinctWords(t, ctx, s, "settled", 600)
	role := fmt.Sprintf("ledger_member_%d", time.Now().UnixNano())
	for _, q := range []string{`CREATE ROLE ` + role + ` LOGIN`, `GRANT SELECT ON ALL TABLES IN SCHEMA public TO ` + role} {
		if _, err := s.db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	u, err := url.Parse(s.Location())
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	member, err := Open(ctx, u.String(), WithLocalPath(t.TempDir()+"/ledger.db"), ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	if err := member.SettleSearch(ctx, 20_000); err != nil {
		t.Errorf("SettleSearch by a role that does not own the indexes: %v", err)
	}
	member.Close()
	t.Cleanup(func() {
		s.db.Exec(`REVOKE ALL ON ALL TABLES IN SCHEMA public FROM ` + role)
		s.db.Exec(`DROP ROLE ` + role)
	})
	if err := s.SettleSearch(ctx, 20_000); err != nil {
		t.Fatal(err)
	}
	if n := pendingPages(t, s); n != 0 {
		t.Errorf("SettleSearch left %d pages pending", n)
	}
}
