package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/pressly/goose/v3"
	"modernc.org/sqlite" // the pure-Go SQLite driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/agentledger/ledger/migrations"
)

// sqliteDialect is the ledger in a SQLite file on this machine (see
// dialect): FTS5 full text, pragmas on the connections, one writer at a
// time by SQLite's own lock.
type sqliteDialect struct {
	path string // the database file
}

func (d sqliteDialect) location() string { return d.path }
func (sqliteDialect) shared() bool       { return false }

// version is the SQLite library's version: its constant, as a query would
// make SQLite parse the schema first, which `ledger version` has no other
// use for.
func (sqliteDialect) version(context.Context, *sqlx.DB) (string, error) {
	return sqlite3.SQLITE_VERSION, nil
}

// persistWAL keeps the -wal and -shm files when the last connection
// closes (SQLITE_FCNTL_PERSIST_WAL). SQLite would otherwise delete them,
// and every ledger process, most of which read a few rows and exit, would
// create both again: 0.15 ms of every command's start-up. The WAL is
// still emptied: journal_size_limit (in the DSN) has SQLite truncate it
// to nothing when the last connection's checkpoint completes.
func persistWAL(c sqlite.ExecQuerierContext, _ string) error {
	if fc, ok := c.(sqlite.FileControl); ok {
		fc.FileControlPersistWAL("main", 1)
	}
	return nil
}

// DSN returns the connection string for the database at path. The pragmas
// run on every pooled connection: WAL so readers never block the writer,
// busy_timeout so concurrent writers wait instead of failing, immediate
// transactions so a read-then-write transaction takes the write lock up
// front (deferred ones fail with SQLITE_BUSY at once, busy_timeout or not),
// journal_size_limit so that the WAL, which is kept (see persistWAL), is
// cut back to 64 MB when it restarts and emptied when the last connection
// closes.
func DSN(path string) string {
	u := url.URL{Scheme: "file", Opaque: (&url.URL{Path: path}).EscapedPath()}
	return u.String() + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)" +
		"&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_pragma=journal_size_limit(67108864)" +
		"&_txlock=immediate&_time_format=sqlite"
}

// defaultBusyTimeout is the DSN's busy_timeout, in milliseconds.
const defaultBusyTimeout = 5000

// Schema.

func (sqliteDialect) target() (int64, error) { return targetOf(migrations.FS) }

func (d sqliteDialect) migrator(db *sqlx.DB) (migrator, error) {
	p, err := goose.NewProvider(goose.DialectSQLite3, db.DB, migrations.FS, goose.WithLocker(&migrationLock{path: d.path}))
	if err != nil {
		return migrator{}, fmt.Errorf("load migrations: %w", err)
	}
	return migrator{Provider: p, close: func() {}}, nil
}

// schemaVersion reads the schema version. A SQLite ledger keeps it in its
// header's user_version too (markVersion): reading that parses no schema,
// which `ledger version` and every other start would pay for (~0.5 ms);
// goose's table is read when the mark is absent (a ledger made before it,
// or one being migrated).
func (d sqliteDialect) schemaVersion(ctx context.Context, db *sqlx.DB) (int64, error) {
	var mark int64
	if err := db.GetContext(ctx, &mark, `PRAGMA user_version`); err == nil && mark > 0 {
		return mark, nil
	}
	return gooseVersion(ctx, db, d)
}

// markVersion records the schema version in the header's user_version
// (see schemaVersion), when it is not there yet: once per migration, so
// that an open that finds the schema current writes nothing. Version 0
// clears it. Setting it is a write: with wait false it is tried without
// waiting for the write lock (an open of a ledger made before the mark,
// while another process writes, must not wait busy_timeout for an
// optimisation), and left for a later open when the lock is taken.
func (sqliteDialect) markVersion(ctx context.Context, db *sqlx.DB, v int64, wait bool) error {
	var mark int64
	if err := db.GetContext(ctx, &mark, `PRAGMA user_version`); err != nil {
		return fmt.Errorf("read schema version mark: %w", err)
	}
	if mark == v {
		return nil
	}
	conn, err := db.Connx(ctx)
	if err != nil {
		return fmt.Errorf("mark schema version: %w", err)
	}
	reset := ""
	if !wait {
		if _, err := conn.ExecContext(ctx, `PRAGMA busy_timeout = 0`); err != nil {
			discard(conn)
			return fmt.Errorf("mark schema version: %w", err)
		}
		reset = fmt.Sprintf(`PRAGMA busy_timeout = %d`, defaultBusyTimeout)
	}
	defer giveBack(ctx, conn, reset)
	if _, err := conn.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, v)); err != nil {
		if !wait && IsBusy(err) {
			return nil
		}
		return fmt.Errorf("mark schema version: %w", err)
	}
	return nil
}

