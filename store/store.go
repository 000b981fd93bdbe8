package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/pressly/goose/v3"
	"modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"
	sqlitelib "modernc.org/sqlite/lib"

	"github.com/agentledger/ledger/migrations"
	pgmigrations "github.com/agentledger/ledger/migrations/postgres"
	"github.com/agentledger/ledger/store/secrets"
)

// ErrNotFound is returned when a session, handoff or other row asked for
// does not exist.
var ErrNotFound = errors.New("not found")

// AmbiguousError is returned when a session prefix matches several sessions.
type AmbiguousError struct {
	Prefix     string
	Candidates []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("session prefix %q is ambiguous: %s", e.Prefix, strings.Join(e.Candidates, ", "))
}

// Store is an open ledger database.
type Store struct {
	db   *sqlx.DB
	path string
	// redactor replaces secrets in everything the store writes; nil
	// (WithoutRedaction) stores text as it comes. It compiles its rules at
	// its first scan, so a store that only reads never does.
	redactor *secrets.Redactor
	// readOnly stores refuse every write (ReadOnly, OpenReader); stale
	// when it could not read the WAL.
	readOnly, stale bool
	// pg: the ledger is on the PostgreSQL server at url; localPath is
	// where its files go on this machine (WithLocalPath).
	pg             bool
	url, localPath string
	// host is written on the sessions the store creates (WithHost).
	host string
}

func init() {
	// sqlx does not know the driver name "sqlite"; say it uses ? binds.
	sqlx.BindDriver("sqlite", sqlx.QUESTION)
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

// Open opens the ledger at path, creating its folder (0700) and file (0600)
// when missing, and migrates it. It redacts secrets in what it writes
// unless WithoutRedaction is given. Opening a current database costs one query:
// ledger starts at every agent session start.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	if path == "" {
		return nil, errors.New("open database: no path")
	}
	s := &Store{path: path, redactor: secrets.New(), host: defaultHost()}
	for _, o := range opts {
		o(s)
	}
	if IsURL(path) {
		s.pg, s.url, s.path = true, path, s.localPath
		return openPostgres(ctx, s)
	}
	if err := checkFile(path); err != nil {
		return nil, err
	}
	if s.readOnly {
		return openReadOnly(ctx, s)
	}
	if err := checkExisting(ctx, path); err != nil {
		return nil, err
	}
	if err := createFile(path); err != nil {
		return nil, err
	}
	db := openSQLiteDB(DSN(path), s.redactor)
	s.db = db
	// Processes that open a new database at once race to switch it to WAL
	// and to migrate it; the loser may be told "busy" past busy_timeout.
	if err := Retry(ctx, func() error { return s.migrate(ctx) }); err != nil {
		db.Close()
		return nil, notADatabase(path, readOnlyOpenError(path, err))
	}
	return s, nil
}

// checkFile refuses a SQLite location that cannot be a ledger file: a
// bad location (CheckLocation), or a folder (SQLite's own word for that is
// "disk I/O error").
func checkFile(path string) error {
	if err := CheckLocation(path); err != nil {
		return err
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return &NotLedgerError{Location: path, Why: "is a folder, not a ledger file: give a file's path (" + filepath.Join(path, "ledger.db") + ", say)"}
	}
	return nil
}

// notADatabase is err, or a NotLedgerError when it is SQLite finding that
// the file is no database (SQLITE_NOTADB).
func notADatabase(path string, err error) error {
	var coded interface{ Code() int }
	if errors.As(err, &coded) && coded.Code()&0xff == 26 {
		return &NotLedgerError{Location: path, Why: "is not a SQLite database: give a ledger's path, or that of a file to create"}
	}
	return err
}

