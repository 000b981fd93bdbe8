package store

import (
	"os"
	"strconv"
	"strings"
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

// urlLike tells whether a value starts with a URL scheme of two letters or
// more (a Windows drive, C:, has one): what ^[A-Za-z][A-Za-z0-9+.-]+:
// matches. A loop, not a regexp: every command with --db checks its value,
// and a package-level regexp is compiled at every start of the binary.
func urlLike(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '.' || c == '-'):
		case i > 1 && c == ':':
			return true
		default:
			return false
		}
	}
	return false
}

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
	case urlLike(db):
		return &NotLedgerError{Location: strconv.Quote(db), Why: "is not a postgres:// or postgresql:// URL, and ledger takes no other kind: " +
			"give a PostgreSQL URL, or a SQLite file's path (./" + db + " for a file whose name has a colon)"}
	}
	return nil
}

// Is makes a NotLedgerError ErrInvalid.
func (e *NotLedgerError) Is(target error) bool { return target == ErrInvalid }

// Location is where the ledger is, for people: the SQLite file's path, or
// the server's URL without its password.
func (s *Store) Location() string { return s.d.location() }

// Shared tells whether the ledger is a team ledger on a server that many
// machines write (PostgreSQL), rather than this machine's own file: each
// machine keeps its own cursors there, it is what `ledger sync` pushes to,
// and what a forget removes stays in the server's write-ahead log.
func (s *Store) Shared() bool { return s.d.shared() }

// WithHost sets the machine name the store writes on the sessions it
// creates (default: os.Hostname).
func WithHost(host string) Option { return func(s *Store) { s.host = host } }

// Host is the machine name the store writes on the sessions it creates.
func (s *Store) Host() string { return s.host }

// defaultHost is the machine's name, or "" when the system will not say.
func defaultHost() string {
	h, _ := os.Hostname()
	return h
}
