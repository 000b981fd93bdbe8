package engine

import (
	"context"
	"strconv"

	"github.com/agentledger/ledger/handoff"
)

// Handoffs lists handoffs, newest first: every one, or one session's
// (sessionArg, a full id or a prefix); at most limit when limit > 0.
func (e *Engine) Handoffs(ctx context.Context, sessionArg string, limit int) ([]handoff.Doc, error) {
	session, err := e.OptionalSessionID(ctx, sessionArg)
	if err != nil {
		return nil, err
	}
	st, err := e.Store(ctx)
	if err != nil {
		return nil, err
	}
	hs, err := st.Handoffs(ctx, session, limit)
	if err != nil {
		return nil, err
	}
	docs := make([]handoff.Doc, 0, len(hs))
	for _, h := range hs {
		d, err := h.Doc()
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	return docs, nil
}

// FindHandoff resolves ID|SESSION: a number is a handoff id when such a
// handoff exists; anything else (or a number that is no handoff id) is a
// session, whose latest handoff it is.
func (e *Engine) FindHandoff(ctx context.Context, arg string) (handoff.Doc, error) {
	st, err := e.Store(ctx)
	if err != nil {
		return handoff.Doc{}, err
	}
	if id, err := strconv.ParseInt(arg, 10, 64); err == nil {
		if h, err := st.Handoff(ctx, id); err == nil {
			return h.Doc()
		}
	}
	sess, err := st.Session(ctx, arg)
	if err != nil {
		return handoff.Doc{}, err
	}
	h, err := st.LatestHandoff(ctx, sess.ID)
	if err != nil {
		return handoff.Doc{}, err
	}
	return h.Doc()
}
