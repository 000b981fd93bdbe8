package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jmoiron/sqlx"
)

// ftsTables are the full-text indexes, each over its content table.
var ftsTables = []string{"messages_fts", "handoffs_fts", "compactions_fts", "notes_fts"}

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

// Check runs SQLite's integrity_check and FTS5's integrity-check on every
// index, and counts what the ledger holds.
func (s *Store) Check(ctx context.Context) (Health, error) {
	var h Health
	if s.pg {
		return s.checkPG(ctx)
	}
	var problems []string
	if err := s.db.SelectContext(ctx, &problems, `PRAGMA integrity_check`); err != nil {
		return h, fmt.Errorf("integrity check: %w", err)
	}
	h.Integrity = strings.Join(problems, "; ")
	h.ReadOnly = s.readOnly
	var fts []string
	for _, t := range ftsTables {
		if s.readOnly {
			break
		}
		if _, err := s.db.ExecContext(ctx, `INSERT INTO `+t+` (`+t+`, rank) VALUES ('integrity-check', 1)`); err != nil {
			fts = append(fts, t+": "+err.Error())
		}
	}
	h.FTS = "ok"
	if len(fts) > 0 {
		h.FTS = strings.Join(fts, "; ")
	}
	if err := s.count(ctx, &h); err != nil {
		return h, err
	}
	h.WALEmptied = s.emptyWAL(ctx)
	for _, p := range []string{s.path, s.path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			h.Bytes += fi.Size()
		}
	}
	return h, nil
}

// emptyWAL copies the WAL into the database file and empties it, on a
// read-write connection of its own (doctor reads through a read-only
// store), once: what finishes a forget that a reader held up. It reports
// whether it could; a ledger this process cannot write cannot.
func (s *Store) emptyWAL(ctx context.Context) bool {
	if _, err := os.Stat(s.path + "-wal"); err != nil || !writableFolder(filepath.Dir(s.path)) {
		return false
	}
	db, err := sqlx.Open("sqlite", DSN(s.path)+"&mode=rw")
	if err != nil {
		return false
	}
	defer db.Close()
	conn, err := db.Connx(ctx)
	if err != nil {
		return false
	}
	defer conn.Close()
	done, err := truncateWAL(ctx, conn, 1)
	return err == nil && done
}

// checkPG is Check on PostgreSQL: the server keeps its own files whole,
// and the full-text columns are generated with their rows; what is left
// to check is that the ledger answers, and to count.
func (s *Store) checkPG(ctx context.Context) (Health, error) {
	h := Health{Integrity: "ok", FTS: "ok"} // nothing left unchecked, read-only or not
	if err := s.count(ctx, &h); err != nil {
		return h, err
	}
	if err := s.db.GetContext(ctx, &h.Bytes, `SELECT pg_database_size(current_database())`); err != nil {
		return h, fmt.Errorf("database size: %w", err)
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

// RebuildFTS rebuilds every full-text index from its content table.
func (s *Store) RebuildFTS(ctx context.Context) error {
	if s.pg {
		return nil // PostgreSQL's tsvector columns are generated with their rows
	}
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	for _, t := range ftsTables {
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+t+` (`+t+`) VALUES ('rebuild')`); err != nil {
			return fmt.Errorf("rebuild %s: %w", t, err)
		}
	}
	return tx.Commit()
}
