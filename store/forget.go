package store

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strings"
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
	// HeapError says why a team ledger's tables could not be rewritten.
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
	var xid int64
	err := Retry(ctx, func() error {
		var err error
		fs, xid, err = s.forget(ctx, sessionIDs, dryRun)
		return err
	})
	if err != nil || dryRun || len(sessionIDs) == 0 {
		return fs, err
	}
	rewritten, truncated, why := true, false, ""
	if s.pg {
		why = s.scrubPG(ctx, xid)
		rewritten = why == ""
	} else if truncated, err = s.scrub(ctx); err != nil {
		return fs, fmt.Errorf("forget: %w", err)
	}
	for i := range fs {
		fs[i].HeapRewritten, fs[i].HeapError, fs[i].WALTruncated = rewritten, why, truncated
	}
	return fs, nil
}

// forgetTables are the tables a forget deletes from.
var forgetTables = []string{"compactions", "handoffs", "notes", "messages", "cursors", "session_marks", "hook_receipts", "sessions"}

// scrubPG rewrites a team ledger's tables that held the forgotten rows,
// and reports why it could not ("" when it did). A DELETE in PostgreSQL
// leaves the row's bytes in the table's pages (and in its TOAST table and
// indexes) until they are reused; plain VACUUM only marks the space free.
// VACUUM FULL writes each table anew, without them, and its indexes too;
// ANALYZE with it replaces the column statistics, which sample rows.
//
// It needs the tables' owner, and takes each table's exclusive lock while
// it runs (other clients wait): it waits at most 5 s for that lock, and
// gives up rather than queue everyone behind a long transaction. A
// transaction that began before the delete (xid) may still read the rows,
// so VACUUM FULL copies them too: it waits for such transactions in this
// database up to snapshotWait (an autovacuum's ANALYZE, another client's
// read), and says so when one is still open. It also rewrites the
// statistics catalog (pg_statistic) where this role may (a superuser):
// elsewhere its old sample rows stay in the catalog's free space until the
// server reuses it. What it cannot reach is the server's: the
// write-ahead log (pg_wal, until its segments are recycled and
// overwritten), WAL archives, replicas, backups, and the blocks the old
// files held on disk.
func (s *Store) scrubPG(ctx context.Context, xid int64) string {
	var notOwned []string
	if err := s.db.SelectContext(ctx, &notOwned, `SELECT c.relname FROM pg_class c
		WHERE c.relname = ANY(string_to_array(?, ',')) AND c.relkind = 'r' AND pg_table_is_visible(c.oid)
			AND NOT pg_has_role(current_user, c.relowner, 'USAGE') ORDER BY c.relname`, strings.Join(forgetTables, ",")); err != nil {
		return "could not check who owns the tables: " + oneLine(err)
	}
	if len(notOwned) > 0 {
		return "this role does not own " + strings.Join(notOwned, ", ")
	}
	older := s.olderSnapshots(ctx, xid)
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return oneLine(err)
	}
	defer conn.Close()
	defer conn.Raw(func(any) error { return driver.ErrBadConn }) // its settings stay with it: never reused
	// A big team ledger takes minutes to rewrite: no statement_timeout,
	// and the client waits as long as a migration may take.
	ctx = withAnswerWait(ctx, pgMigrationTimeout)
	for _, set := range []string{`SET lock_timeout = '5s'`, `SET statement_timeout = 0`} {
		if _, err := conn.ExecContext(ctx, set); err != nil {
			return oneLine(err)
		}
	}
	if _, err := conn.ExecContext(ctx, `VACUUM (FULL, ANALYZE) `+strings.Join(forgetTables, ", ")); err != nil {
		return oneLine(err)
	}
	var super bool
	if conn.GetContext(ctx, &super, `SELECT rolsuper FROM pg_roles WHERE rolname = current_user`) == nil && super {
		conn.ExecContext(ctx, `VACUUM FULL pg_statistic`) // best effort: the rows above are gone either way
	}
	if len(older) > 0 {
		return fmt.Sprintf("a transaction open since before the forget (server process %s) may still read the rows, so the rewrite kept them; "+
			"their bytes stay until the tables are rewritten again (VACUUM FULL) after it ends", strings.Join(older, ", "))
	}
	return ""
}

// snapshotWait bounds how long scrubPG waits for transactions older than
// the forget to end.
const snapshotWait = 10 * time.Second

// olderSnapshots waits up to snapshotWait for the transactions of this
// database that began before transaction xid to end, and returns the
// server processes of those still open. Those of other roles are seen
// only by a role that may read the server's statistics.
func (s *Store) olderSnapshots(ctx context.Context, xid int64) []string {
	deadline := time.Now().Add(snapshotWait)
	for {
		var pids []string
		err := s.db.SelectContext(ctx, &pids, `SELECT pid::text FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_xmin IS NOT NULL
				AND age(backend_xmin) >= age((? % 4294967296)::text::xid) ORDER BY pid`, xid)
		if err != nil || len(pids) == 0 || time.Now().After(deadline) {
			return pids
		}
		select {
		case <-ctx.Done():
			return pids
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// forget deletes the sessions in one transaction, on a connection of its
// own with secure_delete on. (The pragma stays with this connection, which
// is closed rather than returned to the pool.)
// On PostgreSQL it also returns the id of the transaction that deleted
// (see scrubPG).
func (s *Store) forget(ctx context.Context, sessionIDs []string, dryRun bool) ([]Forgotten, int64, error) {
	if s.pg {
		tx, _, err := s.beginWritePG(ctx)
		if err != nil {
			return nil, 0, fmt.Errorf("begin: %w", err)
		}
		defer tx.Rollback()
		var xid int64
		if err := tx.GetContext(ctx, &xid, `SELECT txid_current()`); err != nil {
			return nil, 0, fmt.Errorf("forget: %w", err)
		}
		fs, err := s.forgetIn(ctx, tx, sessionIDs, dryRun)
		return fs, xid, err
	}
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close()
	defer conn.Raw(func(any) error { return driver.ErrBadConn }) // never reused: it has secure_delete on
	if !dryRun {
		if _, err := conn.ExecContext(ctx, `PRAGMA secure_delete = ON`); err != nil {
			return nil, 0, fmt.Errorf("secure delete: %w", err)
		}
	}
	tx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	fs, err := s.forgetIn(ctx, tx, sessionIDs, dryRun)
	return fs, 0, err
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
// empties the WAL into it. It reports false when a reader holding an old
// snapshot kept the WAL from being emptied (see truncateWAL).
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
	return truncateWAL(ctx, conn, scrubCheckpoints)
}

// scrubCheckpoints is how many TRUNCATE checkpoints forget tries, each
// waiting SQLite's busy timeout (5 s) for readers: a reader of the web
// view or the MCP server holds its snapshot for one request.
const scrubCheckpoints = 2

// truncateWAL copies the WAL into the database file and empties it
// (PRAGMA wal_checkpoint(TRUNCATE)), trying up to attempts times. A
// reader holding a snapshot older than the WAL's end keeps it from
// finishing: the database file then still has the pages the WAL's newer
// frames replace, and the WAL its older frames, until a checkpoint after
// that reader is done. It reports whether the WAL was emptied.
func truncateWAL(ctx context.Context, conn *sqlx.Conn, attempts int) (bool, error) {
	for i := 0; i < attempts; i++ {
		var busy, logFrames, done int64
		if err := conn.QueryRowxContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logFrames, &done); err != nil {
			return false, fmt.Errorf("checkpoint: %w", err)
		}
		if busy == 0 {
			return true, nil
		}
	}
	return false, nil
}
