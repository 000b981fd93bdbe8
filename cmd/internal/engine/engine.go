package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentledger/ledger/store"
)

// Engine is the ledger a front door works on: the store, opened on first
// use (so that a front door that turns out to need nothing, --help or an
// event ledger ignores, touches nothing), and what the front doors share
// (the clock, the user's home folder).
type Engine struct {
	open func(context.Context) (*store.Store, error)
	st   *store.Store
	now  func() time.Time
	home string
	// abandoned is set when a hook run returned with its work still
	// running (RunHook): the store must not be closed then.
	abandoned bool
	// hookScale multiplies a hook run's budget and waits (Options).
	hookScale float64
}

// Options configures an Engine.
type Options struct {
	// Now is the clock of handoffs and compaction records (default
	// time.Now).
	Now func() time.Time
	// Home is the user's home folder, for a hook's "~/..." transcript path.
	Home string
	// HookTimeScale multiplies a hook run's budget and its waits (0: 1,
	// the budgets agents are promised). Only tests set it: under the race
	// detector on a loaded machine a hook's work takes many times what it
	// takes a user, and a test of what a hook does, not of its budget
	// (the built binary's tests keep to those), gives it room.
	HookTimeScale float64
}

// New returns an Engine whose store open opens at its first use.
func New(open func(context.Context) (*store.Store, error), o Options) *Engine {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Engine{open: open, now: o.Now, home: o.Home, hookScale: o.HookTimeScale}
}

// Store opens the store on first use, and returns it. The front doors' plain
// reads (listings, search, audit) call it directly.
func (e *Engine) Store(ctx context.Context) (*store.Store, error) {
	if e.st != nil {
		return e.st, nil
	}
	st, err := e.open(ctx)
	if err != nil {
		return nil, err
	}
	e.st = st
	return st, nil
}

// Opened is the store if it was opened, else nil.
func (e *Engine) Opened() *store.Store { return e.st }

// Close closes the store if it was opened, unless a hook run abandoned
// work that may still use it (the process is about to exit anyway, and
// closing would wait for that work).
func (e *Engine) Close() error {
	if e.st == nil || e.abandoned {
		return nil
	}
	err := e.st.Close()
	e.st = nil
	return err
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
