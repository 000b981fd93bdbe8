package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/transcript"
)

// Meter is a session's context in use now, against its model's window
// (`ledger meter --json`, docs/contract.md).
type Meter struct {
	Session       string                    `json:"session"`
	Model         string                    `json:"model"`
	UsedTokens    int64                     `json:"used_tokens"`
	LimitTokens   int64                     `json:"limit_tokens"`
	Ratio         float64                   `json:"ratio"`
	Exact         bool                      `json:"exact"`
	ShouldCompact bool                      `json:"should_compact"`
	MustCompact   bool                      `json:"must_compact"`
	Categories    map[string]compact.Amount `json:"categories"`
	LimitSource   string                    `json:"limit_source"`
	// LimitFromAgent says the agent stated the window (or the caller named
	// the model); without it LimitTokens is ledger's guess from its table.
	LimitFromAgent bool   `json:"limit_from_agent"`
	Summary        string `json:"summary"`
}

// SessionView is what the meter needs of a session, read from a
// transcript file or from the ledger.
type SessionView struct {
	ID            string
	Model         string
	ContextWindow int64
	// Usage is the latest session-level usage (Codex token_count); Claude
	// usage rides on the messages.
	Usage *compact.Usage
	// UsageTotalOnly says Usage holds the context's total only, in
	// InputTokens (a Codex session read from the ledger, which keeps no
	// split of it).
	UsageTotalOnly bool
	Messages       []compact.Message
}

// MeterOptions override what a session says of its model.
type MeterOptions struct {
	Model string   // the model whose window to measure against
	Betas []string // anthropic-beta values the requests carry
}

// Meter measures a session's context now. target is a transcript file,
// read directly, or else a session id or prefix in the ledger.
func (e *Engine) Meter(ctx context.Context, target string, o MeterOptions) (Meter, error) {
	v, err := e.View(ctx, target)
	if err != nil {
		return Meter{}, err
	}
	if o.Model != "" {
		v.Model = o.Model
	}
	return meterOf(v, o.Betas), nil
}

// View reads a session for the meter: target is a transcript file, else a
// session id or prefix in the ledger.
func (e *Engine) View(ctx context.Context, target string) (SessionView, error) {
	if fi, err := os.Stat(target); err == nil && !fi.IsDir() {
		return ReadTranscriptFile(ctx, target)
	}
	return e.loadSession(ctx, target)
}

// meterOf measures a session's context now: exact from the last usage when
// the transcript has one, else estimated over what followed the latest
// compaction.
func meterOf(v SessionView, betas []string) Meter {
	win := compact.ContextLimit(v.Model, betas).Reported(v.ContextWindow)
	live := liveContext(v.Messages)
	meter := compact.NewMeter(compact.Request{Messages: live}, win.Tokens, nil)
	exact := false
	parts := meterParts{live: live}
	if u, ok := compact.LastUsage(live); ok {
		meter, exact = meter.WithUsage(u), true
		parts.usage = &u
	} else if v.Usage != nil {
		meter, exact = meter.WithUsage(*v.Usage), true
		parts.usage, parts.totalOnly = v.Usage, v.UsageTotalOnly
	}
	parts.ratio = meter.Ratio()
	budget := compact.Budget{ContextLimit: win.Tokens, MessageTokens: meter.Used()}
	cats, _ := parts.categories()
	return Meter{Session: v.ID, Model: v.Model, UsedTokens: meter.Used(), LimitTokens: win.Tokens, Ratio: meter.Ratio(),
		Exact: exact, ShouldCompact: budget.ShouldCompact(), MustCompact: budget.MustCompact(), Categories: cats,
		LimitSource: win.Source, LimitFromAgent: win.FromAgent, Summary: parts.line()}
}

