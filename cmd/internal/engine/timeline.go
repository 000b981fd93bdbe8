package engine

import (
	"context"
	"time"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/store"
)

// Timeline is a session's context over its life, for a plot: the context
// in use at every API response, the model's window and the thresholds
// where compacting is advised (80% of the input window) and where the
// next request risks not fitting (95%), and where each compaction cut the
// conversation and each handoff was written.
type Timeline struct {
	Session store.Session
	// Window is the model's context window; Should and Must are the 80%
	// and 95% thresholds of its input window (the window less the room
	// kept for output), in tokens.
	Window, Should, Must int64
	WindowSource         string
	// Model is the session's model, else its last response's.
	Model  string
	Points []store.ContextPoint
	// Peak is the largest context of Points and of the compactions'
	// pre-compaction figures.
	Peak        int64
	Compactions []Mark
	Handoffs    []Mark
	// LastSeq is the seq of the session's last message (-1: none).
	LastSeq int64
}

// Mark places a compaction or a handoff in a session's conversation.
type Mark struct {
	ID      int64
	Seq     int64 // the last message before it
	At      time.Time
	Trigger string
	Source  string // a compaction's: transcript, hook or cli
	Tokens  int64  // a compaction's pre-compaction context, a handoff's size
}

// Timeline reads a session's timeline; sessionArg is an id or prefix.
func (e *Engine) Timeline(ctx context.Context, sessionArg string) (Timeline, error) {
	st, sess, err := e.Session(ctx, sessionArg)
	if err != nil {
		return Timeline{}, err
	}
	// seq numbers a session's messages from 0, one by one.
	tl := Timeline{Session: sess, LastSeq: sess.Messages - 1}
	if tl.Points, err = st.ContextSeries(ctx, sess.ID); err != nil {
		return tl, err
	}
	model := sess.Model
	if n := len(tl.Points); model == "" && n > 0 {
		model = tl.Points[n-1].Model // the model of the last response, as the meter takes it
	}
	win := compact.ContextLimit(model, nil).Reported(sess.ContextWindow)
	tl.Window, tl.WindowSource, tl.Model = win.Tokens, win.Source, model
	input := compact.Budget{ContextLimit: win.Tokens}.InputWindow()
	tl.Should = int64(float64(input) * compact.DefaultShouldCompactAt)
	tl.Must = int64(float64(input) * compact.DefaultMustCompactAt)
	for _, p := range tl.Points {
		tl.Peak = max(tl.Peak, p.Tokens)
	}
	cs, err := st.Compactions(ctx, store.CompactionFilter{SessionID: sess.ID})
	if err != nil {
		return tl, err
	}
	for _, c := range cs {
		seq, _, err := st.CutSeq(ctx, c)
		if err != nil {
			return tl, err
		}
		tl.Compactions = append(tl.Compactions, Mark{ID: c.ID, Seq: seq, At: c.At, Trigger: c.Trigger, Source: c.Source,
			Tokens: orZero(c.PreTokens)})
		tl.Peak = max(tl.Peak, orZero(c.PreTokens))
	}
	hs, err := st.Handoffs(ctx, sess.ID, 0)
	if err != nil {
		return tl, err
	}
	for i := len(hs) - 1; i >= 0; i-- { // oldest first
		h := hs[i]
		seq, _, err := st.CutSeq(ctx, store.Compaction{SessionID: sess.ID, At: h.CreatedAt})
		if err != nil {
			return tl, err
		}
		tl.Handoffs = append(tl.Handoffs, Mark{ID: h.ID, Seq: seq, At: h.CreatedAt, Trigger: h.Trigger, Tokens: int64(h.Tokens)})
	}
	return tl, nil
}

// SessionListing is one page of sessions as a viewer lists them: each
// with its peak context and latest handoff.
type SessionListing struct {
	Sessions []store.Session
	Peaks    map[string]int64         // by session id; absent: no usage recorded
	Handoffs map[string]store.Handoff // the latest of each (its document left out)
	More     bool                     // another page follows
}

// ListSessions lists one page of sessions, newest activity first. The
// filter's Limit is the page size; one more row is read to tell whether a
// page follows.
func (e *Engine) ListSessions(ctx context.Context, f store.SessionFilter) (SessionListing, error) {
	st, err := e.Store(ctx)
	if err != nil {
		return SessionListing{}, err
	}
	if f.Project != "" {
		f.Project = AbsPath(f.Project)
	}
	page := f.Limit
	if page > 0 {
		f.Limit++
	}
	list, err := st.Sessions(ctx, f)
	if err != nil {
		return SessionListing{}, err
	}
	out := SessionListing{Sessions: list}
	if page > 0 && len(list) > page {
		out.Sessions, out.More = list[:page], true
	}
	ids := make([]string, len(out.Sessions))
	for i, s := range out.Sessions {
		ids[i] = s.ID
	}
	if out.Peaks, err = st.PeakContexts(ctx, ids); err != nil {
		return out, err
	}
	out.Handoffs, err = st.LatestHandoffs(ctx, ids)
	return out, err
}
