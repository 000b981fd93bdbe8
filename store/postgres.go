package store

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/pressly/goose/v3"

	pgmigrations "github.com/agentledger/ledger/migrations/postgres"
)

// IsURL tells whether a --db value names a PostgreSQL server
// (postgres:// or postgresql://) rather than a SQLite file. Such a value
// is never taken for a file name.
func IsURL(db string) bool {
	lower := strings.ToLower(db)
	return strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://")
}

// NotLedgerError is a database location that is not, and cannot become, a
// ledger: a URL of a kind ledger does not take, a blank value, a folder, a
// file that is no SQLite database, or a SQLite database of something else.
// Nothing is created or changed there.
type NotLedgerError struct {
	Location string // as given: quoted when it is no path
	Why      string
}

func (e *NotLedgerError) Error() string { return e.Location + " " + e.Why }

// urlLike matches a value that starts with a URL scheme of two letters or
// more (a Windows drive, C:, has one).
var urlLike = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]+:`)

// CheckLocation says what is wrong with a database location (--db,
// $LEDGER_DB) before anything is opened, or nil: a PostgreSQL URL, or any
// other value that does not look like a URL, is a SQLite path. A URL of
// another kind (mysql://, sqlite://, file:, postgres:/x with one slash)
// would otherwise become a SQLite file of that name in the working folder.
func CheckLocation(db string) error {
	switch {
	case IsURL(db):
		return nil
	case strings.TrimSpace(db) == "":
		return &NotLedgerError{Location: strconv.Quote(db), Why: "is blank: give a SQLite file's path or a postgres:// URL"}
	case urlLike.MatchString(db):
		return &NotLedgerError{Location: strconv.Quote(db), Why: "is not a postgres:// or postgresql:// URL, and ledger takes no other kind: " +
			"give a PostgreSQL URL, or a SQLite file's path (./" + db + " for a file whose name has a colon)"}
	}
	return nil
}

// WithLocalPath gives a PostgreSQL store the path Path returns: where the
// files ledger keeps beside its database (handoff Markdown, handoffs
// waiting for the lock) go on this machine. A SQLite store ignores it.
func WithLocalPath(path string) Option { return func(s *Store) { s.localPath = path } }

// WithHost sets the machine name the store writes on the sessions it
// creates (default: os.Hostname).
func WithHost(host string) Option { return func(s *Store) { s.host = host } }

// Host is the machine name the store writes on the sessions it creates.
func (s *Store) Host() string { return s.host }

// Postgres tells whether the store is on a PostgreSQL server.
func (s *Store) Postgres() bool { return s.pg }

// Location is where the ledger is, for people: the SQLite file's path, or
// the server's URL without its password.
func (s *Store) Location() string {
	if !s.pg {
		return s.path
	}
	return RedactURL(s.url)
}

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

// defaultHost is the machine's name, or "" when the system will not say.
func defaultHost() string {
	h, _ := os.Hostname()
	return h
}

// openPostgres opens (and migrates, unless read-only) the ledger on the
// PostgreSQL server at s.url. A read-only store's connections are
// read-only sessions (default_transaction_read_only), so a front door that
// promises to read cannot write.
func openPostgres(ctx context.Context, s *Store) (*Store, error) {
	dsn := withTimeouts(s.url)
	if s.readOnly {
		dsn = withParam(dsn, "default_transaction_read_only", "on")
	}
	conn, err := pgDriver{redactor: s.redactor}.OpenConnector(dsn)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", RedactURL(s.url), err)
	}
	db := sqlx.NewDb(sql.OpenDB(conn), pgDriverName)
	// Every process is one of many clients of a shared server: keep few
	// connections, and none idle for long.
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(2)
	db.SetConnMaxIdleTime(time.Minute)
	s.db = db
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database %s: %s", RedactURL(s.url), oneLine(err))
	}
	if s.readOnly {
		have, err := schemaVersion(ctx, db)
		if err == nil && have < pgTarget() {
			var rw *Store
			if rw, err = Open(ctx, s.url, WithoutRedaction()); err == nil {
				rw.Close()
			}
		}
		if err != nil {
			db.Close()
			return nil, err
		}
		return s, nil
	}
	if err := s.migrate(ctx); err != nil {
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

// pgTarget is the PostgreSQL schema version this binary migrates to.
func pgTarget() int64 {
	v, _ := targetOf(pgmigrations.FS)
	return v
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

// pgProvider is goose's provider for the PostgreSQL migrations. It runs
// on a plain pgx connection pool of its own: goose's statements are
// PostgreSQL's already, and the migrations' :: casts are theirs.
func (s *Store) pgProvider() (*goose.Provider, func(), error) {
	// A migration may build an index over a big team ledger for minutes:
	// no statement_timeout here; migrate bounds the whole of it instead.
	db, err := sql.Open("pgx", withTimeouts(withParam(s.url, "statement_timeout", "0")))
	if err != nil {
		return nil, nil, err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, pgmigrations.FS)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("load migrations: %w", err)
	}
	return p, func() { db.Close() }, nil
}

// pgWriteLock is the key of the advisory lock every PostgreSQL write
// transaction takes first (see beginWritePG).
const pgWriteLock = 0x6c6564676572 // "ledger"

// beginWritePG begins a write transaction on PostgreSQL. It first takes a
// transaction-level advisory lock that all ledger writers share, so that
// writes are serialised as SQLite's immediate transactions are: a writer
// reads what it builds on (a session's last seq, its counts) and writes in
// the same transaction, and two machines ingesting the same transcript at
// once must not both number its messages from the same seq. Rows are still
// written with ON CONFLICT, so that a writer that read before another
// committed adds nothing twice. Under a lock deadline (a hook's budget) it
// waits for the lock until then (lock_timeout), and fails as busy.
func (s *Store) beginWritePG(ctx context.Context) (*sqlx.Tx, func(), error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return nil, nil, err
	}
	if by, ok := lockDeadline(ctx); ok {
		wait := max(1, time.Until(by).Milliseconds())
		if _, err := tx.ExecContext(ctx, `SELECT set_config('lock_timeout', $1, true)`, strconv.FormatInt(wait, 10)+"ms"); err != nil {
			tx.Rollback()
			return nil, nil, err
		}
	}
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(pgWriteLock)); err != nil {
		tx.Rollback()
		// Waited past lock_timeout (a hook's deadline), or past the
		// statement_timeout for a writer that holds it that long.
		if msg := err.Error(); strings.Contains(msg, "lock timeout") || strings.Contains(msg, "55P03") || strings.Contains(msg, "57014") {
			return nil, nil, fmt.Errorf("database is locked (%s)", oneLine(err))
		}
		return nil, nil, err
	}
	return tx, func() {}, nil
}
