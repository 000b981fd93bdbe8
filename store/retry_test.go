package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jmoiron/sqlx"
)

// lockedBy opens a second handle on s's file and takes the write lock in
// an immediate transaction; the returned func releases it.
func lockedBy(t *testing.T, s *Store) func() {
	t.Helper()
	other, err := sqlx.Open("sqlite", "file:"+s.Path()+"?_pragma=busy_timeout(0)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	tx, err := other.Beginx()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO forgotten (session_id, at) VALUES ('lock', CURRENT_TIMESTAMP)`); err != nil {
		t.Fatal(err)
	}
	return func() { tx.Rollback() }
}

func TestIsBusy(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	release := lockedBy(t, s)
	defer release()
	// A third handle without busy_timeout gets SQLITE_BUSY at once.
	impatient, err := sqlx.Open("sqlite", "file:"+s.Path()+"?_pragma=busy_timeout(0)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer impatient.Close()
	_, busyErr := impatient.Beginx()
	if busyErr == nil {
		t.Fatal("second writer began while the first held the lock")
	}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"driver error", busyErr, true},
		{"wrapped", fmt.Errorf("begin ingest: %w", busyErr), true},
		{"lock timeout on PostgreSQL", fmt.Errorf("begin: %w", &pgconn.PgError{Code: "55P03", Message: "canceling statement due to lock timeout"}), true},
		{"deadlock on PostgreSQL", &pgconn.PgError{Code: "40P01"}, true},
		{"the store's busy", fmt.Errorf("begin: %w", kindError{ErrBusy, errors.New("database is locked")}), true},
		// No substring matching: a driver error is known by its type.
		{"message only", errors.New("migrate database: database is locked (5) (SQLITE_BUSY)"), false},
		{"read-only on PostgreSQL", &pgconn.PgError{Code: "25006"}, false},
		{"nil", nil, false},
		{"other", errors.New("no such table: sessions"), false},
		{"canceled", context.Canceled, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsBusy(tc.err); got != tc.want {
				t.Errorf("IsBusy(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

func TestRetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	busy := fmt.Errorf("begin: %w", &pgconn.PgError{Code: "55P03", Message: "canceling statement due to lock timeout"})
	other := errors.New("constraint failed")
	tests := []struct {
		name  string
		fails []error // what the attempts return before nil
		calls int
		err   error
	}{
		{"first try", nil, 1, nil},
		{"busy then ok", []error{busy, busy}, 3, nil},
		{"other error is not retried", []error{other}, 1, other},
		{"busy every time gives up", []error{busy, busy, busy, busy, busy, busy, busy}, retryAttempts, busy},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			err := retry(ctx, retryAttempts, time.Millisecond, 4*time.Millisecond, func() error {
				calls++
				if calls <= len(tc.fails) {
					return tc.fails[calls-1]
				}
				return nil
			})
			if calls != tc.calls || !errors.Is(err, tc.err) {
				t.Errorf("calls %d, err %v; want %d, %v", calls, err, tc.calls, tc.err)
			}
		})
	}

	// A done context stops the waiting with the last busy error.
	cctx, cancel := context.WithCancel(ctx)
	calls := 0
	start := time.Now()
	err := retry(cctx, 100, time.Second, time.Second, func() error { calls++; cancel(); return busy })
	if calls != 1 || !errors.Is(err, busy) || time.Since(start) > 500*time.Millisecond {
		t.Errorf("canceled retry: %d calls, %v after %v", calls, err, time.Since(start))
	}
}

// TestRetryWaitsOutALock: a transaction that meets SQLITE_BUSY past its
// busy timeout succeeds once the other writer lets go.
func TestRetryWaitsOutALock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTemp(t)
	release := lockedBy(t, s)
	impatient, err := sqlx.Open("sqlite", "file:"+s.Path()+"?_pragma=busy_timeout(0)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer impatient.Close()
	// With no busy timeout the first attempt fails at once, and then the
	// other writer lets go.
	calls := 0
	err = Retry(ctx, func() error {
		calls++
		tx, err := impatient.BeginTxx(ctx, nil)
		if err != nil {
			if calls == 1 && IsBusy(err) {
				release()
			}
			return err
		}
		defer tx.Rollback()
		if _, err := tx.Exec(`INSERT INTO forgotten (session_id, at) VALUES ('x', CURRENT_TIMESTAMP)`); err != nil {
			return err
		}
		return tx.Commit()
	})
	if err != nil || calls != 2 {
		t.Fatalf("Retry: %v after %d calls; want success at the second", err, calls)
	}
}
