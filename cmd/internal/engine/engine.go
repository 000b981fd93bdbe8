package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentledger/ledger/store"
)

// Mode says what a front door does with the ledger, and so how Open's
// engine opens it.
type Mode int

const (
	// Read opens a ledger that is there, read-only (store.ReadOnly):
	// reading works where writing cannot (another user's ledger, a
	// read-only mount) and can write nothing by mistake. A ledger that is
	// not there is a *store.NoLedgerError: reading creates nothing. One
	// whose schema is behind this binary's is migrated first, on a
	// connection closed again.
	Read Mode = iota + 1
	// Write opens the ledger read-write, creating and migrating it.
	Write
	// WriteOrRead writes when it can and reads a ledger this process
	// cannot write: a hook, which still injects context there, and the MCP
	// server, whose tools still answer. It creates a ledger that is not
	// there.
	WriteOrRead
	// Inspect is WriteOrRead that never creates a ledger (doctor: FTS5's
	// own integrity check is a write, and a ledger that is not there is
	// reported, not made).
	Inspect
)

// String is the mode's name, as the commands' declarations read.
func (m Mode) String() string {
	switch m {
	case Read:
		return "read"
	case Write:
		return "write"
	case WriteOrRead:
		return "write-or-read"
	case Inspect:
		return "inspect"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Config is what Open needs: where the ledger is, what the front door does
// with it, and what the front doors share.
type Config struct {
	// DB is the ledger: a SQLite file's path or a PostgreSQL URL.
	DB string
	// DBError, when set, is why DB could not be found (a bad $LEDGER_DB,
	// no home folder): every use of the ledger fails with it, and what
	// needs no ledger still runs (a hook fails open, doctor checks the
	// set-up, the status line prints its line).
	DBError error
	// Mode is how the ledger is opened (Read, Write, WriteOrRead,
	// Inspect).
	Mode Mode
	// Home is the user's home folder, for a hook's "~/..." transcript path
	// and the hook log.
	Home string
	// Now is the clock of handoffs and compaction records (default
	// time.Now).
	Now func() time.Time
	// Host names this machine on a team ledger (default: the system's
	// host name).
	Host string
	// Local is where a team ledger's files go on this machine (pending
	// handoffs): the SQLite ledger's path this machine would use. Only a
	// PostgreSQL DB uses it.
	Local string
	// NoRedact stores secrets as they come (--no-redact).
	NoRedact bool
	// Warn receives a one-line warning about the ledger as opened (a WAL
	// a read-only open cannot see); nil: none.
	Warn io.Writer
	// HookTimeScale multiplies a hook run's budget and its waits (0: 1,
	// the budgets agents are promised). Only tests set it: under the race
	// detector on a loaded machine a hook's work takes many times what it
	// takes a user, and a test of what a hook does, not of its budget
	// (the built binary's tests keep to those), gives it room.
	HookTimeScale float64
}

// Engine is the ledger a front door works on: the store, opened on first
// use (so that a front door that turns out to need nothing, --help or an
// event ledger ignores, touches nothing), and what the front doors share
// (the clock, the user's home folder). It is safe for concurrent use: the
// store opens once, whichever call comes first, and the store's pool
// serves the calls (SQLite's write lock, PostgreSQL's transactions keep
// their writes apart).
type Engine struct {
	cfg  Config
	open func(context.Context) (*store.Store, error)
	// opening holds the one open in progress (a semaphore, so that a
	// caller whose context ends stops waiting for it).
	opening chan struct{}
	st      atomic.Pointer[store.Store]
	now     func() time.Time
	home    string
	// abandoned is set when a hook run returned with its work still
	// running (RunHook), or a front door gave up waiting for a call: the
	// store must not be closed then.
	abandoned atomic.Bool
	// hookScale multiplies a hook run's budget and waits (Config).
	hookScale float64
}

// Open returns the engine of c. It opens nothing yet: the ledger is
// opened, in c.Mode, when a call first needs it, so that Open costs nothing
// for a front door that turns out to need no ledger.
func Open(c Config) (*Engine, error) {
	switch c.Mode {
	case Read, Write, WriteOrRead, Inspect:
	default:
		return nil, fmt.Errorf("open the ledger: unknown mode %v", c.Mode)
	}
	if c.DB == "" && c.DBError == nil {
		return nil, errors.New("open the ledger: no database path")
	}
	return newEngine(c, func(ctx context.Context) (*store.Store, error) { return openStore(ctx, c, c.Mode) }), nil
}

// newEngine is an engine whose store open opens.
func newEngine(c Config, open func(context.Context) (*store.Store, error)) *Engine {
	if c.Now == nil {
		c.Now = time.Now
	}
	return &Engine{cfg: c, open: open, opening: make(chan struct{}, 1), now: c.Now, home: c.Home, hookScale: c.HookTimeScale}
}

// openStore opens c's ledger in mode m: the one place that decides how.
func openStore(ctx context.Context, c Config, m Mode) (*store.Store, error) {
	if c.DBError != nil {
		return nil, c.DBError
	}
	var opts []store.Option
	if store.IsURL(c.DB) {
		opts = append(opts, store.WithLocalPath(c.Local))
		if c.Host != "" {
			opts = append(opts, store.WithHost(c.Host))
		}
	}
	if c.NoRedact {
		opts = append(opts, store.WithoutRedaction())
	}
	switch m {
	case Read:
		st, err := store.Open(ctx, c.DB, append(opts, store.ReadOnly())...)
		if err == nil && st.Stale() && c.Warn != nil {
			fmt.Fprintf(c.Warn, "ledger: warning: %s-wal cannot be read from here: what was written since its last checkpoint is not shown\n", c.DB)
		}
		return st, err
	case Inspect:
		if !store.Exists(c.DB) {
			return nil, &store.NoLedgerError{Path: c.DB}
		}
	}
	st, err := store.Open(ctx, c.DB, opts...)
	if m != Write && Kind(err) == ErrReadOnly {
		return store.Open(ctx, c.DB, append(opts, store.ReadOnly())...)
	}
	return st, err
}

// Mode is how the engine opens the ledger.
func (e *Engine) Mode() Mode { return e.cfg.Mode }

// Store opens the store on first use, and returns it. The front doors' plain
// reads (listings, search, audit) call it directly. Calls that come while
// the store opens wait for that open (or for their ctx); an open that
// failed is tried again by the next call.
func (e *Engine) Store(ctx context.Context) (*store.Store, error) {
	if st := e.st.Load(); st != nil {
		return st, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("open the ledger: %w", err)
	}
	select {
	case e.opening <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("open the ledger: %w", ctx.Err())
	}
	defer func() { <-e.opening }()
	if st := e.st.Load(); st != nil {
		return st, nil
	}
	st, err := e.open(ctx)
	if err != nil {
		return nil, err
	}
	e.st.Store(st)
	return st, nil
}

// Opened is the store if it was opened, else nil.
func (e *Engine) Opened() *store.Store { return e.st.Load() }

// Abandon tells the engine that a call it runs was given up on and may
// still be using the store: Close then leaves the store to the process's
// exit rather than wait for that call.
func (e *Engine) Abandon() { e.abandoned.Store(true) }

// Close closes the store if it was opened, unless a call was abandoned
// (a hook run's work, a late status line) that may still use it: the
// process is about to exit anyway, and closing would wait for that work.
// No call may be running when the engine is closed otherwise.
func (e *Engine) Close() error {
	if e.abandoned.Load() {
		return nil
	}
	if st := e.st.Swap(nil); st != nil {
		return st.Close()
	}
	return nil
}

// writer is a store that writes, for a best-effort write of what a read
// derived (a resume state, a model's window): the engine's own when it can
// write, else one opened now, never creating a ledger, that done closes.
// A ledger this process cannot write, or one on a server, gives an error.
func (e *Engine) writer(ctx context.Context) (st *store.Store, done func(), err error) {
	if st := e.Opened(); st != nil && !st.ReadOnly() {
		return st, func() {}, nil
	}
	if e.cfg.DBError != nil || e.cfg.DB == "" || store.IsURL(e.cfg.DB) || !store.Exists(e.cfg.DB) {
		return nil, nil, errors.New("no ledger to write")
	}
	w, err := openStore(ctx, e.cfg, Write)
	if err != nil {
		return nil, nil, err
	}
	return w, func() { w.Close() }, nil
}

// Session opens the store and resolves a SESSION argument: a full id or a
// unique prefix.
func (e *Engine) Session(ctx context.Context, arg string) (*store.Store, store.Session, error) {
	st, err := e.Store(ctx)
	if err != nil {
		return nil, store.Session{}, err
	}
	sess, err := st.Session(ctx, arg)
	return st, sess, err
}

// OptionalSessionID resolves an optional SESSION argument to a full id; ""
// stays "" (every session).
func (e *Engine) OptionalSessionID(ctx context.Context, arg string) (string, error) {
	if arg == "" {
		return "", nil
	}
	_, sess, err := e.Session(ctx, arg)
	return sess.ID, err
}

// stamp is the time of a handoff or record written now, to the second (the
// precision of handoff file names and of resume's staleness check).
func (e *Engine) stamp() time.Time { return e.now().UTC().Truncate(time.Second) }

// DBPath is where the ledger is by the environment: $LEDGER_DB, else
// $XDG_DATA_HOME/ledger/ledger.db, else ~/.local/share/ledger/ledger.db.
func DBPath(getenv func(string) string) (string, error) {
	if p := getenv("LEDGER_DB"); p != "" {
		return p, nil
	}
	if d := getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "ledger", "ledger.db"), nil
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no database path: set --db or $LEDGER_DB (%w)", err)
		}
		home = h
	}
	return filepath.Join(home, ".local", "share", "ledger", "ledger.db"), nil
}

// AbsPath is path made absolute (as it is when that fails). A PostgreSQL
// URL is not a path: it stays as it is.
func AbsPath(path string) string {
	if store.IsURL(path) {
		return path
	}
	if p, err := filepath.Abs(path); err == nil {
		return p
	}
	return path
}

// expandHome resolves a leading "~/" against the engine's home folder.
func (e *Engine) expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok && e.home != "" {
		return filepath.Join(e.home, rest)
	}
	return p
}

// notFound tells whether err says a row does not exist.
func notFound(err error) bool { return errors.Is(err, ErrNotFound) }
