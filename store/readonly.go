package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/jmoiron/sqlx"
)

// ReadOnly opens a store that cannot write: SQLite itself refuses every
// statement that would change the database (PRAGMA query_only), so a front
// door that promises to only read (the MCP server's read tools) keeps that
// promise whatever code runs behind it. Such a store never creates the
// database; one whose schema is behind this binary's is migrated first,
// on a read-write connection closed again.
func ReadOnly() Option {
	return func(s *Store) {
		s.readOnly = true
		s.redactor = nil // it writes nothing to redact
	}
}

// ReadOnly tells whether the store refuses writes.
func (s *Store) ReadOnly() bool { return s.readOnly }

// readOnlyDSN is DSN with query_only on every pooled connection, and
// deferred transactions: an immediate one takes the write lock, which a
// reader has no use for and would hold against the writers.
func readOnlyDSN(path string) string { return dsn(path, "&_pragma=query_only(1)", "deferred") }

// openReadOnly opens s's database read-only; its schema must be this
// binary's.
func openReadOnly(ctx context.Context, s *Store) (*Store, error) {
	if _, err := os.Stat(s.path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("open database %s read-only: it does not exist yet (ledger init creates it)", s.path)
		}
		return nil, fmt.Errorf("open database: %w", err)
	}
	db, err := sqlx.Open("sqlite", readOnlyDSN(s.path))
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", s.path, err)
	}
	want, err := TargetVersion()
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	have, err := schemaVersion(ctx, db)
	if err == nil && have < want {
		db.Close()
		var rw *Store
		if rw, err = Open(ctx, s.path, WithoutRedaction()); err != nil {
			return nil, err
		}
		rw.Close()
		if db, err = sqlx.Open("sqlite", readOnlyDSN(s.path)); err != nil {
			return nil, fmt.Errorf("open database %s: %w", s.path, err)
		}
		have, err = schemaVersion(ctx, db)
	}
	if err == nil && have > want {
		err = fmt.Errorf("database %s has schema version %d, newer than this ledger knows (%d): upgrade ledger", s.path, have, want)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	s.db = db
	return s, nil
}
