package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jmoiron/sqlx"
	"github.com/pressly/goose/v3"

	pgmigrations "github.com/agentledger/ledger/migrations/postgres"
)

// postgresDialect is a team ledger on a PostgreSQL server (see dialect),
// which many machines share: full text in tsvector columns written with
// their rows (pgtsv.go), one writer at a time by an advisory lock, the
// server's own files and maintenance.
type postgresDialect struct {
	url string // the server's URL, password and all
}

// location is the server's URL without its password.
func (d postgresDialect) location() string { return RedactURL(d.url) }
func (postgresDialect) shared() bool       { return true }

// version is the server's version.
func (postgresDialect) version(ctx context.Context, db *sqlx.DB) (string, error) {
	var v string
	if err := db.GetContext(ctx, &v, `SHOW server_version`); err != nil {
		return "", fmt.Errorf("read server version: %w", err)
	}
	return "PostgreSQL " + v, nil
}

// WithLocalPath gives a PostgreSQL store the path Path returns: where the
// files ledger keeps beside its database (handoff Markdown, handoffs
// waiting for the lock) go on this machine. A SQLite store ignores it.
func WithLocalPath(path string) Option { return func(s *Store) { s.localPath = path } }

// RedactURL is a PostgreSQL URL with its password (in the user part or a
// password parameter) replaced, for messages.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "postgres://…"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// openPostgres opens (and migrates, unless read-only) the ledger on the
// PostgreSQL server of s's dialect. A read-only store's connections are
// read-only sessions (default_transaction_read_only), so a front door that
// promises to read cannot write.
func openPostgres(ctx context.Context, s *Store, d postgresDialect) (*Store, error) {
	dsn := withTimeouts(d.url)
	if s.readOnly {
		dsn = withParam(dsn, "default_transaction_read_only", "on")
	}
	conn, err := pgDriver{redactor: s.redactor}.OpenConnector(dsn)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", d.location(), err)
	}
	db := sqlx.NewDb(sql.OpenDB(conn), pgDriverName)
	// Every process is one of many clients of a shared server: keep few
	// connections, and none idle for long.
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(2)
	db.SetConnMaxIdleTime(time.Minute)
	s.db = db
	// The schema's version is the first statement: it makes the
	// connection and tells whether the server answers, as a ping before
	// it did at the cost of one more round trip.
	have, err := gooseVersion(ctx, db, d)
	if err != nil {
		db.Close()
		if cause := errors.Unwrap(err); cause != nil {
			err = cause // the connection's error, as a ping gives it
		}
		return nil, fmt.Errorf("open database %s: %s", d.location(), oneLine(err))
	}
	if s.readOnly {
		want, _ := d.target()
		if have < want {
			var rw *Store
			if rw, err = Open(ctx, d.url, WithoutRedaction()); err == nil {
				rw.Close()
			}
		}
		if err != nil {
			db.Close()
			return nil, err
		}
		return s, nil
	}
	if err := s.migrateFrom(ctx, have); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", " ") }