// noTable tells whether err is SQLite saying a table does not exist. SQLite
// has no result code of its own for that: it is SQLITE_ERROR, and its
// message says which.
func (sqliteDialect) noTable(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code() == sqlite3.SQLITE_ERROR && strings.Contains(e.Error(), "no such table")
}

func (sqliteDialect) sessionTables() []string { return sessionTables }

// A SQLite ledger is this machine's: a cursor is keyed by its path.
func (sqliteDialect) cursorKey(_, path string) string         { return path }
func (sqliteDialect) cursorPath(_, key string) (string, bool) { return key, true }

// Writes.

// Settings of an ingest's connection, set before its transaction begins and
// put back when it ends (the connection returns to the pool):
//
//   - cache_size: a big transaction spills pages to disk once the default
//     2 MB page cache fills; 32 MB measured best of time and memory.
//   - temp_store MEMORY: the statement journal that each INSERT ... ON
//     CONFLICT keeps (it may have to undo itself) goes to memory, not to a
//     temporary file (7-9% of an ingest).
//   - wal_autocheckpoint: a commit that leaves the WAL above 1,000 pages (4
//     MB) copies it into the database; an ingest commits every few
//     thousand messages, so it checkpoints at 16,384 pages (64 MB) instead,
//     and less often.
const (
	ingestPragmas = `PRAGMA cache_size = -32768; PRAGMA temp_store = MEMORY; PRAGMA wal_autocheckpoint = 16384`
	resetPragmas  = `PRAGMA cache_size = -2000; PRAGMA temp_store = DEFAULT; PRAGMA wal_autocheckpoint = 1000`
)

// beginWrite begins an immediate transaction (the DSN's _txlock): it holds
// SQLite's write lock from its start, waiting busy_timeout for it. A bulk
// write (an ingest) runs on a connection of its own with ingestPragmas.
// Under a lock deadline (WithLockDeadline) the transaction runs on a
// connection of its own whose busy_timeout ends at the deadline. done gives
// such a connection back once the transaction is over (call it after
// Commit or Rollback), its settings restored, or discards it when they
// cannot be.
func (sqliteDialect) beginWrite(ctx context.Context, db *sqlx.DB, bulk bool) (*sqlx.Tx, func(), error) {
	by, deadline := lockDeadline(ctx)
	if bulk {
		if h := heldBulk(ctx, db); h != nil {
			return h.begin(ctx, by, deadline)
		}
	}
	if !deadline && !bulk {
		tx, err := db.BeginTxx(ctx, nil)
		return tx, func() {}, err
	}
	var setup, reset []string
	if bulk {
		setup, reset = append(setup, ingestPragmas), append(reset, resetPragmas)
	}
	if deadline {
		wait := max(0, time.Until(by).Milliseconds())
		setup = append(setup, fmt.Sprintf(`PRAGMA busy_timeout = %d`, wait))
		reset = append(reset, fmt.Sprintf(`PRAGMA busy_timeout = %d`, defaultBusyTimeout))
	}
	conn, err := db.Connx(ctx)
	if err != nil {
		return nil, nil, err
	}
	done := func() { giveBack(ctx, conn, strings.Join(reset, "; ")) }
	if _, err := conn.ExecContext(ctx, strings.Join(setup, "; ")); err != nil {
		done()
		return nil, nil, err
	}
	tx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		done()
		return nil, nil, err
	}
	return tx, done, nil
}

// beginIngest begins an ingest's transaction (beginWrite's bulk). SQLite
// has no bulk copy: a row by INSERT is a function call, not a round trip.
func (d sqliteDialect) beginIngest(ctx context.Context, db *sqlx.DB) (*sqlx.Tx, func(), rowCopier, error) {
	tx, done, err := d.beginWrite(ctx, db, true)
	return tx, done, nil, err
}

