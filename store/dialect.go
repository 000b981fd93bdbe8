package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/pressly/goose/v3"
)

// dialect is what one backend of the store does its own way: SQLite, a
// file on this machine (sqlite.go), or PostgreSQL, a team ledger on a
// server (postgres.go). Open chooses one from the location, once, as
// goose's dialect queriers and litestream's replica clients are chosen;
// nothing else in the store asks which backend it is on. The statements
// that differ are written out in each dialect's file, next to the code
// that runs them; every other statement is written once, in SQL both read
// (statement.go), and nothing rewrites SQL at run time.
//
// What a driver's errors mean is each backend's too (sqliteKind, pgKind:
// by result code and SQLSTATE), read by Kind.
type dialect interface {
	// location is where the ledger is, for people: the SQLite file's
	// path, or the server's URL without its password.
	location() string
	// shared tells whether many machines write the ledger (a team ledger
	// on a server): each keeps its own cursors there (cursorKey), and it
	// is where a sync pushes.
	shared() bool
	// version names the database engine and its version.
	version(ctx context.Context, db *sqlx.DB) (string, error)

	// target is the schema version the dialect's migrations reach.
	target() (int64, error)
	// migrator is goose's provider for the dialect's migrations.
	migrator(db *sqlx.DB) (migrator, error)
	// schemaVersion is the database's schema version (0 before the first
	// migration), read the cheapest way the backend has.
	schemaVersion(ctx context.Context, db *sqlx.DB) (int64, error)
	// markVersion records the schema version where schemaVersion reads it
	// first, when the backend keeps it anywhere but goose's table.
	markVersion(ctx context.Context, db *sqlx.DB, v int64, wait bool) error
	// noTable tells whether err is the database saying a table does not
	// exist.
	noTable(err error) bool
	// sessionTables are the tables whose rows name a session
	// (session_id), sessions aside.
	sessionTables() []string
	// cursorKey is the key of the cursors row of this machine's file at
	// path; cursorPath is the path of a key, and whether it is this
	// machine's.
	cursorKey(host, path string) string
	cursorPath(host, key string) (string, bool)

	// beginWrite begins a write transaction that holds the ledger's write
	// lock, waiting for it until the context's lock deadline
	// (WithLockDeadline) at the latest; past it, it fails with ErrBusy.
	// bulk is a big write (an ingest). done gives back what the
	// transaction ran on: call it once the transaction is over.
	beginWrite(ctx context.Context, db *sqlx.DB, bulk bool) (tx *sqlx.Tx, done func(), err error)
	// beginIngest begins the transaction of an ingest's writer (a bulk
	// beginWrite) and returns, where the backend copies rows in bulk, what
	// copies them in it (nil: insert them one by one).
	beginIngest(ctx context.Context, db *sqlx.DB) (tx *sqlx.Tx, done func(), copier rowCopier, err error)
	// holdBulk returns a context whose bulk writes (beginWrite) share
	// what holdBulk sets up for them once, where the backend has anything
	// to set up; release gives it back after the last of them.
	holdBulk(ctx context.Context, db *sqlx.DB) (bulkCtx context.Context, release func(), err error)
	// insertMessage prepares, in tx, the insert of a message row (columns
	// insertColumns; a message already there is not added again).
	insertMessage(ctx context.Context, tx *sqlx.Tx) (insertFunc, error)
	// indexMessages adds the messages with ids after after to the
	// full-text index.
	indexMessages(ctx context.Context, tx *sqlx.Tx, after int64) error
	// rowContext is the context of the statements a writer runs for one
	// record (a message row, its usage), from the ingest's: the same, or
	// one that does not end, where watching it costs more than the
	// statement and the ingest stops between records anyway.
	rowContext(ctx context.Context) context.Context
	// cachesStatements tells whether a writer prepares each statement it
	// runs once per transaction: where the driver parses a statement's
	// text at every call, rather than sending it in one round trip.
	cachesStatements() bool
	// textVector is, where the client computes the full-text index's
	// terms of a text it writes, those of text (a value for a tsv column
	// beside it) and true; else false, the backend indexing it itself.
	textVector(text string) (any, bool)

	// match is a query as the backend's full-text search takes it, every
	// word of a group needed (all) or any of them.
	match(q Query, all bool) string
	// rank is the best hits of each index of ixs for a search (without
	// snippets), index after index, scored when some of its terms may be
	// missing (see Search).
	rank(ctx context.Context, db *sqlx.DB, ixs []searchIndex, o SearchOptions, match string, scored bool) ([]Hit, error)
	// ftsSegments counts the segments of each full-text index.
	ftsSegments(ctx context.Context, db *sqlx.DB) (map[string]int64, error)
	// rebuildFTS rebuilds the full-text indexes from their tables;
	// mergeFTS merges each into one piece without what was deleted.
	rebuildFTS(ctx context.Context, tx *sqlx.Tx) error
	mergeFTS(ctx context.Context, tx *sqlx.Tx) error
	// settleSearch files what a big write left for the full-text
	// indexes to sort out at the next searches, where the backend leaves
	// any (Store.SettleSearch).
	settleSearch(ctx context.Context, db *sqlx.DB, written int) error

	// check checks the database and its full-text indexes (Health's
	// Integrity, FTS and ReadOnly).
	check(ctx context.Context, db *sqlx.DB, readOnly bool) (Health, error)
	// footprint is what the ledger takes on disk, once its WAL is emptied
	// where the ledger can empty it (walEmptied).
	footprint(ctx context.Context, db *sqlx.DB) (bytes int64, walEmptied bool, err error)
	// secureConn is a connection on which deletes and updates leave no
	// old bytes in the freed space where the backend can see to that;
	// release gives it up, never to the pool with a setting of its own.
	secureConn(ctx context.Context, db *sqlx.DB) (conn *sqlx.Conn, release func(), err error)
	// beginForget begins the write transaction of a forget (on a
	// secureConn where it matters) and returns what scrubForgotten needs
	// of it (xid).
	beginForget(ctx context.Context, db *sqlx.DB) (tx *sqlx.Tx, xid int64, done func(), err error)
	// scrubForgotten removes what a committed forget left of its rows in
	// the database's files.
	scrubForgotten(ctx context.Context, db *sqlx.DB, xid int64) (scrubbed, error)
	// scrubRescanned does the same after a rescan, on its connection.
	scrubRescanned(ctx context.Context, conn *sqlx.Conn) (walTruncated bool, err error)
}