// withParam adds a run-time parameter to a PostgreSQL URL.
func withParam(raw, key, value string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// Schema.

func (postgresDialect) target() (int64, error) { return targetOf(pgmigrations.FS) }

// migrator is goose's provider for the PostgreSQL migrations. It runs on a
// plain pgx connection pool of its own, without a statement_timeout: a
// migration may build an index over a big team ledger for minutes. The
// whole of it is bounded by pgMigrationTimeout instead, so that a server
// that stops answering mid-migration does not hang the command.
func (d postgresDialect) migrator(*sqlx.DB) (migrator, error) {
	db, err := sql.Open("pgx", withTimeouts(withParam(d.url, "statement_timeout", "0")))
	if err != nil {
		return migrator{}, err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, pgmigrations.FS)
	if err != nil {
		db.Close()
		return migrator{}, fmt.Errorf("load migrations: %w", err)
	}
	return migrator{Provider: p, close: func() { db.Close() }, timeout: pgMigrationTimeout}, nil
}

// schemaVersion is goose's version: a server has no header to mark.
func (d postgresDialect) schemaVersion(ctx context.Context, db *sqlx.DB) (int64, error) {
	return gooseVersion(ctx, db, d)
}

func (postgresDialect) markVersion(context.Context, *sqlx.DB, int64, bool) error { return nil }

// noTable tells whether err is PostgreSQL's undefined_table (42P01).
func (postgresDialect) noTable(err error) bool { return pgCode(err) == "42P01" }

// sessionTables: the team ledger keeps how far each machine pushed each
// session too (sync_marks).
func (postgresDialect) sessionTables() []string {
	return append(slices.Clip(sessionTables), "sync_marks")
}

// A team ledger's cursors are keyed host:path: a transcript's path is a
// path on one machine, and each machine keeps its own.
func (postgresDialect) cursorKey(host, path string) string { return host + ":" + path }
func (postgresDialect) cursorPath(host, key string) (string, bool) {
	return strings.CutPrefix(key, host+":")
}

// Writes.

// holdBulk holds nothing: a PostgreSQL write needs no settings of its own.
func (postgresDialect) holdBulk(ctx context.Context, _ *sqlx.DB) (context.Context, func(), error) {
	return ctx, func() {}, nil
}

// pgWriteLock is the key of the advisory lock every PostgreSQL write
// transaction takes first (see beginWrite).
const pgWriteLock = 0x6c6564676572 // "ledger"

// beginWrite begins a write transaction. It first takes a
// transaction-level advisory lock that all ledger writers share, so that
// writes are serialised as SQLite's immediate transactions are: a writer
// reads what it builds on (a session's last seq, its counts) and writes in
// the same transaction, and two machines ingesting the same transcript at
// once must not both number its messages from the same seq. Rows are still
// written with ON CONFLICT, so that a writer that read before another
// committed adds nothing twice. Under a lock deadline (a hook's budget) it
// waits for the lock until then (lock_timeout), and fails as busy
// (ErrBusy). A bulk write is no different.
func (postgresDialect) beginWrite(ctx context.Context, db *sqlx.DB, _ bool) (*sqlx.Tx, func(), error) {
	tx, err := pgBegin(ctx, db)
	if err != nil {
		return nil, nil, err
	}
	return tx, func() {}, nil
}

// txBeginner is what a transaction begins on: the pool, or one connection.
type txBeginner interface {
	BeginTxx(ctx context.Context, opts *sql.TxOptions) (*sqlx.Tx, error)
}

// hookPendingList is the GIN pending list limit of a write under a lock
// deadline (a hook's): a hook that finds more pending files it into the
// index, a few milliseconds, so that the searches of a team ledger written
// by hooks do not each read up to the default 4 MB of it (about 60 ms at
// 100k messages). Other writes keep the server's limit and settle the
// list once done (Store.SettleSearch).
const hookPendingList = "256kB"

// pgBegin begins a write transaction on db (see beginWrite).
func pgBegin(ctx context.Context, db txBeginner) (*sqlx.Tx, error) {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return nil, err
	}
	if by, ok := lockDeadline(ctx); ok {
		wait := max(1, time.Until(by).Milliseconds())
		if _, err := tx.ExecContext(ctx, `SELECT set_config('lock_timeout', $1, true), set_config('gin_pending_list_limit', $2, true)`,
			strconv.FormatInt(wait, 10)+"ms", hookPendingList); err != nil {
			tx.Rollback()
			return nil, err
		}
	}
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(pgWriteLock)); err != nil {
		tx.Rollback()
		// Waited past lock_timeout (a hook's deadline: lock_not_available),
		// or past the statement_timeout (query_canceled) for a writer that
		// holds the lock that long: busy either way.
		if c := pgCode(err); c == "55P03" || c == "57014" {
			return nil, kindError{ErrBusy, fmt.Errorf("database is locked (%s)", oneLine(err))}
		}
		return nil, err
	}
	return tx, nil
}

