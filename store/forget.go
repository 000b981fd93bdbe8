package store

import (
	"context"
	"database/sql/driver"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// Forgotten is what forgetting a session removes (or would remove).
type Forgotten struct {
	SessionID    string   `json:"session" db:"-"`
	Messages     int64    `json:"messages" db:"messages"`
	Handoffs     int64    `json:"handoffs" db:"handoffs"`
	Compactions  int64    `json:"compactions" db:"compactions"`
	Cursors      int64    `json:"cursors" db:"cursors"`
	HandoffFiles []string `json:"handoff_files" db:"-"`
	// WALTruncated is false when another process kept the WAL (and the
	// old pages in it) alive: it is emptied when that process is done.
	WALTruncated bool `json:"wal_truncated" db:"-"`
}

// Forget deletes a session and everything derived from it: messages,
// handoffs, compactions, notes, cursors, marks, hook receipts, and their
// full-text rows
// (by the delete triggers). It leaves a tombstone so that ingesting the
// transcript again does not bring the session back. With dryRun it only
// counts.
//
// No byte of the session is left in the database file or its WAL
// afterwards, which costs a rewrite of the full-text indexes and of the
// file: on a ledger of 100,000 messages (a 212 MB file), 1.8 s instead of
// 0.1 s, and free disk space the size of the file while it runs.
//
//   - The deletes run with secure_delete on, so SQLite zeroes what they
//     free.
//   - FTS5 deletes by adding tombstones, the terms staying in the index's
//     segments until they are merged: 'optimize' merges each index into one
//     segment without them. (FTS5's secure-delete option, which removes
//     them from the segments at each delete, measured twice as slow.)
//   - Pages freed before, by earlier merges and updates, were not zeroed
//     and may hold the session's text, as may the free space inside pages:
//     VACUUM rewrites the file without them.
//   - A TRUNCATE checkpoint copies the WAL into the file and empties it.
func (s *Store) Forget(ctx context.Context, sessionID string, dryRun bool) (Forgotten, error) {
	fs, err := s.ForgetSessions(ctx, []string{sessionID}, dryRun)
	if len(fs) == 0 {
		return Forgotten{SessionID: sessionID, HandoffFiles: []string{}}, err
	}
	return fs[0], err
}

// ForgetSessions forgets several sessions as Forget does one, in one
// transaction with one merge of the full-text indexes and one rewrite of
// the file, whatever their number (forget --project).
func (s *Store) ForgetSessions(ctx context.Context, sessionIDs []string, dryRun bool) ([]Forgotten, error) {
	var fs []Forgotten
	err := Retry(ctx, func() error {
		var err error
		fs, err = s.forget(ctx, sessionIDs, dryRun)
		return err
	})
	if err != nil || dryRun || len(sessionIDs) == 0 {
		return fs, err
	}
	truncated := true
	if !s.pg {
		// PostgreSQL: no file or WAL of ours holds the old rows, the
		// server's autovacuum reclaims their space.
		if truncated, err = s.scrub(ctx); err != nil {
			return fs, fmt.Errorf("forget: %w", err)
		}
	}
	for i := range fs {
		fs[i].WALTruncated = truncated
	}
	return fs, nil
}

// forget deletes the sessions in one transaction, on a connection of its
// own with secure_delete on. (The pragma stays with this connection, which
// is closed rather than returned to the pool.)
func (s *Store) forget(ctx context.Context, sessionIDs []string, dryRun bool) ([]Forgotten, error) {
	if s.pg {
		tx, _, err := s.beginWritePG(ctx)
		if err != nil {
			return nil, fmt.Errorf("begin: %w", err)
		}
		defer tx.Rollback()
		return s.forgetIn(ctx, tx, sessionIDs, dryRun)
	}
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close()
	defer conn.Raw(func(any) error { return driver.ErrBadConn }) // never reused: it has secure_delete on
	if !dryRun {
		if _, err := conn.ExecContext(ctx, `PRAGMA secure_delete = ON`); err != nil {
			return nil, fmt.Errorf("secure delete: %w", err)
		}
	}
	tx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	return s.forgetIn(ctx, tx, sessionIDs, dryRun)
}

// forgetIn deletes the sessions in tx, merges the full-text indexes once,
// and commits.
func (s *Store) forgetIn(ctx context.Context, tx *sqlx.Tx, sessionIDs []string, dryRun bool) ([]Forgotten, error) {
	out := make([]Forgotten, 0, len(sessionIDs))
	for _, id := range sessionIDs {
		f, err := deleteSession(ctx, tx, id, dryRun)
		if err != nil {
			return out, err
		}
		out = append(out, f)
	}
	if dryRun || len(sessionIDs) == 0 {
		return out, nil
	}
	// FTS5 deletes by adding tombstones: the terms stay in the segments
	// until they are merged. 'optimize' merges each index into one segment
	// without them (FTS5's 'secure-delete' option, which removes them from
	// the segments at each delete, measured twice as slow here).
	for _, t := range ftsTables {
		if s.pg {
			break // PostgreSQL's tsvector columns went with their rows
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+t+` (`+t+`) VALUES ('optimize')`); err != nil {
			return out, fmt.Errorf("forget: merge %s: %w", t, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return out, fmt.Errorf("commit forget: %w", err)
	}
	return out, nil
}

// deleteSession counts what the session holds and, unless dryRun, deletes
// it and leaves its tombstone, in tx.
func deleteSession(ctx context.Context, tx *sqlx.Tx, sessionID string, dryRun bool) (Forgotten, error) {
	f := Forgotten{SessionID: sessionID, HandoffFiles: []string{}}
	err := tx.GetContext(ctx, &f, `SELECT
		(SELECT count(*) FROM messages WHERE session_id = ?) AS messages,
		(SELECT count(*) FROM handoffs WHERE session_id = ?) AS handoffs,
		(SELECT count(*) FROM compactions WHERE session_id = ?) AS compactions,
		(SELECT count(*) FROM cursors WHERE session_id = ?) AS cursors`,
		sessionID, sessionID, sessionID, sessionID)
	if err != nil {
		return f, fmt.Errorf("count session %s: %w", sessionID, err)
	}
	if err := tx.SelectContext(ctx, &f.HandoffFiles, `SELECT path FROM handoffs WHERE session_id = ? AND path <> '' ORDER BY id`, sessionID); err != nil {
		return f, fmt.Errorf("list handoff files: %w", err)
	}
	f.SessionID = sessionID
	if dryRun {
		return f, nil
	}
	for _, q := range []string{
		`DELETE FROM compactions WHERE session_id = ?`,
		`DELETE FROM handoffs WHERE session_id = ?`,
		`DELETE FROM notes WHERE session_id = ?`,
		`DELETE FROM messages WHERE session_id = ?`,
		`DELETE FROM cursors WHERE session_id = ?`,
		`DELETE FROM session_marks WHERE session_id = ?`,
		`DELETE FROM hook_receipts WHERE session_id = ?`,
		`DELETE FROM sessions WHERE id = ?`,
	} {
		if _, err := tx.ExecContext(ctx, q, sessionID); err != nil {
			return f, fmt.Errorf("forget %s: %w", sessionID, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO forgotten (session_id, at) VALUES (?, ?) ON CONFLICT DO NOTHING`,
		sessionID, time.Now().UTC()); err != nil {
		return f, fmt.Errorf("remember forgotten %s: %w", sessionID, err)
	}
	return f, nil
}

// scrub rewrites the database file without its free pages (VACUUM) and
// empties the WAL. It reports false when a reader holding an old snapshot
// kept the WAL from being emptied: the next checkpoint after it is done
// empties it.
func (s *Store) scrub(ctx context.Context) (walTruncated bool, err error) {
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return false, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close()
	if err := Retry(ctx, func() error {
		_, err := conn.ExecContext(ctx, `VACUUM`)
		return err
	}); err != nil {
		return false, fmt.Errorf("vacuum: %w", err)
	}
	var busy, logFrames, done int64
	if err := conn.QueryRowxContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logFrames, &done); err != nil {
		return false, fmt.Errorf("checkpoint: %w", err)
	}
	return busy == 0, nil
}