// bulkConn is the connection an ingest holds for all its transactions
// (holdBulk), ingestPragmas set on it once. Setting them for each
// transaction and putting them back after it cost an ingest 7% of its CPU:
// shrinking the page cache frees its pages one by one, and the next
// transaction faults them in again.
type bulkConn struct {
	db   *sqlx.DB
	mu   sync.Mutex // held by the transaction running on conn
	conn *sqlx.Conn // nil once released
}

type bulkKey struct{}

// heldBulk is the connection ctx holds for db's bulk writes, if any.
func heldBulk(ctx context.Context, db *sqlx.DB) *bulkConn {
	if h, ok := ctx.Value(bulkKey{}).(*bulkConn); ok && h.db == db {
		return h
	}
	return nil
}

// holdBulk takes a connection of db for the bulk writes made with the
// returned context, with ingestPragmas; release puts them back and
// returns it to the pool once the last of those transactions is over.
func (sqliteDialect) holdBulk(ctx context.Context, db *sqlx.DB) (context.Context, func(), error) {
	conn, err := bulkConnection(ctx, db)
	if err != nil {
		return ctx, func() {}, err
	}
	h := &bulkConn{db: db, conn: conn}
	var once sync.Once
	release := func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.conn != nil { // nil: discarded, or not taken again (begin)
				giveBack(ctx, h.conn, resetPragmas)
				h.conn = nil
			}
		})
	}
	return context.WithValue(ctx, bulkKey{}, h), release, nil
}

// bulkConnection takes a connection of db for bulk writes and sets
// ingestPragmas on it.
func bulkConnection(ctx context.Context, db *sqlx.DB) (*sqlx.Conn, error) {
	conn, err := db.Connx(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, ingestPragmas); err != nil {
		giveBack(ctx, conn, resetPragmas)
		return nil, err
	}
	return conn, nil
}

// begin begins a transaction on the held connection, with a busy_timeout
// that ends at by under a lock deadline; done lets the next one begin.
// After release it begins one as beginWrite does without a held
// connection.
func (h *bulkConn) begin(ctx context.Context, by time.Time, deadline bool) (*sqlx.Tx, func(), error) {
	h.mu.Lock()
	if h.conn == nil {
		h.mu.Unlock()
		return sqliteDialect{}.beginWrite(context.WithValue(ctx, bulkKey{}, nil), h.db, true)
	}
	conn := h.conn
	done := func() {
		// database/sql rolls back a transaction whose context ended in a
		// goroutine of its own, and Rollback, called meanwhile, returns
		// at once (sql.ErrTxDone): the connection may still be in the
		// transaction, and the next BEGIN on it would fail ("cannot
		// start a transaction within a transaction"). Closing it waits
		// for that rollback (the transaction holds the connection until
		// it is over); the next transactions run on one taken again.
		if ctx.Err() != nil && h.conn != nil {
			giveBack(ctx, h.conn, resetPragmas)
			h.conn, _ = bulkConnection(context.WithoutCancel(ctx), h.db)
		}
		h.mu.Unlock()
	}
	if deadline {
		wait := max(0, time.Until(by).Milliseconds())
		if _, err := conn.ExecContext(ctx, fmt.Sprintf(`PRAGMA busy_timeout = %d`, wait)); err != nil {
			done()
			return nil, nil, err
		}
		unlock := done
		done = func() {
			// A connection whose busy_timeout cannot be put back is not
			// used again: the ingest's next transactions get their own.
			if _, err := conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf(`PRAGMA busy_timeout = %d`, defaultBusyTimeout)); err != nil {
				discard(conn)
				h.conn = nil
			}
			unlock()
		}
	}
	tx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		done()
		return nil, nil, err
	}
	return tx, done, nil
}

// insertMessage prepares the insert of a message row. SQLite reports the
// new row's id (LastInsertId), and a message already there as no row
// affected: no RETURNING, whose rows cost three times the allocations.
// Its parameters are anonymous (?): the driver looks up the name of each
// parameter at every call, and a $N name is a string it allocates and
// parses, 20 times a row.
func (sqliteDialect) insertMessage(ctx context.Context, tx *sqlx.Tx) (insertFunc, error) {
	st, err := tx.PreparexContext(ctx, `INSERT INTO messages (`+insertColumns+`) VALUES (`+
		strings.Repeat("?, ", insertColumnCount-1)+`?) ON CONFLICT (session_id, uuid) DO NOTHING`)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, args ...any) (int64, bool, error) {
		res, err := st.ExecContext(ctx, args...)
		if err != nil {
			return 0, false, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return 0, false, nil
		}
		id, _ := res.LastInsertId()
		return id, true, nil
	}, nil
}