// beginIngest begins an ingest's transaction (beginWrite) on a connection
// of its own, and copies rows in it with COPY, through the connection's
// redaction (pgConn.copyFrom): a row by INSERT is a round trip to the
// server, and an ingest of 5,600 messages took three times SQLite's time.
func (postgresDialect) beginIngest(ctx context.Context, db *sqlx.DB) (*sqlx.Tx, func(), rowCopier, error) {
	conn, err := db.Connx(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	tx, err := pgBegin(ctx, conn)
	if err != nil {
		conn.Close()
		return nil, nil, nil, err
	}
	return tx, func() { conn.Close() }, pgCopier{conn}, nil
}

// pgCopier copies rows into a table of the transaction on its connection.
type pgCopier struct{ conn *sqlx.Conn }

// reserveIDs takes n ids of table's identity column: rows copied in carry
// their own, as INSERT's RETURNING would have told them. They are taken
// at once, the sequence moved past them in one step (a nextval each was
// 3 ms a batch of the server's time): no other writer takes an id
// meanwhile, for every write to the ledger holds the advisory write lock
// (beginWrite), as this ingest's does.
func (c pgCopier) reserveIDs(ctx context.Context, table string, n int) ([]int64, error) {
	var last int64
	if err := c.conn.GetContext(ctx, &last, `SELECT setval(s, nextval(s) + $2 - 1) FROM pg_get_serial_sequence($1, 'id') AS s`, table, n); err != nil {
		return nil, err
	}
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = last - int64(n-1-i)
	}
	return ids, nil
}

func (c pgCopier) copyRows(ctx context.Context, table string, columns []string, rows [][]any) error {
	return c.conn.Raw(func(dc any) error {
		p, ok := dc.(*pgConn)
		if !ok {
			return fmt.Errorf("copy into %s: not a ledger connection (%T)", table, dc)
		}
		return p.copyFrom(ctx, table, columns, rows)
	})
}

// insertMessage prepares the insert of a message row: PostgreSQL has no
// last insert id, so the new row's id comes back with RETURNING, and a
// message already there as no row.
func (postgresDialect) insertMessage(ctx context.Context, tx *sqlx.Tx) (insertFunc, error) {
	st, err := tx.PreparexContext(ctx, `INSERT INTO messages (`+insertColumns+`) VALUES (`+
		placeholders(insertColumnCount)+`) ON CONFLICT (session_id, uuid) DO NOTHING RETURNING id`)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, args ...any) (int64, bool, error) {
		var id int64
		err := st.QueryRowContext(ctx, args...).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, false, nil
		}
		return id, err == nil, err
	}, nil
}

// rowContext is ctx: a statement waits on a server, which may not answer.
func (postgresDialect) rowContext(ctx context.Context) context.Context { return ctx }

// cachesStatements: a statement not prepared is one round trip
// (pgdriver's exec mode); preparing it would add two.
func (postgresDialect) cachesStatements() bool { return false }

// textVector is text's tsvector (pgtsv.go): a compaction's summary, linked
// to it by an UPDATE, is written with it. The server computing it
// (ledger_text_tsv, by the trigger of migration 00011) was a tenth of what
// it spent on an ingest of 100k messages, kilobytes of summary each.
func (postgresDialect) textVector(text string) (any, bool) { return pgTSVector(text), true }

// indexMessages: the tsvector columns are written with their rows (a
// message's copied with it, a compaction's summary's with it where the
// writer links it, the others made by triggers).
func (postgresDialect) indexMessages(context.Context, *sqlx.Tx, int64) error { return nil }

// Full text.
//
// Each searchable table has a stored tsvector column (tsv) of its text
// split as SQLite's unicode61 tokenizer splits it, and a GIN index on it
// (migrations/postgres). A query is the same Query, made a tsquery in
// place of an FTS5 MATCH expression: the same query language, the same
// filters, the same rows found; ranking follows the SQLite backend's
// (newest first, or terms held when some may be missing), and snippets are
// cut and marked as FTS5 marks them (snippet.go).

