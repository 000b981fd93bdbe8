package engine

import (
	"errors"
	"fmt"

	"github.com/agentledger/ledger/store"
)

// The kinds of error the engine's callers tell apart, with Kind. Each front
// door maps them to what its clients read, in one place: the command line
// to its exit codes (cmd/ledger's exitCode), the web view to HTTP statuses
// (web's failErr), the MCP server to tool errors (mcpserver's toolErr).
// Any other error is a failure of the ledger; its message says what.
var (
	// ErrNotFound: the session, handoff, file or row asked for does not
	// exist.
	ErrNotFound = store.ErrNotFound
	// ErrAmbiguous: a session prefix matches several sessions
	// (*store.AmbiguousError names them).
	ErrAmbiguous = store.ErrAmbiguous
	// ErrInvalid: the request cannot be served as asked (a bad argument, a
	// location that is no ledger).
	ErrInvalid = store.ErrInvalid
	// ErrReadOnly: a write to a ledger this process cannot write or opened
	// read-only (*store.ReadOnlyError, or the database refusing it).
	ErrReadOnly = store.ErrReadOnly
	// ErrBusy: another writer held the ledger's write lock past the wait;
	// nothing was written, and the request may be made again.
	ErrBusy = store.ErrBusy
	// ErrBlocked: the engine declines the request on purpose (BlockError:
	// a hook that blocks an agent's compaction in clear mode).
	ErrBlocked = errors.New("blocked")
)

// Kind is the kind of err (one of the Err kinds above), or nil for any
// other failure and for nil.
func Kind(err error) error {
	if errors.Is(err, ErrBlocked) {
		return ErrBlocked
	}
	return store.Kind(err)
}

// invalidError is a request the engine cannot serve as asked: ErrInvalid.
type invalidError struct{ msg string }

func (e invalidError) Error() string { return e.msg }

// Is makes an invalidError ErrInvalid.
func (e invalidError) Is(target error) bool { return target == ErrInvalid }

// invalidf is an invalid request, its message formatted as fmt.Sprintf's.
func invalidf(format string, args ...any) error {
	return invalidError{fmt.Sprintf(format, args...)}
}
