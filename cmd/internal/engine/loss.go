package engine

import (
	"context"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/store"
)

// The loss report: for a compaction, the state of the work at its cut as
// the handoff engine extracts it (handoff.Extract over the messages before
// the cut), and which of its items the compaction's summary kept and which
// it dropped; beside it, the same for ledger's handoff. The items are
// matched by the rules in lossmatch.go.

// Sections of the state of the work, in the order they are reported.
const (
	LossFiles     = "files"     // files modified
	LossTasks     = "tasks"     // tracker items still open
	LossErrors    = "errors"    // failures still open
	LossRequests  = "requests"  // what the user asked, the first request included
	LossDecisions = "decisions" // decisions taken
)

// LossSections are the sections in report order.
var LossSections = []string{LossFiles, LossTasks, LossErrors, LossRequests, LossDecisions}

// LossItem is one item of the state of the work and whether a text kept it.
type LossItem struct {
	Text string `json:"text"`
	Kept bool   `json:"kept"`
}

// LossSection is one section's items as a text kept or dropped them.
type LossSection struct {
	Name    string     `json:"name"`
	Kept    int        `json:"kept"`
	Dropped int        `json:"dropped"`
	Items   []LossItem `json:"items"`
}

// LossSide is one text (a compaction summary or a handoff) measured
// against the state of the work.
type LossSide struct {
	// Tokens is the text's size by ledger's estimator.
	Tokens   int           `json:"tokens"`
	Kept     int           `json:"kept"`
	Dropped  int           `json:"dropped"`
	Sections []LossSection `json:"sections"`
	// Text is the summary or the handoff's Markdown (not in the JSON:
	// `ledger handoff show` and the compaction page show it).
	Text string `json:"-"`
}

// LossHandoff is ledger's handoff at the cut, measured like the summary.
type LossHandoff struct {
	LossSide
	// ID is the stored handoff's id when ledger wrote one for this
	// compaction (source hook or cli); nil when it is the handoff ledger
	// extracts at the cut now, at the default budget.
	ID *int64 `json:"id"`
}

// Loss is the loss report of one compaction.
type Loss struct {
	Compaction int64  `json:"compaction"`
	Session    string `json:"session"`
	At         Time   `json:"at"`
	Trigger    string `json:"trigger"`
	Source     string `json:"source"`
	PreTokens  *int64 `json:"pre_tokens"`
	// CutMessages is how many messages preceded the cut.
	CutMessages int `json:"cut_messages"`
	// Summary is the compaction's native summary (Claude Code's summary
	// after compact_boundary, Codex's compacted item); nil when the
	// compaction has none (a record ledger wrote that no transcript
	// boundary completed).
	Summary *LossSide   `json:"summary"`
	Handoff LossHandoff `json:"handoff"`
}