// tsquery renders a term for to_tsquery: its tokens quoted (they are
// letters and digits only) and followed by one another, the last a prefix
// when the term is.
func (t term) tsquery() string {
	parts := make([]string, len(t.tokens))
	for i, tok := range t.tokens {
		parts[i] = "'" + strings.ReplaceAll(tok, "'", "''") + "'"
	}
	if t.prefix {
		parts[len(parts)-1] += ":*"
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "(" + strings.Join(parts, " <-> ") + ")"
}

// match renders the query for to_tsquery, every word of a group needed
// (all) or any of them: MatchAll and MatchAny's PostgreSQL counterparts.
func (postgresDialect) match(q Query, all bool) string { return q.render(tsSyntax, all) }

// rank is the newest matches of each index that pass the filters,
// scored as SQLite's rank scores them, in one statement (and one more to
// score them when some terms may be missing): a search is one connection
// and a few round trips, whatever the number of indexes. Each index's
// newest n matches are found in windows of its newest rows (windowed).
func (postgresDialect) rank(ctx context.Context, db *sqlx.DB, ixs []searchIndex, o SearchOptions, tsq string, scored bool) ([]Hit, error) {
	terms := o.Query.terms()
	n := o.Limit
	if scored && len(terms) > 1 {
		n = max(n, scoreWindow)
	} else {
		scored = false
	}
	var q query
	match := q.arg(tsq)
	var parts []string
	for k, ix := range ixs {
		parts = append(parts, windowed(&q, "i"+strconv.Itoa(k), ix, o, match, n)...)
	}
	if len(parts) == 0 {
		return nil, nil
	}
	var rows []hitRow
	stmt := "WITH " + q.String() + " SELECT * FROM " + strings.Join(parts, " UNION ALL SELECT * FROM ")
	if err := db.SelectContext(ctx, &rows, stmt, q.args...); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	byKind := map[string][]Hit{}
	for _, r := range rows {
		h := r.hit()
		h.Score = float64(len(terms))
		byKind[r.Kind] = append(byKind[r.Kind], h)
	}
	// Each index's newest n, newest first (its windows hold more than n
	// between them when the first held fewer).
	var hits []Hit
	for _, ix := range ixs {
		h := byKind[ix.kind]
		slices.SortFunc(h, func(a, b Hit) int { return cmp.Compare(b.ID, a.ID) })
		byKind[ix.kind] = h[:min(len(h), n)]
	}
	if scored {
		if err := scorePG(ctx, db, ixs, byKind, terms); err != nil {
			return nil, err
		}
	}
	for _, ix := range ixs {
		h := byKind[ix.kind]
		if scored {
			slices.SortStableFunc(h, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) })
			h = h[:min(len(h), o.Limit)]
		}
		hits = append(hits, h...)
	}
	return hits, nil
}

// Rank's windows: the newest rows of an index's table (by id) it looks
// for matches in, each only when the ones before held fewer than n; the
// last is the rest of the table.
const (
	firstWindow  = 4096
	secondWindow = 65536
)

// windowed adds to q (a WITH list) the common table expressions of one
// index's search, named after p, and returns the names of those whose
// rows are the index's hits.
//
// A table searched in windows (ix.windows: messages) has one expression
// per window, each searched only when the table reaches into it and the
// windows before it held fewer than n matches: a one-time filter of the
// plan, so that a common word costs the first window alone and a rare one
// a GIN lookup per window. Without statistics (a ledger just filled,
// before autovacuum's ANALYZE) the planner would fetch every match of a
// word and sort them: half a second and more for a common one at 100k
// messages. The other tables are searched whole: they hold a row per
// compaction, handoff or note, and a window's bound, known only when the
// statement runs, made the planner walk the newest of them and read each
// one's large tsvector to find a rare word that the GIN index finds at
// once.
func windowed(q *query, p string, ix searchIndex, o SearchOptions, match string, n int) []string {
	if q.sql.Len() > 0 {
		q.add(", ")
	}
	search := func(name, bound, gate string) {
		q.add(name + " AS (SELECT t.session_id, '" + ix.kind + "' AS kind, t.id, t." + ix.at + " AS at, " + ix.role + " AS role FROM " + ix.table +
			" t WHERE t.tsv @@ to_tsquery('simple', " + match + ")" + ix.where + bound + gate)
		if o.SessionID != "" {
			q.add(" AND t.session_id = " + q.arg(o.SessionID))
		}
		o.scopeFilters(q, ix)
		q.add(" ORDER BY t.id DESC LIMIT " + strconv.Itoa(n) + ")")
	}
	if !ix.windows {
		search(p, "", "")
		return []string{p}
	}
	top := "(SELECT m FROM " + p + "top)"
	q.add(p + "top AS (SELECT max(id) AS m FROM " + ix.table + "), ")
	count := func(w string) string { return "(SELECT count(*) FROM " + p + w + ")" }
	nn := strconv.Itoa(n)
	search(p+"w1", " AND t.id > "+top+" - "+strconv.Itoa(firstWindow), "")
	q.add(", ")
	search(p+"w2", " AND t.id > "+top+" - "+strconv.Itoa(secondWindow)+" AND t.id <= "+top+" - "+strconv.Itoa(firstWindow),
		" AND "+top+" > "+strconv.Itoa(firstWindow)+" AND "+count("w1")+" < "+nn)
	q.add(", ")
	search(p+"w3", " AND t.id <= "+top+" - "+strconv.Itoa(secondWindow),
		" AND "+top+" > "+strconv.Itoa(secondWindow)+" AND "+count("w1")+" + "+count("w2")+" < "+nn)
	return []string{p + "w1", p + "w2", p + "w3"}
}