// checkExisting refuses an existing file that is not a ledger, before
// anything is written to it (the DSN's journal_mode pragma alone rewrites
// the header): a file that is no SQLite database, or a SQLite database
// with tables of its own and no ledger schema, which migrating would fill
// with ledger's tables. A ledger that carries its schema version mark in
// its header (every ledger once opened by this version) passes on one
// read of 100 bytes; any other file is asked on a read-only connection.
// A new ledger is empty, or has goose's table (another process is
// migrating it right now).
func checkExisting(ctx context.Context, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil // missing: created; unreadable: the open says so
	}
	var h [100]byte
	n, _ := io.ReadFull(f, h[:])
	f.Close()
	if n == 0 || n == len(h) && string(h[:16]) == "SQLite format 3\x00" && binary.BigEndian.Uint32(h[60:]) > 0 {
		return nil
	}
	db, err := sqlx.Open("sqlite", readDSN(path, false))
	if err != nil {
		return nil
	}
	defer db.Close()
	var tables []string
	if err := db.SelectContext(ctx, &tables, `SELECT name FROM sqlite_master
		WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY name`); err != nil {
		if nl := notADatabase(path, err); nl != err {
			return nl
		}
		return nil // the open that follows says what is wrong
	}
	if len(tables) == 0 || slices.Contains(tables, "goose_db_version") {
		return nil
	}
	if len(tables) > 5 {
		tables = append(tables[:5], "…")
	}
	return &NotLedgerError{Location: path, Why: fmt.Sprintf("is a SQLite database but not a ledger (it has tables of its own: %s): "+
		"ledger leaves it as it is; give the ledger a file of its own", strings.Join(tables, ", "))}
}

// createFile makes the database's folder and file owner-only before SQLite
// creates them with the process umask. SQLite gives the -wal and -shm files
// the main file's permissions.
func createFile(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		if readOnlyOS(err) {
			return &ReadOnlyError{Path: path, Err: err}
		}
		return fmt.Errorf("create database folder: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		if readOnlyOS(err) {
			return &ReadOnlyError{Path: path, Err: errors.Unwrap(err)}
		}
		return fmt.Errorf("open database: %w", err)
	}
	return f.Close()
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Path is the database file's path; for a PostgreSQL store, the local
// path given with WithLocalPath (its files go beside it).
func (s *Store) Path() string { return s.path }

// TargetVersion is the schema version this binary migrates to: the highest
// embedded migration number.
func TargetVersion() (int64, error) { return targetOf(migrations.FS) }

// SchemaVersion is the database's current schema version (0 before the
// first migration).
func (s *Store) SchemaVersion(ctx context.Context) (int64, error) {
	return schemaVersion(ctx, s.db)
}

// schemaVersion reads the schema version. A SQLite ledger keeps it in its
// header's user_version too (setVersionMark): reading that parses no
// schema, which `ledger version` and every other start would pay for
// (~0.5 ms); goose's table is read when the mark is absent (a ledger made
// before it, or one being migrated).
func schemaVersion(ctx context.Context, db *sqlx.DB) (int64, error) {
	if db.DriverName() == "sqlite" {
		var mark int64
		if err := db.GetContext(ctx, &mark, `PRAGMA user_version`); err == nil && mark > 0 {
			return mark, nil
		}
	}
	return gooseVersion(ctx, db)
}

// gooseVersion is the highest migration goose applied.
func gooseVersion(ctx context.Context, db *sqlx.DB) (int64, error) {
	var v sql.NullInt64
	err := db.GetContext(ctx, &v, `SELECT max(version_id) FROM goose_db_version WHERE is_applied`)
	if err != nil {
		if strings.Contains(err.Error(), "no such table") || strings.Contains(err.Error(), `relation "goose_db_version" does not exist`) {
			return 0, nil
		}
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v.Int64, nil
}

// migrate brings the schema up to date. The fast path is one query; goose's
// provider is built only when there is work to do. Two processes may race
// to migrate a new database: the loser's migration fails on the tables the
// winner made, so a failure is re-checked against the version before it is
// reported; while the winner is still on its way (each migration is a
// transaction of its own) the loser waits a little and tries the rest.
func (s *Store) migrate(ctx context.Context) error {
	want, err := TargetVersion()
	if s.pg {
		want, err = targetOf(pgmigrations.FS)
	}
	if err != nil {
		return fmt.Errorf("read migrations: %w", err)
	}
	// goose's table, not the mark: what writes checks the schema itself.
	have, err := gooseVersion(ctx, s.db)
	if err != nil {
		return err
	}
	if have == want {
		return s.markVersion(ctx, want, false)
	}
	if have > want {
		return fmt.Errorf("database %s has schema version %d, newer than this ledger knows (%d): upgrade ledger", s.Location(), have, want)
	}
	p, err := s.provider()
	if err != nil {
		return err
	}
	defer p.closeDB()
	if s.pg {
		// A server that stops answering mid-migration must not hang the
		// command (see defaultStatementTimeout); a migration is rare and
		// may take minutes.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, pgMigrationTimeout)
		defer cancel()
	}
	for attempt := 0; ; attempt++ {
		_, err := p.Up(ctx)
		if err == nil {
			return s.markVersion(ctx, want, false)
		}
		v, verr := gooseVersion(ctx, s.db)
		if verr == nil && v == want {
			return s.markVersion(ctx, want, false)
		}
		if verr != nil || v == have || attempt == 4 {
			return fmt.Errorf("migrate database: %w", err)
		}
		have = v // another process is migrating: let it go on
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(10<<attempt) * time.Millisecond):
		}
	}
}