// LossReports is `ledger audit --loss`: the loss report of every
// compaction with a native summary or a handoff of ledger's, oldest first,
// of every session or of one (an id or prefix).
func (e *Engine) LossReports(ctx context.Context, sessionArg string) ([]Loss, error) {
	st, list, err := e.compactions(ctx, sessionArg, time.Time{})
	if err != nil {
		return nil, err
	}
	out := []Loss{}
	for _, c := range list {
		if c.Summary == "" && !c.HandoffID.Valid {
			continue
		}
		l, err := e.loss(ctx, st, c)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// LossReport is the loss report of one compaction, by its id.
func (e *Engine) LossReport(ctx context.Context, compactionID int64) (Loss, error) {
	st, err := e.Store(ctx)
	if err != nil {
		return Loss{}, err
	}
	c, err := st.CompactionByID(ctx, compactionID)
	if err != nil {
		return Loss{}, err
	}
	return e.loss(ctx, st, c)
}

func (e *Engine) loss(ctx context.Context, st *store.Store, c store.Compaction) (Loss, error) {
	l := Loss{Compaction: c.ID, Session: c.SessionID, At: Time(c.At), Trigger: c.Trigger, Source: c.Source,
		PreTokens: nullInt(c.PreTokens.Int64, c.PreTokens.Valid)}
	state, n, err := e.stateAtCut(ctx, st, c)
	if err != nil {
		return l, err
	}
	l.CutMessages = n
	count := compact.DefaultEstimator().Tokens
	if c.Summary != "" {
		s := measure(state, c.Summary, count)
		l.Summary = &s
	}
	if c.HandoffID.Valid {
		h, err := st.Handoff(ctx, c.HandoffID.Int64)
		if err != nil && !notFound(err) {
			return l, err
		}
		if err == nil {
			l.Handoff = LossHandoff{LossSide: measure(state, h.Markdown, count), ID: &h.ID}
			l.Handoff.Tokens = h.Tokens
			return l, nil
		}
	}
	doc := state.Rendered(handoff.DefaultBudget, count)
	l.Handoff = LossHandoff{LossSide: measure(state, doc.Markdown, count)}
	l.Handoff.Tokens = doc.Tokens
	return l, nil
}

// stateAtCut is the handoff the engine extracts from what the session
// held at the compaction's cut, and how many messages that was.
func (e *Engine) stateAtCut(ctx context.Context, st *store.Store, c store.Compaction) (handoff.Doc, int, error) {
	sess, err := st.Session(ctx, c.SessionID)
	if err != nil {
		return handoff.Doc{}, 0, err
	}
	seq, ok, err := st.CutSeq(ctx, c)
	if err != nil || !ok {
		return handoff.Doc{}, 0, err
	}
	at := c.At
	if t, err := st.MessageAt(ctx, sess.ID, seq); err == nil && !t.IsZero() {
		at = t
	}
	msgs, err := st.MessagesThrough(ctx, sess.ID, seq, at)
	if err != nil {
		return handoff.Doc{}, 0, err
	}
	// The summarizer's own run (Claude Code's acompact subagent) is the
	// compaction, not the work.
	msgs = slices.DeleteFunc(msgs, func(m compact.Message) bool {
		return m.Sidechain && strings.HasPrefix(m.AgentID, "acompact")
	})
	notes, err := st.HandoffNotes(ctx, sess.ID)
	if err != nil {
		return handoff.Doc{}, 0, err
	}
	var before []handoff.Note
	for _, n := range notes {
		if !n.CreatedAt.After(c.At) {
			before = append(before, n)
		}
	}
	prior, err := st.Compactions(ctx, store.CompactionFilter{SessionID: sess.ID})
	if err != nil {
		return handoff.Doc{}, 0, err
	}
	earlier := 0
	for _, p := range prior {
		if p.At.Before(c.At) {
			earlier++
		}
	}
	doc := handoff.Extract(msgs, handoff.ExtractOptions{SessionID: sess.ID, Project: sess.Project, Branch: sess.GitBranch,
		Trigger: c.Trigger, ContextUsed: c.PreTokens.Int64, Compactions: earlier, Notes: before})
	return doc, len(msgs), nil
}

// measure checks every item of the state of the work against text.
func measure(state handoff.Doc, text string, count func(string) int) LossSide {
	t := newLossText(text)
	side := LossSide{Tokens: count(text), Text: text}
	for _, name := range LossSections {
		sec := LossSection{Name: name, Items: []LossItem{}}
		add := func(item string, kept bool) {
			sec.Items = append(sec.Items, LossItem{Text: item, Kept: kept})
			if kept {
				sec.Kept++
			} else {
				sec.Dropped++
			}
		}
		switch name {
		case LossFiles:
			bases := map[string]int{}
			for _, f := range state.FilesModified {
				bases[path.Base(f)]++
			}
			for _, f := range state.FilesModified {
				shown := f // under the project, relative to it, as the handoff shows it
				if state.Project != "" {
					shown = strings.TrimPrefix(f, strings.TrimSuffix(state.Project, "/")+"/")
				}
				add(shown, t.coversFile(f, state.Project, bases[path.Base(f)] > 1))
			}
		case LossTasks:
			for _, k := range state.Tasks {
				if k.Open() {
					label := k.Subject
					if k.ID != "" && !isDigits(k.ID) {
						label = k.ID + ": " + k.Subject
					}
					add(label, t.coversTask(k.ID, k.Subject))
				}
			}
		case LossErrors:
			for _, x := range state.Errors {
				add(x, t.coversError(x))
			}
		case LossRequests:
			for _, r := range state.Requests {
				add(r, t.coversWords(r))
			}
		case LossDecisions:
			for _, d := range state.Decisions {
				add(d, t.coversWords(d))
			}
		}
		side.Kept += sec.Kept
		side.Dropped += sec.Dropped
		side.Sections = append(side.Sections, sec)
	}
	return side
}
