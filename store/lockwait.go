package store

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
)

// How long a write waits for another process's write lock: busy_timeout
// (5 s, in the DSN) by each attempt, and Retry's attempts, all ended early
// by the context. A caller that must keep a budget (a hook) sets a lock
// deadline instead: its writes give up the lock wait then, as busy, while
// the context lives on for the rest of its work (reads, a Markdown file,
// a receipt).

type lockDeadlineKey struct{}

// WithLockDeadline returns ctx in which the store's write transactions
// wait for the write lock until t at the latest, and are not retried past
// it.
func WithLockDeadline(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, lockDeadlineKey{}, t)
}

func lockDeadline(ctx context.Context) (time.Time, bool) {
	t, ok := ctx.Value(lockDeadlineKey{}).(time.Time)
	return t, ok
}

// defaultBusyTimeout is the DSN's busy_timeout, in milliseconds.
const defaultBusyTimeout = 5000

// beginWrite begins a write transaction (immediate: the DSN's _txlock).
// Under a lock deadline it runs on a connection of its own whose
// busy_timeout ends at the deadline; done gives that connection back,
// busy_timeout restored, once the transaction is over (call it after
// Commit or Rollback).
func (s *Store) beginWrite(ctx context.Context) (tx *sqlx.Tx, done func(), err error) {
	return s.beginWriteWith(ctx, "", "")
}

// beginWriteWith is beginWrite on a connection of its own when setup is
// given: setup's pragmas run on it before the transaction begins, and
// reset's when done gives it back.
func (s *Store) beginWriteWith(ctx context.Context, setup, reset string) (tx *sqlx.Tx, done func(), err error) {
	if s.pg {
		return s.beginWritePG(ctx) // no pragmas; its own lock
	}
	by, ok := lockDeadline(ctx)
	if !ok && setup == "" {
		tx, err := s.db.BeginTxx(ctx, nil)
		return tx, func() {}, err
	}
	if ok {
		wait := max(0, time.Until(by).Milliseconds())
		setup += fmt.Sprintf(`; PRAGMA busy_timeout = %d`, wait)
		reset += fmt.Sprintf(`; PRAGMA busy_timeout = %d`, defaultBusyTimeout)
	}
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return nil, nil, err
	}
	restore := func() {
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), strings.TrimPrefix(reset, "; ")); err != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn }) // not back to the pool as it is
		}
		conn.Close()
	}
	if _, err := conn.ExecContext(ctx, strings.TrimPrefix(setup, "; ")); err != nil {
		restore()
		return nil, nil, err
	}
	if tx, err = conn.BeginTxx(ctx, nil); err != nil {
		restore()
		return nil, nil, err
	}
	return tx, restore, nil
}
