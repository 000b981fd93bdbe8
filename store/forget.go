package store

import (
	"context"
	"database/sql/driver"
	"fmt"
	"time"
)

// Forgotten is what forgetting a session removes (or would remove).
type Forgotten struct {
	SessionID    string   `json:"session" db:"-"`
	Messages     int64    `json:"messages" db:"messages"`
	Handoffs     int64    `json:"handoffs" db:"handoffs"`
	Compactions  int64    `json:"compactions" db:"compactions"`
	Cursors      int64    `json:"cursors" db:"cursors"`
	HandoffFiles []string `json:"handoff_files" db:"-"`
}

// Forget deletes a session and everything derived from it: messages,
// handoffs, compactions, cursors, marks, and their full-text rows (by the
// delete triggers). It leaves a tombstone so that ingesting the transcript
// again does not bring the session back. With dryRun it only counts.
func (s *Store) Forget(ctx context.Context, sessionID string, dryRun bool) (Forgotten, error) {
	var f Forgotten
	err := Retry(ctx, func() error {
		var err error
		f, err = s.forget(ctx, sessionID, dryRun)
		return err
	})
	return f, err
}

// forget runs on a connection of its own with secure_delete on, so the
// deleted rows' bytes are overwritten rather than left in free pages, and
// ends with a checkpoint that truncates the WAL, where the old pages would
// otherwise linger. (The pragma stays with this connection, which is closed
// rather than returned to the pool.)
func (s *Store) forget(ctx context.Context, sessionID string, dryRun bool) (Forgotten, error) {
	f := Forgotten{SessionID: sessionID, HandoffFiles: []string{}}
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return f, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close()
	defer conn.Raw(func(any) error { return driver.ErrBadConn }) // never reused: it has secure_delete on
	if !dryRun {
		if _, err := conn.ExecContext(ctx, `PRAGMA secure_delete = ON`); err != nil {
			return f, fmt.Errorf("secure delete: %w", err)
		}
	}
	tx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		return f, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	err = tx.GetContext(ctx, &f, `SELECT
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
	if err := tx.Commit(); err != nil {
		return f, fmt.Errorf("commit forget: %w", err)
	}
	// A reader holding an old snapshot keeps the checkpoint from finishing;
	// the WAL is then truncated by the next checkpoint instead.
	conn.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return f, nil
}
