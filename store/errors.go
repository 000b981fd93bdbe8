package store

import (
	"errors"
	"fmt"
	"strings"
)

// The kinds of error a caller of the store tells apart, with errors.Is;
// the store's error types and the drivers' errors it understands match
// one of them (each type's Is, kindError). Anything else is a failure of
// the store or the database: its message says what.
var (
	// ErrNotFound: the session, handoff or other row asked for does not
	// exist.
	ErrNotFound = errors.New("not found")
	// ErrAmbiguous: a session prefix matches several sessions
	// (*AmbiguousError names them).
	ErrAmbiguous = errors.New("ambiguous")
	// ErrInvalid: the request cannot be served as asked: a location that
	// is no ledger (*NotLedgerError).
	ErrInvalid = errors.New("invalid")
	// ErrReadOnly: a write to a ledger this process cannot write, or
	// opened read-only (*ReadOnlyError, SQLite's SQLITE_READONLY,
	// PostgreSQL's read_only_sql_transaction).
	ErrReadOnly = errors.New("read-only")
	// ErrBusy: another writer held the ledger's write lock past the wait
	// (SQLite's SQLITE_BUSY and SQLITE_LOCKED, PostgreSQL's
	// lock_not_available and deadlock_detected, a lock deadline passed).
	// What failed wrote nothing: it may be tried again (Retry).
	ErrBusy = errors.New("busy")
)

// AmbiguousError is returned when a session prefix matches several sessions.
type AmbiguousError struct {
	Prefix     string
	Candidates []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("session prefix %q is ambiguous: %s", e.Prefix, strings.Join(e.Candidates, ", "))
}

// Is makes an AmbiguousError ErrAmbiguous.
func (e *AmbiguousError) Is(target error) bool { return target == ErrAmbiguous }

// kindError is an error with the kind the store gave it where the
// driver's code alone does not say it (PostgreSQL's query_canceled is
// busy when the statement waited for the write lock): errors.Is finds the
// kind, and errors.Is and As what err wraps; the message is err's.
type kindError struct {
	kind error
	err  error
}

func (e kindError) Error() string   { return e.err.Error() }
func (e kindError) Unwrap() []error { return []error{e.err, e.kind} }

// kinds are the kinds of error, in the order Kind tries them: a request
// found invalid is that first, whatever else went wrong with it.
var kinds = []error{ErrInvalid, ErrAmbiguous, ErrNotFound, ErrReadOnly, ErrBusy}

// Kind is the kind of err: ErrInvalid, ErrAmbiguous, ErrNotFound,
// ErrReadOnly or ErrBusy, or nil for any other failure (and for nil). A
// driver's error is known by its type and code (SQLite's result codes,
// PostgreSQL's SQLSTATE), never by its message.
func Kind(err error) error {
	if err == nil {
		return nil
	}
	for _, k := range kinds {
		if errors.Is(err, k) {
			return k
		}
	}
	if k := sqliteKind(err); k != nil {
		return k
	}
	return pgKind(err)
}

// IsBusy tells whether err is another writer holding the ledger's write
// lock past the wait (ErrBusy), whichever driver said so: one of the
// store's connections, or a connection of the driver's own.
func IsBusy(err error) bool {
	return errors.Is(err, ErrBusy) || sqliteKind(err) == ErrBusy || pgKind(err) == ErrBusy
}