// liveContext is the part of a session still in the model's context: the
// main conversation (not subagents) from the latest compaction summary on.
// A session the ledger holds only subagent messages of (its main
// transcript not read, or none) is measured on them, as LastUsage reads
// its usage: they are the only context there is to meter.
func liveContext(msgs []compact.Message) []compact.Message {
	sidechain := len(msgs) > 0
	for _, m := range msgs {
		if !m.Sidechain {
			sidechain = false
			break
		}
	}
	var out []compact.Message
	for _, m := range msgs {
		if m.Sidechain != sidechain {
			continue
		}
		if m.CompactSummary {
			out = out[:0]
		}
		out = append(out, m)
	}
	return out
}

// codexUsage is a Codex (or Copilot CLI) session's latest usage, which
// the ledger keeps on the session (they report usage apart from their
// messages).
func codexUsage(sess store.Session) *compact.Usage {
	if sess.Source != "codex" && sess.Source != "copilot" || sess.ContextTokens <= 0 {
		return nil
	}
	return &compact.Usage{InputTokens: sess.ContextTokens}
}

// ReadTranscriptFile reads a whole transcript without the ledger.
func ReadTranscriptFile(ctx context.Context, path string) (SessionView, error) {
	var v SessionView
	f, err := os.Open(path)
	if err != nil {
		return v, err
	}
	defer f.Close()
	format, err := transcript.Detect(f)
	if err != nil {
		return v, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		return v, err
	}
	st := transcript.State{Format: format, SessionID: transcript.SessionHint(path)}
	_, err = transcript.Read(ctx, f, &st, 0, 1, func(r transcript.Record) error {
		if s := r.Session; s != nil {
			if s.Model != "" {
				v.Model = s.Model
			}
			if s.ContextWindow > 0 {
				v.ContextWindow = s.ContextWindow
			}
			if s.Usage != nil {
				u := *s.Usage
				v.Usage = &u
			}
		}
		if r.Boundary != nil {
			v.Usage = nil // measured before the compaction: stale
		}
		if m := r.Message; m != nil {
			if m.Model != "" && !m.Sidechain {
				v.Model = m.Model
			}
			v.Messages = append(v.Messages, *m)
		}
		return nil
	})
	if err != nil {
		return v, fmt.Errorf("read %s: %w", path, err)
	}
	v.ID = st.SessionID
	return v, nil
}

// LearnWindow records the window the agent stated for a session (Claude
// Code's status line: context_window.context_window_size), so that the
// hooks measure its context against it. It does nothing for a session the
// ledger does not hold yet (the next status line tells it again), and
// writes only when the ledger holds another window: an engine that reads
// (the status line's) opens the ledger to write then, and a ledger it
// cannot write keeps what it holds.
func (e *Engine) LearnWindow(ctx context.Context, session string, tokens int64) error {
	if session == "" || tokens <= 0 {
		return nil
	}
	if have, err := e.WindowOnRecord(ctx, session); err != nil || have == tokens {
		return err
	}
	w, done, err := e.writer(ctx)
	if err != nil {
		return err
	}
	defer done()
	return w.SetContextWindow(ctx, session, tokens)
}

// loadSession reads a session from the ledger.
func (e *Engine) loadSession(ctx context.Context, id string) (SessionView, error) {
	st, sess, err := e.Session(ctx, id)
	if err != nil {
		if notFound(err) {
			if _, serr := os.Stat(id); errors.Is(serr, fs.ErrNotExist) {
				return SessionView{}, fmt.Errorf("no session or transcript file %q: %w", id, ErrNotFound)
			}
		}
		return SessionView{}, err
	}
	msgs, err := st.Messages(ctx, sess.ID, 0)
	if err != nil {
		return SessionView{}, err
	}
	v := SessionView{ID: sess.ID, Model: sess.Model, ContextWindow: sess.ContextWindow, Messages: msgs, Usage: codexUsage(sess)}
	v.UsageTotalOnly = v.Usage != nil
	for i := len(msgs) - 1; i >= 0 && v.Model == ""; i-- {
		if !msgs[i].Sidechain {
			v.Model = msgs[i].Model
		}
	}
	if live := liveContext(msgs); len(live) > 0 && live[0].Sidechain {
		for i := len(msgs) - 1; i >= 0 && v.Model == ""; i-- {
			v.Model = msgs[i].Model // subagent messages only: theirs
		}
	}
	return v, nil
}
