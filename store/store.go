package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	// the pure-Go SQLite driver, registered as "sqlite"

	"github.com/agentledger/ledger/store/secrets"
)

// Store is an open ledger database.
type Store struct {
	db   *sqlx.DB
	path string
	// redactor replaces secrets in everything the store writes; nil
	// (WithoutRedaction) stores text as it comes. It compiles its rules at
	// its first scan, so a store that only reads never does.
	redactor *secrets.Redactor
	// readOnly stores refuse every write (the ReadOnly option); stale
	// when it could not read the WAL.
	readOnly, stale bool
	// d is the backend's dialect, chosen at Open.
	d dialect
	// localPath is where a PostgreSQL store's files go on this machine
	// (WithLocalPath).
	localPath string
	// host is written on the sessions the store creates (WithHost).
	host string
}

func init() {
	// sqlx does not know the driver name "sqlite"; say it uses ? binds.
	sqlx.BindDriver("sqlite", sqlx.QUESTION)
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
		d := postgresDialect{url: path}
		s.d, s.path = d, s.localPath
		return openPostgres(ctx, s, d)
	}
	if err := checkFile(path); err != nil {
		return nil, err
	}
	s.d = sqliteDialect{path: path}
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

// TargetVersion is the schema version this binary migrates a SQLite ledger
// to: the highest embedded migration number.
func TargetVersion() (int64, error) { return sqliteDialect{}.target() }

// SchemaVersion is the database's current schema version (0 before the
// first migration).
func (s *Store) SchemaVersion(ctx context.Context) (int64, error) {
	return s.d.schemaVersion(ctx, s.db)
}

// migrate brings the schema up to date. The fast path is one query; goose's
// provider is built only when there is work to do. Two processes may race
// to migrate a new database: the loser's migration fails on the tables the
// winner made, so a failure is re-checked against the version before it is
// reported; while the winner is still on its way (each migration is a
// transaction of its own) the loser waits a little and tries the rest.
func (s *Store) migrate(ctx context.Context) error {
	// goose's table, not the mark: what writes checks the schema itself.
	have, err := gooseVersion(ctx, s.db, s.d)
	if err != nil {
		return err
	}
	return s.migrateFrom(ctx, have)
}

// migrateFrom is migrate from the version have, just read.
func (s *Store) migrateFrom(ctx context.Context, have int64) error {
	want, err := s.d.target()
	if err != nil {
		return fmt.Errorf("read migrations: %w", err)
	}
	if have == want {
		return s.d.markVersion(ctx, s.db, want, false)
	}
	if have > want {
		return fmt.Errorf("database %s has schema version %d, newer than this ledger knows (%d): upgrade ledger", s.Location(), have, want)
	}
	p, err := s.d.migrator(s.db)
	if err != nil {
		return err
	}
	defer p.close()
	if p.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.timeout)
		defer cancel()
	}
	for attempt := 0; ; attempt++ {
		_, err := p.Up(ctx)
		if err == nil {
			return s.d.markVersion(ctx, s.db, want, false)
		}
		v, verr := gooseVersion(ctx, s.db, s.d)
		if verr == nil && v == want {
			return s.d.markVersion(ctx, s.db, want, false)
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

// MigrateDown rolls the schema back to version (0 removes every table).
// Used by tests and by users recovering from a bad upgrade.
func (s *Store) MigrateDown(ctx context.Context, version int64) error {
	p, err := s.d.migrator(s.db)
	if err != nil {
		return err
	}
	defer p.close()
	// The mark goes first: a ledger part way down reads goose's version.
	if err := s.d.markVersion(ctx, s.db, 0, true); err != nil {
		return err
	}
	if _, err := p.DownTo(ctx, version); err != nil {
		return fmt.Errorf("migrate down to %d: %w", version, err)
	}
	return s.d.markVersion(ctx, s.db, version, true)
}

// MigrateUp applies every pending migration.
func (s *Store) MigrateUp(ctx context.Context) error {
	return s.migrate(ctx)
}

// SQLiteVersion is the version of the database engine: the SQLite
// library in the binary, or the PostgreSQL server's ("PostgreSQL 16.4").
func (s *Store) SQLiteVersion(ctx context.Context) (string, error) {
	return s.d.version(ctx, s.db)
}