// rowContext is ctx without its end. modernc's driver watches the context
// of every statement that can end with a goroutine of its own (and a
// progress handler), to interrupt SQLite when it does: for a statement that
// writes one row in microseconds, on a transaction that holds the write
// lock already (so it waits for nothing), that goroutine, its start and its
// wake-up were about 7% of an ingest's CPU. The ingest still stops at
// once: its reader and its loop check ctx between records, and
// database/sql rolls the transaction back when ctx ends (BeginTx's).
func (sqliteDialect) rowContext(ctx context.Context) context.Context {
	if ctx.Done() == nil {
		return ctx
	}
	return context.WithoutCancel(ctx)
}

// textVector: FTS5's triggers index what is written.
func (sqliteDialect) textVector(string) (any, bool) { return nil, false }

// cachesStatements: modernc's driver parses the text of a statement that
// is not prepared at every call, in Go (~0.2 ms for a compaction's
// UPDATE); prepared, it binds and steps.
func (sqliteDialect) cachesStatements() bool { return true }

// indexMessages adds the messages with ids after after to their FTS5
// index in one statement: FTS5 writes an index segment per statement, and
// merges segments as they pile up.
func (sqliteDialect) indexMessages(ctx context.Context, tx *sqlx.Tx, after int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO messages_fts (rowid, text) SELECT id, text FROM messages WHERE id > $1`, after)
	return err
}

// Full text.

// ftsTables are the full-text indexes, each over its content table.
var ftsTables = []string{"messages_fts", "handoffs_fts", "compactions_fts", "notes_fts"}

// match is the query as an FTS5 MATCH expression.
func (sqliteDialect) match(q Query, all bool) string { return q.render(ftsSyntax, all) }

// rank returns each index's best hits for a search (rankIndex).
func (d sqliteDialect) rank(ctx context.Context, db *sqlx.DB, ixs []searchIndex, o SearchOptions, match string, scored bool) ([]Hit, error) {
	var hits []Hit
	for _, ix := range ixs {
		h, err := d.rankIndex(ctx, db, ix, o, match, scored)
		if err != nil {
			return nil, err
		}
		hits = append(hits, h...)
	}
	return hits, nil
}

// rankIndex returns an index's best hits for a search, without their
// snippets.
//
// FTS5 hands out a MATCH's rows newest first (by rowid, the order rows were
// stored in) at about 0.4 µs a row and stops at the LIMIT, whatever the
// number of matches: the candidates are the newest matches that pass the
// filters. A query whose words must all match keeps the newest limit of
// them, each scored by how many terms it has. Otherwise rank takes the
// newest scoreWindow matches, finds which of the query's terms each holds
// (one rowid-range walk per term), and scores each match by the terms it
// holds (scoreHeld).
//
// FTS5's bm25() is not used: it computes each term's IDF by counting every
// row of the whole index that matches it, once per query, which for a
// common word at a million messages is 80% of a search.
func (d sqliteDialect) rankIndex(ctx context.Context, db *sqlx.DB, ix searchIndex, o SearchOptions, match string, scored bool) ([]Hit, error) {
	terms := o.Query.terms()
	n := o.Limit
	if scored && len(terms) > 1 {
		n = max(n, scoreWindow)
	} else {
		scored = false
	}
	var q query
	q.add("SELECT t.session_id, '" + ix.kind + "' AS kind, t.id, t." + ix.at + " AS at, " + ix.role + " AS role FROM " + ix.fts +
		" JOIN " + ix.table + " t ON t.id = " + ix.fts + ".rowid WHERE " + ix.fts + " MATCH " + q.arg(match) + ix.where)
	if o.SessionID != "" {
		// The session's rows lie between its first and last id: FTS5 seeks
		// there instead of walking every newer match.
		var lo, hi sql.NullInt64
		if err := db.QueryRowxContext(ctx, `SELECT min(id), max(id) FROM `+ix.table+` WHERE session_id = $1`, o.SessionID).Scan(&lo, &hi); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		if !lo.Valid {
			return nil, nil
		}
		q.add(" AND " + ix.fts + ".rowid BETWEEN " + strconv.FormatInt(lo.Int64, 10) + " AND " + strconv.FormatInt(hi.Int64, 10) +
			" AND t.session_id = " + q.arg(o.SessionID))
	}
	o.scopeFilters(&q, ix)
	var hits []Hit
	var err error
	if !scored && o.SessionID == "" && o.Query.tokens() > 1 && o.Query.numbered() {
		hits, err = d.newestOfFew(ctx, db, ix, &q, n)
	} else {
		hits, err = d.newest(ctx, db, ix, &q, n)
	}
	if err != nil {
		return nil, err
	}
	for i := range hits {
		hits[i].Score = float64(len(terms))
	}
	if !scored || len(hits) == 0 {
		return hits, nil
	}
	if err := d.score(ctx, db, ix, hits, terms); err != nil {
		return nil, err
	}
	slices.SortStableFunc(hits, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) })
	return hits[:min(len(hits), o.Limit)], nil
}

// newest runs q (rank's statement so far) for its newest n matches.
func (sqliteDialect) newest(ctx context.Context, db *sqlx.DB, ix searchIndex, q *query, n int) ([]Hit, error) {
	// The LIMIT is written into the statement, not bound: SQLite prepares
	// a statement again once a value bound to a LIMIT is known.
	return selectHits(ctx, db, q.String()+" ORDER BY "+ix.fts+".rowid DESC LIMIT "+strconv.Itoa(n), q.args...)
}

// newestOfFew is newest for a query of several words one of which holds a
// digit (an id, a number, a hash: words that match seldom). FTS5 serves
// such a query slowly newest first however seldom its words match
// together: it reads each word's whole match list to walk it backwards (a
// rare identifier of common words, withRetry/case_33516 at a million
// messages: 0.87 ms newest first, 0.08 ms oldest first). So it first asks
// for n+1 matches oldest first: when there are no more than n, those are
// all of them; else it asks for the newest n, as newest does. That first
// statement costs a query that matches often 0.5-1 ms in a new process,
// which is why words without a digit go newest first at once.
func (d sqliteDialect) newestOfFew(ctx context.Context, db *sqlx.DB, ix searchIndex, q *query, n int) ([]Hit, error) {
	hits, err := selectHits(ctx, db, q.String()+" ORDER BY "+ix.fts+".rowid LIMIT "+strconv.Itoa(n+1), q.args...)
	if err != nil {
		return nil, err
	}
	if len(hits) > n {
		return d.newest(ctx, db, ix, q, n)
	}
	slices.Reverse(hits)
	return hits, nil
}

// score scores hits (an index's candidates, newest first) by the terms
// each holds (see rank).
func (sqliteDialect) score(ctx context.Context, db *sqlx.DB, ix searchIndex, hits []Hit, terms []term) error {
	lo, hi := hits[len(hits)-1].ID, hits[0].ID
	held := make([]map[int64]bool, len(terms))
	for i, t := range terms {
		held[i] = map[int64]bool{}
		rows, err := db.QueryContext(ctx, `SELECT rowid FROM `+ix.fts+` WHERE `+ix.fts+` MATCH $1 AND rowid BETWEEN $2 AND $3`,
			t.fts(), lo, hi)
		if err != nil {
			return fmt.Errorf("search: %w", err)
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return fmt.Errorf("search: %w", err)
			}
			held[i][id] = true
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("search: %w", err)
		}
	}
	scoreHeld(hits, held)
	return nil
}

// ftsSegments counts the segments of each FTS5 index (see
// Store.FTSSegments).
func (sqliteDialect) ftsSegments(ctx context.Context, db *sqlx.DB) (map[string]int64, error) {
	out := map[string]int64{}
	for _, t := range ftsTables {
		var n int64
		if err := db.GetContext(ctx, &n, `SELECT count(DISTINCT segid) FROM `+t+`_idx`); err != nil {
			return nil, fmt.Errorf("count segments of %s: %w", t, err)
		}
		out[t] = n
	}
	return out, nil
}

// rebuildFTS rebuilds every FTS5 index from its content table.
func (sqliteDialect) rebuildFTS(ctx context.Context, tx *sqlx.Tx) error {
	return ftsCommand(ctx, tx, "rebuild")
}

// mergeFTS merges each FTS5 index into one segment ('optimize'). FTS5
// deletes by adding tombstones: the terms stay in the segments until they
// are merged, and the merge leaves them out. (FTS5's 'secure-delete'
// option, which removes them from the segments at each delete, measured
// twice as slow.)
func (sqliteDialect) mergeFTS(ctx context.Context, tx *sqlx.Tx) error {
	return ftsCommand(ctx, tx, "optimize")
}

// settleMessages is the least write settleSearch merges after: an
// ingest's transaction.
const settleMessages = 10_000

// settleSearch merges, after a write of settleMessages messages or more,
// the segments of each full-text index that FTS5 left for its later
// writes to merge, writing at most a page a message written per index
// (FTS5's 'merge', as far as each index's usermerge lets it: migration
// 00016). FTS5 writes an ingest's messages out at its commit, one segment
// a transaction, and merges 8 segments at a time, a little at every
// write: an ingest of 100k messages left a merge half done, 11 segments
// where it makes 3. It writes a small index (compactions, handoffs,
// notes) a segment at every statement that adds a row, merged 4 at a
// time: 18 segments of compactions at 100k. A search looks up each of its
// words in every segment of every index: in a new process, a path's
// search read 180 pages instead of 255 once they were merged (~1 ms
// less), a rare identifier's statement on the compactions' index took
// 0.19 ms instead of 0.47. The merges took 70-80 ms at 100k messages,
// 0.1 s of the compactions' at 1M, work later writes would have done. A smaller
// write (a hook's) leaves it to them, a little each, as before: it must
// not pay for a big merge. It waits for another writer's lock as ctx
// allows (WithLockDeadline).
func (d sqliteDialect) settleSearch(ctx context.Context, db *sqlx.DB, written int) error {
	if written < settleMessages {
		return nil
	}
	tx, done, err := d.beginWrite(ctx, db, false)
	if err != nil {
		return fmt.Errorf("settle the search indexes: %w", err)
	}
	defer done()
	defer tx.Rollback()
	if err := ftsCommand(ctx, tx, "merge", written); err != nil {
		return fmt.Errorf("settle the search indexes: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("settle the search indexes: %w", err)
	}
	return nil
}

// ftsCommand runs an FTS5 special command on every index, with its
// argument (FTS5's rank column: 'merge' takes a number of pages) if any.
func ftsCommand(ctx context.Context, tx *sqlx.Tx, cmd string, arg ...any) error {
	for _, t := range ftsTables {
		stmt := `INSERT INTO ` + t + ` (` + t + `) VALUES ('` + cmd + `')`
		if len(arg) > 0 {
			stmt = `INSERT INTO ` + t + ` (` + t + `, rank) VALUES ('` + cmd + `', $1)`
		}
		if _, err := tx.ExecContext(ctx, stmt, arg...); err != nil {
			return fmt.Errorf("%s %s: %w", cmd, t, err)
		}
	}
	return nil
}

// Maintenance.

// check runs SQLite's integrity_check, and FTS5's integrity-check on every
// index unless the store is read-only: FTS5's check is a write, so a
// read-only ledger's indexes are checked by integrity_check alone (which
// checks FTS5 tables' structure too).
func (sqliteDialect) check(ctx context.Context, db *sqlx.DB, readOnly bool) (Health, error) {
	h := Health{ReadOnly: readOnly, FTS: "ok"}
	var problems []string
	if err := db.SelectContext(ctx, &problems, `PRAGMA integrity_check`); err != nil {
		return h, fmt.Errorf("integrity check: %w", err)
	}
	h.Integrity = strings.Join(problems, "; ")
	var fts []string
	for _, t := range ftsTables {
		if readOnly {
			break
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO `+t+` (`+t+`, rank) VALUES ('integrity-check', 1)`); err != nil {
			fts = append(fts, t+": "+err.Error())
		}
	}
	if len(fts) > 0 {
		h.FTS = strings.Join(fts, "; ")
	}
	return h, nil
}

