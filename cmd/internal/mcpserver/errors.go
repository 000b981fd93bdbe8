package mcpserver

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/store"
)

// toolError is a tool's failure as the model reads it: one or two
// sentences that say what was wrong and what to do, never a Go error with
// paths, SQL or stack traces in it.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

// usageErrorf is a bad argument the tool itself found.
func usageErrorf(format string, args ...any) error {
	return &toolError{msg: fmt.Sprintf(format, args...)}
}

// errNoSession is a session argument that names no session
// (engine.ErrNotFound).
type errNoSession struct{ arg string }

func (e errNoSession) Error() string { return "no session " + e.arg }

// Is makes an errNoSession engine.ErrNotFound.
func (e errNoSession) Is(target error) bool { return target == engine.ErrNotFound }

// errNoProjectSession is a project with no session in the ledger
// (engine.ErrNotFound).
type errNoProjectSession struct{ project string }

func (e errNoProjectSession) Error() string { return "no session of " + e.project }

// Is makes an errNoProjectSession engine.ErrNotFound.
func (e errNoProjectSession) Is(target error) bool { return target == engine.ErrNotFound }

// toolErr turns what a tool's handler returned into the message a model
// gets, by the error's kind (engine.Kind); it is the one place that does.
// Errors the model can act on say how: a bad argument (the tool's own
// toolError, or an invalid request), an unknown or ambiguous session,
// nothing recorded yet, a read-only ledger, a busy one, a request declined
// on purpose. Anything else is
// logged in full on stderr and reported without its internals.
func (s *Server) toolErr(tool string, err error) error {
	var te *toolError
	if errors.As(err, &te) {
		return te
	}
	switch engine.Kind(err) {
	case engine.ErrInvalid:
		// The engine's own words about the arguments, which may quote
		// them: inside the fence.
		return &toolError{msg: fmt.Sprintf("bad arguments to the %s tool: %s", tool, handoff.Fence(err.Error()))}
	case engine.ErrAmbiguous:
		var amb *store.AmbiguousError
		if errors.As(err, &amb) {
			// The ids come from transcripts: recorded data, inside the fence.
			return &toolError{msg: fmt.Sprintf("%s is ambiguous: it begins %d session ids, listed below. Pass more of the id; the sessions tool lists them.\n%s",
				sessionName("", amb.Prefix), len(amb.Candidates), handoff.Fence(strings.Join(amb.Candidates, ", ")))}
		}
	case engine.ErrNotFound:
		var ns errNoSession
		var np errNoProjectSession
		switch {
		case errors.As(err, &ns):
			return &toolError{msg: fmt.Sprintf("no %s in the ledger. Call the sessions tool to list the sessions it holds (pass a full id or a unique prefix of one); a session the ledger has not seen yet appears once its transcript is ingested (ledger's hooks, or `ledger ingest`).", sessionName("", ns.arg))}
		case errors.As(err, &np):
			return &toolError{msg: fmt.Sprintf("the ledger has no session of project %s yet. Call the sessions tool without a project to list every session it holds; a project's sessions appear once their transcripts are ingested (ledger's hooks, or `ledger ingest`).", np.project)}
		}
		return &toolError{msg: fmt.Sprintf("the ledger holds nothing this %s call asked for (below). The sessions tool lists what it holds.\n%s", tool, handoff.Fence(err.Error()))}
	case engine.ErrReadOnly:
		why := err
		var ro *store.ReadOnlyError
		if errors.As(err, &ro) {
			why = ro.Err
		}
		return &toolError{msg: fmt.Sprintf("the ledger is read-only for this server (%v): the %s tool writes to it, so it cannot run here; the other tools read the ledger as it is.", why, tool)}
	case engine.ErrBusy:
		return &toolError{msg: fmt.Sprintf("the ledger is busy: another process held its write lock past the wait, and the %s tool wrote nothing. Call it again in a moment.", tool)}
	case engine.ErrBlocked:
		return &toolError{msg: fmt.Sprintf("the %s tool declined on purpose: %s", tool, handoff.Fence(err.Error()))}
	}
	s.log.Error("tool failed", "tool", tool, "err", handoff.Shorten(err.Error(), 2000))
	return &toolError{msg: fmt.Sprintf("ledger's %s tool could not answer: the ledger's database failed (details on the server's stderr). Try again; if it keeps failing, run `ledger doctor`.", tool)}
}
