package store

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"
)

// How long a write waits for another process's write lock: on SQLite,
// busy_timeout (5 s, in the DSN) by each attempt, and Retry's attempts; on
// PostgreSQL, within the statement timeout; all ended early by the
// context. A caller that must keep a budget (a hook) sets a lock deadline
// instead: its writes give up the lock wait then, as busy, while the
// context lives on for the rest of its work (reads, a Markdown file, a
// receipt).

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

// beginWrite begins a write transaction holding the ledger's write lock
// (the dialect's beginWrite); done gives back what it ran on, once the
// transaction is over (call it after Commit or Rollback).
func (s *Store) beginWrite(ctx context.Context) (tx *sqlx.Tx, done func(), err error) {
	return s.d.beginWrite(ctx, s.db, false)
}
