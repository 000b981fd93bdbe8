package store

import (
	"context"
	"fmt"
)

// Health is what `ledger doctor` reports.
type Health struct {
	Integrity string `json:"integrity"` // "ok" or SQLite's findings
	FTS       string `json:"fts"`       // "ok" or what FTS5's integrity-check said
	Sessions  int64  `json:"sessions" db:"sessions"`
	Messages  int64  `json:"messages" db:"messages"`
	Handoffs  int64  `json:"handoffs" db:"handoffs"`
	Compacts  int64  `json:"compactions" db:"compactions"`
	Bytes     int64  `json:"bytes"` // the database file and its WAL
	Rebuilt   bool   `json:"rebuilt"`
	// ReadOnly is set when the ledger could only be read: FTS5's own
	// integrity-check is a write, so the indexes were checked by SQLite's
	// integrity_check alone (which checks FTS5 tables' structure too).
	ReadOnly bool `json:"read_only"`
	// WALEmptied tells whether the WAL was copied into the database file
	// and emptied: what finishes a forget that a reader held up. False
	// on a read-only ledger, on PostgreSQL, and while a reader still holds
	// an old snapshot.
	WALEmptied bool `json:"wal_emptied"`
}

// Check checks the database and its full-text indexes (on SQLite, its
// integrity_check and FTS5's integrity-check on every index; a server keeps
// its own files whole), counts what the ledger holds, and measures it on
// disk, its WAL emptied first where this process can (see Health).
func (s *Store) Check(ctx context.Context) (Health, error) {
	h, err := s.d.check(ctx, s.db, s.readOnly)
	if err != nil {
		return h, err
	}
	if err := s.count(ctx, &h); err != nil {
		return h, err
	}
	if h.Bytes, h.WALEmptied, err = s.d.footprint(ctx, s.db); err != nil {
		return h, err
	}
	return h, nil
}

// count counts what the ledger holds into h.
func (s *Store) count(ctx context.Context, h *Health) error {
	if err := s.db.GetContext(ctx, h, `SELECT (SELECT count(*) FROM sessions) AS sessions,
		(SELECT count(*) FROM messages) AS messages, (SELECT count(*) FROM handoffs) AS handoffs,
		(SELECT count(*) FROM compactions) AS compactions`); err != nil {
		return fmt.Errorf("count: %w", err)
	}
	return nil
}

// RebuildFTS rebuilds every full-text index from its content table (on
// PostgreSQL, whose tsvector columns are written with their rows, there
// is nothing to rebuild).
func (s *Store) RebuildFTS(ctx context.Context) error {
	tx, done, err := s.d.beginWrite(ctx, s.db, false)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer done()
	defer tx.Rollback()
	if err := s.d.rebuildFTS(ctx, tx); err != nil {
		return err
	}
	return tx.Commit()
}
