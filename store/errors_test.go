package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentledger/ledger/store/pgtest"
)

// TestKindOfDriverErrors: what each backend's driver really says, when a
// write meets a read-only ledger or another writer holding the lock past
// the wait, is known by its type and code (Kind): ErrReadOnly and ErrBusy
// on SQLite and on PostgreSQL alike.
func TestKindOfDriverErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	opens := []struct {
		name string
		at   func(t *testing.T) string // a new ledger's location
	}{
		{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "ledger.db") }},
		{"postgres", func(t *testing.T) string { return pgtest.URL(t) }},
	}
	for _, o := range opens {
		t.Run(o.name, func(t *testing.T) {
			t.Parallel()
			at := o.at(t)
			open := func(opts ...Option) *Store {
				t.Helper()
				s, err := Open(ctx, at, append([]Option{WithLocalPath(filepath.Join(t.TempDir(), "ledger.db"))}, opts...)...)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
			s := open()

			// A write through a store opened read-only: the database
			// refuses it (SQLITE_READONLY; read_only_sql_transaction).
			ro := open(ReadOnly())
			_, err := ro.db.ExecContext(ctx, `INSERT INTO forgotten (session_id, at) VALUES ('x', CURRENT_TIMESTAMP)`)
			if err == nil {
				t.Fatal("a read-only store wrote")
			}
			if k := Kind(fmt.Errorf("note: %w", err)); k != ErrReadOnly {
				t.Errorf("Kind(%v) = %v, want %v", err, k, ErrReadOnly)
			}

			// Another writer holds the lock past this one's deadline.
			tx, done, err := s.beginWrite(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { tx.Rollback(); done() }()
			other := open()
			_, _, err = other.beginWrite(WithLockDeadline(ctx, time.Now().Add(50*time.Millisecond)))
			if err == nil {
				t.Fatal("a second writer took the lock")
			}
			if k := Kind(fmt.Errorf("begin: %w", err)); k != ErrBusy || !IsBusy(err) {
				t.Errorf("Kind(%v) = %v, IsBusy %v; want %v", err, k, IsBusy(err), ErrBusy)
			}
		})
	}
}

// TestKind: the store's own errors have their kinds; an error that is
// none of them, and nil, have none.
func TestKind(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want error
	}{
		{fmt.Errorf("no session %q: %w", "x", ErrNotFound), ErrNotFound},
		{&AmbiguousError{Prefix: "ab", Candidates: []string{"ab1", "ab2"}}, ErrAmbiguous},
		{&NotLedgerError{Location: `"mysql://x"`, Why: "is not a postgres:// URL"}, ErrInvalid},
		{fmt.Errorf("open: %w", &ReadOnlyError{Path: "/x", Err: errors.New("permission denied")}), ErrReadOnly},
		{errors.New("disk I/O error"), nil},
		{nil, nil},
	} {
		if got := Kind(tc.err); got != tc.want {
			t.Errorf("Kind(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
