//go:build unix

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// migrationLock is goose's Locker for a SQLite ledger: an exclusive flock
// on the file path+"-migrate", held while goose reads which migrations are
// applied and applies the others. Processes that open a new ledger at
// once raced to migrate it, each applying what it had read as missing: a
// migration that cannot run twice failed in the loser (migrateFrom checks
// the version again), but one that can (00015-00017 set FTS5 options and
// rebuild an index) was applied and recorded twice. The kernel drops the
// lock of a process that dies; the file stays, empty, beside the WAL's.
type migrationLock struct {
	path string
	f    *os.File
}

func (l *migrationLock) Lock(ctx context.Context, _ *sql.DB) error {
	f, err := os.OpenFile(l.path+"-migrate", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("lock migrations: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			l.f = f
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return fmt.Errorf("lock migrations: %w", err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (l *migrationLock) Unlock(context.Context, *sql.DB) error {
	if l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the descriptor drops its flock
	l.f = nil
	return err
}