// markVersion records a SQLite ledger's schema version in its header's
// user_version (see schemaVersion), when it is not there yet: once per
// migration, so that an open that finds the schema current writes nothing.
// Version 0 clears it. Setting it is a write: with wait false it is tried
// without waiting for the write lock (an open of a ledger made before the
// mark, while another process writes, must not wait busy_timeout for an
// optimisation), and left for a later open when the lock is taken.
func (s *Store) markVersion(ctx context.Context, v int64, wait bool) error {
	if s.pg {
		return nil
	}
	var mark int64
	if err := s.db.GetContext(ctx, &mark, `PRAGMA user_version`); err != nil {
		return fmt.Errorf("read schema version mark: %w", err)
	}
	if mark == v {
		return nil
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("mark schema version: %w", err)
	}
	defer conn.Close()
	if !wait {
		if _, err := conn.ExecContext(ctx, `PRAGMA busy_timeout = 0`); err != nil {
			return fmt.Errorf("mark schema version: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA busy_timeout = 5000`)
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, v)); err != nil {
		if !wait && IsBusy(err) {
			return nil
		}
		return fmt.Errorf("mark schema version: %w", err)
	}
	return nil
}

// migrator is goose's provider for the store's dialect, and what closes
// the connections it was given.
type migrator struct {
	*goose.Provider
	closeDB func()
}

func (s *Store) provider() (migrator, error) {
	if s.pg {
		p, closeDB, err := s.pgProvider()
		return migrator{p, closeDB}, err
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, s.db.DB, migrations.FS)
	if err != nil {
		return migrator{}, fmt.Errorf("load migrations: %w", err)
	}
	return migrator{p, func() {}}, nil
}

// MigrateDown rolls the schema back to version (0 removes every table).
// Used by tests and by users recovering from a bad upgrade.
func (s *Store) MigrateDown(ctx context.Context, version int64) error {
	p, err := s.provider()
	if err != nil {
		return err
	}
	defer p.closeDB()
	// The mark goes first: a ledger part way down reads goose's version.
	if err := s.markVersion(ctx, 0, true); err != nil {
		return err
	}
	if _, err := p.DownTo(ctx, version); err != nil {
		return fmt.Errorf("migrate down to %d: %w", version, err)
	}
	return s.markVersion(ctx, version, true)
}

// MigrateUp applies every pending migration.
func (s *Store) MigrateUp(ctx context.Context) error {
	return s.migrate(ctx)
}

// SQLiteVersion is the version of the SQLite library in the binary.
func (s *Store) SQLiteVersion(ctx context.Context) (string, error) {
	var v string
	if s.pg {
		if err := s.db.GetContext(ctx, &v, `SHOW server_version`); err != nil {
			return "", fmt.Errorf("read server version: %w", err)
		}
		return "PostgreSQL " + v, nil
	}
	// The library's own constant: a query would make SQLite parse the
	// schema first, which `ledger version` has no other use for.
	return sqlitelib.SQLITE_VERSION, nil
}