// footprint is the size of the database file and its WAL, once the WAL
// was emptied into the file where it can be (emptyWAL).
func (d sqliteDialect) footprint(ctx context.Context, _ *sqlx.DB) (int64, bool, error) {
	emptied := d.emptyWAL(ctx)
	var bytes int64
	for _, p := range []string{d.path, d.path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			bytes += fi.Size()
		}
	}
	return bytes, emptied, nil
}

// emptyWAL copies the WAL into the database file and empties it, on a
// read-write connection of its own (doctor reads through a read-only
// store), once: what finishes a forget that a reader held up. It reports
// whether it could; a ledger this process cannot write cannot.
func (d sqliteDialect) emptyWAL(ctx context.Context) bool {
	if _, err := os.Stat(d.path + "-wal"); err != nil || !writableFolder(filepath.Dir(d.path)) {
		return false
	}
	db, err := sqlx.Open("sqlite", DSN(d.path)+"&mode=rw")
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

// secureConn is a connection of its own with secure_delete on: SQLite
// zeroes what deletes and updates free. release discards it, so that the
// pragma never reaches another user of the pool.
func (sqliteDialect) secureConn(ctx context.Context, db *sqlx.DB) (*sqlx.Conn, func(), error) {
	conn, err := db.Connx(ctx)
	if err != nil {
		return nil, nil, err
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA secure_delete = ON`); err != nil {
		discard(conn)
		return nil, nil, fmt.Errorf("secure delete: %w", err)
	}
	return conn, func() { discard(conn) }, nil
}

// beginForget begins a forget's transaction on a connection of its own with
// secure_delete on (secureConn).
func (d sqliteDialect) beginForget(ctx context.Context, db *sqlx.DB) (*sqlx.Tx, int64, func(), error) {
	conn, release, err := d.secureConn(ctx, db)
	if err != nil {
		return nil, 0, nil, err
	}
	tx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		release()
		return nil, 0, nil, err
	}
	return tx, 0, release, nil
}

// scrubForgotten rewrites the database file without its free pages
// (VACUUM), where pages freed by earlier merges and updates, which were
// not zeroed, may hold a forgotten session's text, and empties the WAL into
// it. walTruncated is false when a reader holding an old snapshot kept the
// WAL from being emptied (see truncateWAL).
func (sqliteDialect) scrubForgotten(ctx context.Context, db *sqlx.DB, _ int64) (scrubbed, error) {
	conn, err := db.Connx(ctx)
	if err != nil {
		return scrubbed{}, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close()
	truncated, err := vacuum(ctx, conn, scrubCheckpoints)
	return scrubbed{rewritten: err == nil, walTruncated: truncated}, err
}

// scrubCheckpoints is how many TRUNCATE checkpoints forget tries, each
// waiting SQLite's busy timeout (5 s) for readers: a reader of the web
// view or the MCP server holds its snapshot for one request.
const scrubCheckpoints = 2

// scrubRescanned rewrites the file after a rescan (VACUUM, on the rescan's
// connection, secure_delete on) and empties the WAL, once.
func (sqliteDialect) scrubRescanned(ctx context.Context, conn *sqlx.Conn) (bool, error) {
	return vacuum(ctx, conn, 1)
}

// vacuum rewrites the database file without its free pages and tries a
// TRUNCATE checkpoint up to checkpoints times (truncateWAL).
func vacuum(ctx context.Context, conn *sqlx.Conn, checkpoints int) (bool, error) {
	if err := Retry(ctx, func() error {
		_, err := conn.ExecContext(ctx, `VACUUM`)
		return err
	}); err != nil {
		return false, fmt.Errorf("vacuum: %w", err)
	}
	return truncateWAL(ctx, conn, checkpoints)
}

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

// Errors.

// sqliteKind is the kind of a SQLite error (see kindError): the database
// or a table locked by another connection past busy_timeout
// (SQLITE_BUSY, SQLITE_LOCKED and their extended codes) is ErrBusy; a
// write the database refuses (SQLITE_READONLY and its extended codes) is
// ErrReadOnly. Any other error has none (nil).
func sqliteKind(err error) error {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return nil
	}
	switch e.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return ErrBusy
	case sqlite3.SQLITE_READONLY:
		return ErrReadOnly
	}
	return nil
}

// readOnlySQLite tells whether err is SQLite unable to write the database
// or to keep its WAL and shared-memory files beside it: SQLITE_READONLY and
// its extended codes, or SQLITE_CANTOPEN.
func readOnlySQLite(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code() & 0xff {
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN:
		return true
	}
	return false
}

// notADatabase is err, or a NotLedgerError when it is SQLite finding that
// the file is no database (SQLITE_NOTADB).
func notADatabase(path string, err error) error {
	var e *sqlite.Error
	if errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_NOTADB {
		return &NotLedgerError{Location: path, Why: "is not a SQLite database: give a ledger's path, or that of a file to create"}
	}
	return err
}