// migrator is goose's provider for a store's dialect, and what closes the
// connections it was given.
type migrator struct {
	*goose.Provider
	close func()
	// timeout bounds a whole migration (0: the caller's context alone).
	timeout time.Duration
}

// rowCopier copies rows into a table in one round trip (PostgreSQL's
// COPY), redacting them as every write is (redactArgs).
type rowCopier interface {
	// reserveIDs takes n new ids of table's id column.
	reserveIDs(ctx context.Context, table string, n int) ([]int64, error)
	// copyRows adds rows, each holding a value per column.
	copyRows(ctx context.Context, table string, columns []string, rows [][]any) error
}

// insertFunc adds one message row: its id, and whether it was added (not
// already there).
type insertFunc func(ctx context.Context, args ...any) (id int64, added bool, err error)

// scrubbed is what scrubForgotten did (see Forgotten).
type scrubbed struct {
	rewritten    bool   // the tables or file were rewritten without the rows
	why          string // why they could not be
	walTruncated bool   // the WAL beside the data was emptied into it
}

// sessionTables are the tables, in both schemas, whose rows name a session
// (sessions.id aside).
var sessionTables = []string{"messages", "compactions", "handoffs", "notes", "cursors", "hook_receipts", "session_marks", "resume_states", "forgotten"}

// gooseVersion is the highest migration goose applied: 0 before the
// first, when goose's table does not exist yet.
func gooseVersion(ctx context.Context, db *sqlx.DB, d dialect) (int64, error) {
	var v sql.NullInt64
	err := db.GetContext(ctx, &v, `SELECT max(version_id) FROM goose_db_version WHERE is_applied`)
	if err != nil {
		if d.noTable(err) {
			return 0, nil
		}
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v.Int64, nil
}

// targetOf is the highest migration number in fsys.
func targetOf(fsys fs.FS) (int64, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return 0, err
	}
	var target int64
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		if !ok || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		if v, err := strconv.ParseInt(num, 10, 64); err == nil {
			target = max(target, v)
		}
	}
	return target, nil
}

// giveBack returns a connection of the store's own to the pool once reset
// (statements that put back what its user changed) has run on it, or
// discards it when reset fails: a connection must not go back to the pool
// with settings another user does not expect (a busy_timeout of 0,
// secure_delete on).
func giveBack(ctx context.Context, conn *sqlx.Conn, reset string) {
	if reset != "" {
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), reset); err != nil {
			discard(conn)
			return
		}
	}
	conn.Close()
}

// discard closes a connection of the store's own without returning it to
// the pool: database/sql drops a connection whose Raw says it is bad.
func discard(conn *sqlx.Conn) {
	conn.Raw(func(any) error { return driver.ErrBadConn })
	conn.Close()
}