// scorePG scores each index's candidates (newest first) by the terms each
// holds, as SQLite's score does, in one statement for every index and
// term.
func scorePG(ctx context.Context, db *sqlx.DB, ixs []searchIndex, byKind map[string][]Hit, terms []term) error {
	var q query
	var parts []string
	for _, ix := range ixs {
		h := byKind[ix.kind]
		if len(h) == 0 {
			continue
		}
		lo, hi := q.arg(h[len(h)-1].ID), q.arg(h[0].ID)
		for i, t := range terms {
			parts = append(parts, "SELECT '"+ix.kind+"' AS kind, "+strconv.Itoa(i)+" AS term, id FROM "+ix.table+
				" WHERE tsv @@ to_tsquery('simple', "+q.arg(t.tsquery())+") AND id BETWEEN "+lo+" AND "+hi)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	var rows []struct {
		Kind string `db:"kind"`
		Term int    `db:"term"`
		ID   int64  `db:"id"`
	}
	if err := db.SelectContext(ctx, &rows, strings.Join(parts, " UNION ALL "), q.args...); err != nil {
		return fmt.Errorf("search: %w", err)
	}
	held := map[string][]map[int64]bool{}
	for _, ix := range ixs {
		held[ix.kind] = make([]map[int64]bool, len(terms))
		for i := range terms {
			held[ix.kind][i] = map[int64]bool{}
		}
	}
	for _, r := range rows {
		held[r.Kind][r.Term][r.ID] = true
	}
	for _, ix := range ixs {
		if h := byKind[ix.kind]; len(h) > 0 {
			scoreHeld(h, held[ix.kind])
		}
	}
	return nil
}

// ftsSegments: GIN indexes have no segments to merge.
func (postgresDialect) ftsSegments(context.Context, *sqlx.DB) (map[string]int64, error) {
	return map[string]int64{}, nil
}

// rebuildFTS and mergeFTS: the tsvector columns are written with their
// rows, and go with them.
func (postgresDialect) rebuildFTS(context.Context, *sqlx.Tx) error { return nil }
func (postgresDialect) mergeFTS(context.Context, *sqlx.Tx) error   { return nil }

// pgTextIndexes are the GIN indexes of the tsvector columns.
var pgTextIndexes = []string{"messages_tsv", "handoffs_tsv", "compactions_tsv", "notes_tsv"}

// settleSearch files each GIN index's pending list into the index
// (gin_clean_pending_list), best effort: a role that does not own the
// indexes may not, and a server that is read-only cannot; both leave the
// lists to the server (its next flush, autovacuum).
func (postgresDialect) settleSearch(ctx context.Context, db *sqlx.DB, _ int) error {
	_, err := db.ExecContext(ctx, `SELECT gin_clean_pending_list(to_regclass(i)) FROM unnest(ARRAY['`+
		strings.Join(pgTextIndexes, "', '")+`']) AS i WHERE to_regclass(i) IS NOT NULL`)
	switch pgCode(err) {
	case "42501", "25006": // insufficient_privilege, read_only_sql_transaction
		return nil
	}
	if err != nil {
		return fmt.Errorf("settle the search indexes: %w", err)
	}
	return nil
}

// Maintenance.

// check: the server keeps its own files whole, and the full-text columns
// are written with their rows; what is left to check is that the ledger
// answers (Check counts what it holds), read-only or not.
func (postgresDialect) check(context.Context, *sqlx.DB, bool) (Health, error) {
	return Health{Integrity: "ok", FTS: "ok"}, nil
}

// footprint is the database's size; its WAL is the server's.
func (postgresDialect) footprint(ctx context.Context, db *sqlx.DB) (int64, bool, error) {
	var bytes int64
	if err := db.GetContext(ctx, &bytes, `SELECT pg_database_size(current_database())`); err != nil {
		return 0, false, fmt.Errorf("database size: %w", err)
	}
	return bytes, false, nil
}

// secureConn is a connection of the pool, as it is: PostgreSQL has no
// secure_delete (VACUUM reclaims dead rows; scrubForgotten rewrites the
// tables).
func (postgresDialect) secureConn(ctx context.Context, db *sqlx.DB) (*sqlx.Conn, func(), error) {
	conn, err := db.Connx(ctx)
	if err != nil {
		return nil, nil, err
	}
	return conn, func() { conn.Close() }, nil
}

// beginForget begins a forget's write transaction (beginWrite) and returns
// its id, which scrubForgotten waits past.
func (d postgresDialect) beginForget(ctx context.Context, db *sqlx.DB) (*sqlx.Tx, int64, func(), error) {
	tx, done, err := d.beginWrite(ctx, db, false)
	if err != nil {
		return nil, 0, nil, err
	}
	var xid int64
	if err := tx.GetContext(ctx, &xid, `SELECT txid_current()`); err != nil {
		tx.Rollback()
		return nil, 0, nil, err
	}
	return tx, xid, done, nil
}

// forgetTables are the tables a forget deletes from, resume_states (what
// resume extracted from the session: its request, decisions, files) among
// them.
var forgetTables = []string{"compactions", "handoffs", "notes", "messages", "cursors", "session_marks", "hook_receipts", "resume_states", "sessions"}

// scrubForgotten rewrites a team ledger's tables that held the forgotten
// rows, and says why it could not (scrubbed.why). A DELETE in PostgreSQL
// leaves the row's bytes in the table's pages (and in its TOAST table and
// indexes) until they are reused; plain VACUUM only marks the space free.
// VACUUM FULL writes each table anew, without them, and its indexes too;
// ANALYZE after it replaces the column statistics, which sample rows.
//
// It needs the tables' owner, and takes each table's exclusive lock while
// it runs (other clients wait): it waits at most 5 s for that lock, and
// gives up rather than queue everyone behind a long transaction.
//
// VACUUM FULL copies a deleted row too while the server's horizon (the
// oldest transaction it must keep rows for) is not past the delete's
// transaction (xid). That horizon is not only this database's readers:
// VACUUM FULL's own snapshot counts, and its xmin is the oldest
// transaction with an id still running anywhere on the server, in any
// database; other roles' transactions (an autovacuum's ANALYZE) are
// invisible to a role without pg_read_all_stats. So forget waits up to
// snapshotWait for the transactions it can see (olderTransactions), then
// checks each rewrite by the horizon it used, which VACUUM FULL leaves as
// the table's new relfrozenxid: a table rewritten before the horizon
// passed the delete is rewritten again once it has, until snapshotWait
// runs out; one that still kept the rows is named in why.
//
// It also rewrites the statistics catalog (pg_statistic) where this role
// may (a superuser), checked the same way against the ANALYZE's
// transaction: elsewhere its old sample rows stay in the catalog's free
// space until the server reuses it. What it cannot reach is the
// server's: the write-ahead log (pg_wal, until its segments are recycled
// and overwritten), WAL archives, replicas, backups, and the blocks the
// old files held on disk: walTruncated is always false.
func (d postgresDialect) scrubForgotten(ctx context.Context, db *sqlx.DB, xid int64) (scrubbed, error) {
	why := d.vacuumFull(ctx, db, xid)
	return scrubbed{rewritten: why == "", why: why}, nil
}

func (postgresDialect) vacuumFull(ctx context.Context, db *sqlx.DB, xid int64) string {
	var notOwned []string
	if err := db.SelectContext(ctx, &notOwned, `SELECT c.relname FROM pg_class c
		WHERE c.relname = ANY(string_to_array($1, ',')) AND c.relkind = 'r' AND pg_table_is_visible(c.oid)
			AND NOT pg_has_role(current_user, c.relowner, 'USAGE') ORDER BY c.relname`, strings.Join(forgetTables, ",")); err != nil {
		return "could not check who owns the tables: " + oneLine(err)
	}
	if len(notOwned) > 0 {
		return "this role does not own " + strings.Join(notOwned, ", ")
	}
	// The smallest first: while the horizon is behind the delete, the
	// first rewrite says so at little cost, and the others wait.
	var tables []string
	if err := db.SelectContext(ctx, &tables, `SELECT c.relname FROM pg_class c
		WHERE c.relname = ANY(string_to_array($1, ',')) AND c.relkind = 'r' AND pg_table_is_visible(c.oid)
		ORDER BY pg_total_relation_size(c.oid), c.relname`, strings.Join(forgetTables, ",")); err != nil {
		return "could not list the tables: " + oneLine(err)
	}
	deadline := time.Now().Add(snapshotWait)
	older := olderTransactions(ctx, db, xid, deadline)
	conn, err := db.Connx(ctx)
	if err != nil {
		return oneLine(err)
	}
	defer discard(conn) // its settings stay with it: never reused
	// A big team ledger takes minutes to rewrite: no statement_timeout,
	// and the client waits as long as a migration may take.
	ctx = withAnswerWait(ctx, pgMigrationTimeout)
	for _, set := range []string{`SET lock_timeout = '5s'`, `SET statement_timeout = 0`} {
		if _, err := conn.ExecContext(ctx, set); err != nil {
			return oneLine(err)
		}
	}
	kept, err := rewriteUntil(ctx, conn, db, tables, xid, deadline, &older)
	if err != nil {
		return oneLine(err)
	}
	if len(kept) > 0 {
		return fmt.Sprintf("%s was still open, so the rewrite of %s kept the forgotten rows; "+
			"their bytes stay until those tables are rewritten again after it ends (ANALYZE, then VACUUM FULL)", describeOlder(older), strings.Join(kept, ", "))
	}
	// The statistics, recomputed without the rows; the ANALYZE's own
	// transaction replaces the old ones, which the catalog's rewrite must
	// be past.
	var analyzed int64
	tx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		return oneLine(err)
	}
	if _, err := tx.ExecContext(ctx, `ANALYZE `+strings.Join(tables, ", ")); err != nil {
		tx.Rollback()
		return oneLine(err)
	}
	if err := tx.GetContext(ctx, &analyzed, `SELECT txid_current()`); err != nil {
		tx.Rollback()
		return oneLine(err)
	}
	if err := tx.Commit(); err != nil {
		return oneLine(err)
	}
	var super bool
	if conn.GetContext(ctx, &super, `SELECT rolsuper FROM pg_roles WHERE rolname = current_user`) != nil || !super {
		return ""
	}
	older = olderTransactions(ctx, db, analyzed, deadline)
	kept, err = rewriteUntil(ctx, conn, db, []string{"pg_statistic"}, analyzed, deadline, &older)
	if err != nil {
		return "could not rewrite the column statistics (pg_statistic): " + oneLine(err)
	}
	if len(kept) > 0 {
		return fmt.Sprintf("%s was still open, so the rewrite of the column statistics (pg_statistic) kept their old samples of the rows; "+
			"their bytes stay until it is rewritten again after it ends (ANALYZE, then VACUUM FULL pg_statistic)", describeOlder(older))
	}
	return ""
}

// rewriteUntil rewrites tables (VACUUM FULL) on conn until none keeps a
// row deleted by transaction xid or deadline passes, and returns those
// that kept some. A rewrite keeps them while the horizon it used is not
// past xid: VACUUM FULL sets the table's relfrozenxid to that horizon
// (the freeze cutoff of a rewrite is its horizon; it only keeps an older
// relfrozenxid when no older transaction id is left in the table). Before
// deadline, the first table that keeps them stops the round, and the next
// waits for the transactions in older (updated) to end.
func rewriteUntil(ctx context.Context, conn *sqlx.Conn, db *sqlx.DB, tables []string, xid int64, deadline time.Time, older *[]string) ([]string, error) {
	pending := tables
	for {
		final := !time.Now().Before(deadline)
		var kept []string
		for i, t := range pending {
			if _, err := conn.ExecContext(ctx, `VACUUM (FULL) `+t); err != nil {
				return nil, err
			}
			var past bool
			if err := conn.GetContext(ctx, &past, `SELECT age(relfrozenxid) < age(($2 % 4294967296)::text::xid)
				FROM pg_class WHERE oid = $1::text::regclass`, t, xid); err != nil {
				return nil, err
			}
			if !past {
				kept = append(kept, t)
				if !final {
					kept = append(kept, pending[i+1:]...)
					break
				}
			}
		}
		if len(kept) == 0 || final {
			return kept, nil
		}
		pending = kept
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		*older = olderTransactions(ctx, db, xid, deadline)
	}
}

// describeOlder names the transactions olderTransactions found.
func describeOlder(older []string) string {
	if len(older) == 0 {
		return "a transaction older than the forget that this role cannot see (another role's, or an autovacuum's)"
	}
	return "a transaction older than the forget (" + strings.Join(older, "; ") + ")"
}

// snapshotWait bounds how long scrubForgotten waits for transactions older
// than the forget to end.
const snapshotWait = 10 * time.Second

// olderTransactions waits until deadline for what holds the server's
// horizon at or before transaction xid to end, and describes what is
// still there: a transaction with an id at or before xid, in any database
// (VACUUM FULL's own snapshot counts it), a snapshot that old in this
// database (or in none: a standby's feedback), a prepared transaction, a
// replication slot. Other roles' transactions are seen only by a role
// that may read the server's statistics: the snapshot's xmin still shows
// that a transaction with an id is there.
func olderTransactions(ctx context.Context, db *sqlx.DB, xid int64, deadline time.Time) []string {
	for {
		var older []string
		err := db.SelectContext(ctx, &older, `WITH x AS (SELECT ($1 % 4294967296)::text::xid AS x, $1::text::xid8 AS x8)
			SELECT 'a transaction of another role' FROM x WHERE pg_snapshot_xmin(pg_current_snapshot()) <= x.x8
			UNION ALL
			SELECT format('server process %s%s', a.pid, CASE WHEN a.datname IS DISTINCT FROM current_database()
					THEN format(' in database %s', coalesce(a.datname, 'none')) ELSE '' END)
				FROM pg_stat_activity a, x WHERE a.pid <> pg_backend_pid() AND (
					(a.backend_xid IS NOT NULL AND age(a.backend_xid) >= age(x.x))
					OR (a.backend_xmin IS NOT NULL AND age(a.backend_xmin) >= age(x.x)
						AND (a.datname = current_database() OR a.datid IS NULL)))
			UNION ALL
			SELECT format('prepared transaction %s', p.gid) FROM pg_prepared_xacts p, x WHERE age(p.transaction) >= age(x.x)
			UNION ALL
			SELECT format('replication slot %s', s.slot_name) FROM pg_replication_slots s, x
				WHERE (s.xmin IS NOT NULL AND age(s.xmin) >= age(x.x))
					OR (s.catalog_xmin IS NOT NULL AND age(s.catalog_xmin) >= age(x.x) AND (s.database IS NULL OR s.database = current_database()))
			ORDER BY 1`, xid)
		if len(older) > 1 {
			// The snapshot's xmin counts what the rows above name.
			older = slices.DeleteFunc(older, func(o string) bool { return o == "a transaction of another role" })
		}
		if err != nil || len(older) == 0 || !time.Now().Before(deadline) {
			return older
		}
		select {
		case <-ctx.Done():
			return older
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// scrubRescanned: autovacuum reclaims the dead rows a rescan leaves; the
// server's WAL is not the ledger's to empty.
func (postgresDialect) scrubRescanned(context.Context, *sqlx.Conn) (bool, error) { return true, nil }

// Errors.

// pgCode is the SQLSTATE of a PostgreSQL error, or "".
func pgCode(err error) string {
	var e *pgconn.PgError
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// pgKind is the kind of a PostgreSQL error (see kindError): the lock
// waited for past lock_timeout (lock_not_available) or a deadlock is
// ErrBusy; a write in a read-only session (read_only_sql_transaction: a
// store opened ReadOnly) is ErrReadOnly. Any other error has none (nil).
func pgKind(err error) error {
	switch pgCode(err) {
	case "55P03", "40P01":
		return ErrBusy
	case "25006":
		return ErrReadOnly
	}
	return nil
}
