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
	// boundary completed). A partial compaction kept its last messages
	// verbatim besides: what they hold counts as kept.
	Summary *LossSide `json:"summary"`
	// PreservedMessages is how many messages the compaction kept
	// verbatim (0: the summary replaced them all).
	PreservedMessages int64       `json:"preserved_messages"`
	Handoff           LossHandoff `json:"handoff"`
	// UsedAfter is what the agent used after the compaction that already
	// existed before it, and which of it the summary and the handoff
	// carried; nil when no work followed the compaction.
	UsedAfter *LossUsed `json:"used_after"`
}

// LossUsed is the working set the agent used after a compaction: in its
// first tool calls of the main conversation (up to handoff.DefaultUsedCalls
// and to the next compaction), the files it read or changed, the commands
// it ran, the tests it named, the tracker items it worked on, each of them
// named before the cut (what a summary could have known).
type LossUsed struct {
	// Calls is how many tool calls were read.
	Calls int `json:"calls"`
	// Total is how many items there are; Summary and Handoff how many of
	// them each text carried (Summary is 0 without a summary).
	Total   int            `json:"total"`
	Summary int            `json:"summary"`
	Handoff int            `json:"handoff"`
	Items   []LossUsedItem `json:"items"`
}

// LossUsedItem is one item used after a compaction, and whether the
// compaction's summary and ledger's handoff carried it.
type LossUsedItem struct {
	Kind    string `json:"kind"` // file, command, test, task
	Text    string `json:"text"`
	Summary bool   `json:"summary"`
	Handoff bool   `json:"handoff"`
}

// LossTotals sums the used-after measure over reports.
type LossTotals struct {
	Compactions int `json:"compactions"` // with work after them
	Total       int `json:"total"`
	Summary     int `json:"summary"`
	Handoff     int `json:"handoff"`
	// SummaryTokens and HandoffTokens are the texts' sizes summed over the
	// same compactions (SummaryTokens over those with a summary).
	SummaryTokens int `json:"summary_tokens"`
	HandoffTokens int `json:"handoff_tokens"`
}

// TotalUsed sums what the agent used after each compaction and what the
// summaries and handoffs carried of it.
func TotalUsed(reports []Loss) LossTotals {
	var t LossTotals
	for _, l := range reports {
		u := l.UsedAfter
		if u == nil || u.Total == 0 {
			continue
		}
		t.Compactions++
		t.Total += u.Total
		t.Summary += u.Summary
		t.Handoff += u.Handoff
		if l.Summary != nil {
			t.SummaryTokens += l.Summary.Tokens
		}
		t.HandoffTokens += l.Handoff.Tokens
	}
	return t
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
		if c.Summary == "" && c.HandoffID == nil {
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
		PreTokens: c.PreTokens, PreservedMessages: c.PreservedMessages}
	cut, err := e.stateAtCut(ctx, st, c)
	if err != nil {
		return l, err
	}
	state := cut.doc
	l.CutMessages = len(cut.msgs)
	count := compact.DefaultEstimator().Tokens
	// What a partial compaction kept verbatim is kept: measured with the
	// summary (its tokens still the summary's own).
	summaryText := c.Summary
	if c.Summary != "" {
		kept, err := st.PreservedText(ctx, c)
		if err != nil {
			return l, err
		}
		if kept != "" {
			summaryText += "\n\n" + kept
		}
		s := measure(state, summaryText, count)
		s.Tokens, s.Text = count(c.Summary), c.Summary
		l.Summary = &s
	}
	handoffText := ""
	if c.HandoffID != nil {
		h, err := st.Handoff(ctx, *c.HandoffID)
		if err != nil && !notFound(err) {
			return l, err
		}
		if err == nil {
			l.Handoff = LossHandoff{LossSide: measure(state, h.Markdown, count), ID: &h.ID}
			l.Handoff.Tokens = h.Tokens
			handoffText = h.Markdown
		}
	}
	if handoffText == "" {
		doc := state.Rendered(handoff.DefaultBudget, count)
		l.Handoff = LossHandoff{LossSide: measure(state, doc.Markdown, count)}
		l.Handoff.Tokens = doc.Tokens
		handoffText = doc.Markdown
	}
	if cut.ok {
		if l.UsedAfter, err = usedAfter(ctx, st, c, cut, summaryText, handoffText); err != nil {
			return l, err
		}
	}
	return l, nil
}

