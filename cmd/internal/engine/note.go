package engine

import (
	"context"
	"strings"

	"github.com/agentledger/ledger/store"
)

// NoteRequest is a fact to record for a session's next handoff.
type NoteRequest struct {
	// Session is a session id or unique prefix; "" for the latest session
	// of Project.
	Session, Project string
	Kind, Text       string
}

// Note records a note (decision, next or blocker) for a session: its next
// handoff carries it verbatim, and search finds it.
func (e *Engine) Note(ctx context.Context, req NoteRequest) (store.Note, error) {
	text := strings.TrimSpace(req.Text)
	if text == "" {
		return store.Note{}, invalidf("an empty note")
	}
	st, err := e.Store(ctx)
	if err != nil {
		return store.Note{}, err
	}
	var sess store.Session
	if req.Session != "" {
		sess, err = st.Session(ctx, req.Session)
	} else {
		sess, err = e.LatestProjectSession(ctx, req.Project, "")
	}
	if err != nil {
		return store.Note{}, err
	}
	return st.AddNote(ctx, store.Note{SessionID: sess.ID, Kind: req.Kind, Text: text, CreatedAt: e.stamp()})
}
