package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"syscall"

	sqlitelib "modernc.org/sqlite/lib"
)

// ReadOnlyError is returned when a command that writes meets a ledger this
// process cannot write: a copy on a read-only mount, a file or folder
// owned by another user.
type ReadOnlyError struct {
	Path string
	Err  error // why: permission denied, read-only file system, ...
}

func (e *ReadOnlyError) Error() string {
	return fmt.Sprintf("%s is read-only (%v): this command writes to the ledger; read commands (sessions, search, audit, handoff, resume, version, doctor) work on it", e.Path, e.Err)
}

func (e *ReadOnlyError) Unwrap() error { return e.Err }

// Is makes a ReadOnlyError ErrReadOnly.
func (e *ReadOnlyError) Is(target error) bool { return target == ErrReadOnly }

// NoLedgerError is a SQLite ledger that is not there: what a command that
// only reads meets before anything was ingested, or at a mistyped --db.
// Reading creates nothing; a command that writes creates the ledger.
type NoLedgerError struct {
	Path string
}

func (e *NoLedgerError) Error() string {
	return fmt.Sprintf("no ledger at %s yet: 'ledger ingest' (or 'ledger init') creates it", e.Path)
}

// Exists tells whether there is a ledger at path: a URL is a server's,
// taken to be there; a SQLite path, a file.
func Exists(path string) bool {
	if IsURL(path) {
		return true
	}
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// SQLiteLibVersion is the version of the SQLite library ledger is built
// with, with no ledger open.
func SQLiteLibVersion() string { return sqlitelib.SQLITE_VERSION }

// readOnlyOS tells whether err is the system refusing a write: a read-only
// file system, or permissions.
func readOnlyOS(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission)
}

// readDSN is the connection string of a read-only connection: mode=ro (no
// journal_mode pragma, which would ask to write; deferred transactions,
// which take no write lock), or immutable when SQLite cannot even keep
// its shared-memory index beside the file (a read-only mount, a folder of
// another user): nothing can write it then, and SQLite reads the file as
// it is. Reads do not map the file (mmap_size): ~0.3 ms less per search is
// not worth a SIGBUS where SQLite would report an I/O error.
func readDSN(path string, immutable bool) string {
	u := url.URL{Scheme: "file", Opaque: (&url.URL{Path: path}).EscapedPath()}
	dsn := u.String() + "?mode=ro&_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_txlock=deferred&_time_format=sqlite"
	if immutable {
		dsn += "&immutable=1"
	}
	return dsn
}

// ReadOnly opens a store that cannot write, for a front door that only
// reads (the read commands, the web view): the database is opened
// read-only, so that reading works where writing cannot and that promise
// holds whatever code runs behind it. Such a store never creates the
// database (a *NoLedgerError where there is none); one whose schema is
// behind this binary's is migrated first, on a read-write connection
// closed again.
//
// Read-only first tries mode=ro, which sees what other processes commit,
// WAL included. Where SQLite cannot keep its shared-memory file beside
// the database, it reads the file as immutable; a WAL left beside it
// (a writer that has not checkpointed) is then not seen, and Stale says
// so.
func ReadOnly() Option {
	return func(s *Store) {
		// It writes nothing, but keeps its Redactor (which compiles
		// nothing unless used): a lookup by an id or a path that holds a
		// secret finds it by its stored, redacted form (StoredKey).
		s.readOnly = true
	}
}

// openReadOnly opens s's database for a store made with ReadOnly: it must
// exist, and stays read-only once a behind schema is migrated.
func openReadOnly(ctx context.Context, s *Store) (*Store, error) {
	if _, err := os.Stat(s.path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &NoLedgerError{Path: s.path}
		}
		return nil, fmt.Errorf("open database: %w", err)
	}
	have, want, err := s.connectReadOnly(ctx)
	if err == nil && have < want {
		s.Close()
		var rw *Store
		if rw, err = Open(ctx, s.path, WithoutRedaction()); err != nil {
			return nil, err
		}
		rw.Close()
		have, want, err = s.connectReadOnly(ctx)
	}
	if err == nil && have > want {
		s.Close()
		err = newerSchema(s.path, have, want)
	}
	if err != nil {
		return nil, notADatabase(s.path, err)
	}
	return s, nil
}

func newerSchema(path string, have, want int64) error {
	return fmt.Errorf("database %s has schema version %d, newer than this ledger knows (%d): upgrade ledger", path, have, want)
}

// connectReadOnly opens s's database read-only, mode=ro first and
// immutable where SQLite cannot write beside it, and reads its schema
// version (have) and this binary's (want).
func (s *Store) connectReadOnly(ctx context.Context) (have, want int64, err error) {
	if want, err = TargetVersion(); err != nil {
		return 0, 0, fmt.Errorf("read migrations: %w", err)
	}
	for _, immutable := range []bool{false, true} {
		if have, err = s.connectReadOnlyMode(ctx, immutable); err == nil || !readOnlySQLite(err) {
			break
		}
	}
	return have, want, err
}

func (s *Store) connectReadOnlyMode(ctx context.Context, immutable bool) (int64, error) {
	db := openSQLiteDB(readDSN(s.path, immutable), nil) // it writes nothing
	have, err := s.d.schemaVersion(ctx, db)
	if err != nil {
		db.Close()
		return 0, fmt.Errorf("open database %s: %w", s.path, err)
	}
	s.db, s.stale = db, false
	if immutable {
		if fi, err := os.Stat(s.path + "-wal"); err == nil && fi.Size() > 0 {
			s.stale = true
		}
	}
	return have, nil
}

// ReadOnly tells whether the store was opened read-only (the ReadOnly option).
func (s *Store) ReadOnly() bool { return s.readOnly }

// Stale tells whether a read-only store could not read the WAL beside the
// database: what was committed since the last checkpoint is not seen.
func (s *Store) Stale() bool { return s.stale }

// writableFolder tells whether this process may create files in dir.
func writableFolder(dir string) bool {
	f, err := os.CreateTemp(dir, ".ledger-probe-*")
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(f.Name())
	return true
}

// readOnlyOpenError turns the error of Open's first statement into a
// ReadOnlyError when it is SQLite unable to write the database or its WAL
// because the file or its folder may not be written.
func readOnlyOpenError(path string, err error) error {
	if err == nil || !readOnlySQLite(err) {
		return err
	}
	if !writableFolder(filepath.Dir(path)) {
		return &ReadOnlyError{Path: path, Err: errors.New("its folder cannot be written")}
	}
	if f, ferr := os.OpenFile(path, os.O_RDWR, 0); ferr != nil {
		return &ReadOnlyError{Path: path, Err: ferr}
	} else {
		f.Close()
	}
	return err
}