// usedAfterMessages caps the messages read after a cut for what the agent
// used: enough for handoff.DefaultUsedCalls calls and their subagents.
const usedAfterMessages = 800

// usedAfter measures what the agent used after compaction c (see
// LossUsed) against the summary and the handoff's text.
func usedAfter(ctx context.Context, st *store.Store, c store.Compaction, cut cutState, summary, handoffText string) (*LossUsed, error) {
	after, _, err := st.MessageRange(ctx, c.SessionID, cut.seq+1, cut.seq+1+usedAfterMessages)
	if err != nil {
		return nil, err
	}
	// The compaction's own summarizer (Claude Code's compact subagent)
	// ran between the cut and its summary, in time order: its messages
	// are the compaction's, not work after it.
	if i := slices.IndexFunc(after, func(m compact.Message) bool { return !m.Sidechain }); i > 0 && after[i].CompactSummary {
		after = after[i:]
	}
	// The work after this compaction, up to the next one: its summary
	// message starts the next stretch.
	for i, m := range after {
		if i > 0 && m.CompactSummary {
			after = after[:i]
			break
		}
	}
	if len(after) == 0 {
		return nil, nil
	}
	items := handoff.UsedAfter(after, handoff.UsedOptions{Project: cut.project, Before: cut.doc.Tasks})
	calls := 0
	for _, m := range after {
		if !m.Sidechain {
			for _, b := range m.Blocks {
				if b.Kind == compact.BlockToolUse {
					calls++
				}
			}
		}
	}
	if calls == 0 {
		return nil, nil
	}
	u := &LossUsed{Calls: min(calls, handoff.DefaultUsedCalls), Items: []LossUsedItem{}}
	var before strings.Builder
	for _, m := range cut.msgs {
		before.WriteString(m.SearchText())
		before.WriteByte('\n')
	}
	pre := before.String()
	for _, it := range items {
		if !it.ExistedIn(pre) {
			continue // new after the cut: nothing could have carried it
		}
		row := LossUsedItem{Kind: it.Kind, Text: it.Text, Summary: summary != "" && it.CarriedBy(summary),
			Handoff: it.CarriedBy(handoffText)}
		u.Items = append(u.Items, row)
		u.Total++
		if row.Summary {
			u.Summary++
		}
		if row.Handoff {
			u.Handoff++
		}
	}
	return u, nil
}

// cutState is what a session held at a compaction's cut.
type cutState struct {
	doc     handoff.Doc       // the handoff the engine extracts from it
	msgs    []compact.Message // the messages before the cut
	seq     int64             // the cut's seq
	ok      bool              // the cut was found
	project string
}

// stateAtCut is what the session held at the compaction's cut, and the
// handoff the engine extracts from it.
func (e *Engine) stateAtCut(ctx context.Context, st *store.Store, c store.Compaction) (cutState, error) {
	sess, err := st.Session(ctx, c.SessionID)
	if err != nil {
		return cutState{}, err
	}
	seq, ok, err := st.CutSeq(ctx, c)
	if err != nil || !ok {
		return cutState{}, err
	}
	at := c.At
	if t, err := st.MessageAt(ctx, sess.ID, seq); err == nil && !t.IsZero() {
		at = t
	}
	msgs, err := st.MessagesThrough(ctx, sess.ID, seq, at)
	if err != nil {
		return cutState{}, err
	}
	// The summarizer's own run (Claude Code's acompact subagent) is the
	// compaction, not the work.
	msgs = slices.DeleteFunc(msgs, func(m compact.Message) bool {
		return m.Sidechain && strings.HasPrefix(m.AgentID, "acompact")
	})
	notes, err := st.HandoffNotes(ctx, sess.ID)
	if err != nil {
		return cutState{}, err
	}
	var before []handoff.Note
	for _, n := range notes {
		if !n.CreatedAt.After(c.At) {
			before = append(before, n)
		}
	}
	prior, err := st.Compactions(ctx, store.CompactionFilter{SessionID: sess.ID})
	if err != nil {
		return cutState{}, err
	}
	earlier := 0
	for _, p := range prior {
		if p.At.Before(c.At) {
			earlier++
		}
	}
	doc := handoff.Extract(msgs, handoff.ExtractOptions{SessionID: sess.ID, Project: sess.Project, Branch: sess.GitBranch,
		Trigger: c.Trigger, ContextUsed: orZero(c.PreTokens), Compactions: earlier, Notes: before})
	return cutState{doc: doc, msgs: msgs, seq: seq, ok: true, project: sess.Project}, nil
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
