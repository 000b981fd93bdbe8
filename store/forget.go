package store

import (
	"context"
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
	// HeapRewritten tells whether the tables that held the session were
	// rewritten without it: SQLite's VACUUM of the file (always), or
	// VACUUM FULL of the team ledger's tables (see forgetPG).
	HeapRewritten bool `json:"heap_rewritten" db:"-"`
	// HeapError says why a team ledger's tables could not be rewritten
	// without the session (which kept its rows, and what held them).
	HeapError string `json:"heap_error,omitempty" db:"-"`
	// WALTruncated tells whether the log beside the data was emptied
	// into it. False on SQLite when a reader held a snapshot through the
	// forget: the session's old pages are then still in the file and its
	// WAL, until a checkpoint after that reader is done (ledger doctor
	// does one). Always false on PostgreSQL, whose pg_wal is the
	// server's.
	WALTruncated bool `json:"wal_truncated" db:"-"`
}

// Forget deletes a session and everything derived from it: messages,
// handoffs, compactions, notes, cursors, marks, hook receipts, its resume
// state, and their full-text rows (by the delete triggers). It leaves a tombstone so that ingesting the
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
	var xid int64
	err := Retry(ctx, func() error {
		var err error
		fs, xid, err = s.forget(ctx, sessionIDs, dryRun)
		return err
	})
	if err != nil || dryRun || len(sessionIDs) == 0 {
		return fs, err
	}
	sc, err := s.d.scrubForgotten(ctx, s.db, xid)
	if err != nil {
		return fs, fmt.Errorf("forget: %w", err)
	}
	for i := range fs {
		fs[i].HeapRewritten, fs[i].HeapError, fs[i].WALTruncated = sc.rewritten, sc.why, sc.walTruncated
	}
	return fs, nil
}

// forget deletes the sessions in one transaction (the dialect's
// beginForget: on SQLite, on a connection of its own with secure_delete
// on, closed rather than returned to the pool). It also returns what the
// dialect's scrub needs of that transaction (on PostgreSQL, its id).
func (s *Store) forget(ctx context.Context, sessionIDs []string, dryRun bool) ([]Forgotten, int64, error) {
	tx, xid, done, err := s.d.beginForget(ctx, s.db)
	if err != nil {
		return nil, 0, fmt.Errorf("begin: %w", err)
	}
	defer done()
	defer tx.Rollback()
	fs, err := s.forgetIn(ctx, tx, sessionIDs, dryRun)
	return fs, xid, err
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
	// The full-text index may keep the deleted terms until it is merged
	// (FTS5's tombstones): merge it without them.
	if err := s.d.mergeFTS(ctx, tx); err != nil {
		return out, fmt.Errorf("forget: %w", err)
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
		(SELECT count(*) FROM messages WHERE session_id = $1) AS messages,
		(SELECT count(*) FROM handoffs WHERE session_id = $1) AS handoffs,
		(SELECT count(*) FROM compactions WHERE session_id = $1) AS compactions,
		(SELECT count(*) FROM cursors WHERE session_id = $1) AS cursors`,
		sessionID)
	if err != nil {
		return f, fmt.Errorf("count session %s: %w", sessionID, err)
	}
	if err := tx.SelectContext(ctx, &f.HandoffFiles, `SELECT path FROM handoffs WHERE session_id = $1 AND path <> '' ORDER BY id`, sessionID); err != nil {
		return f, fmt.Errorf("list handoff files: %w", err)
	}
	f.SessionID = sessionID
	if dryRun {
		return f, nil
	}
	for _, q := range []string{
		`DELETE FROM compactions WHERE session_id = $1`,
		`DELETE FROM handoffs WHERE session_id = $1`,
		`DELETE FROM notes WHERE session_id = $1`,
		`DELETE FROM messages WHERE session_id = $1`,
		`DELETE FROM cursors WHERE session_id = $1`,
		`DELETE FROM session_marks WHERE session_id = $1`,
		`DELETE FROM hook_receipts WHERE session_id = $1`,
		`DELETE FROM resume_states WHERE session_id = $1`, // the sessions' cascade would; said here
		`DELETE FROM sessions WHERE id = $1`,
	} {
		if _, err := tx.ExecContext(ctx, q, sessionID); err != nil {
			return f, fmt.Errorf("forget %s: %w", sessionID, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO forgotten (session_id, at) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
		sessionID, time.Now().UTC()); err != nil {
		return f, fmt.Errorf("remember forgotten %s: %w", sessionID, err)
	}
	return f, nil
}
