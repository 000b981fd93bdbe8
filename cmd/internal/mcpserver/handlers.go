package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/store"
)

// Each handler calls the engine as the command of the same name does, and
// renders: a text for the model (the ledger's part fenced as recorded data,
// ledger's own lines outside the fence) and the structured output, whose
// keys are the contract's (docs/contract.md) where the command has --json.

// SearchOut is the search tool's structured output: one page of hits.
type SearchOut struct {
	Notice string `json:"notice"`
	Query  string `json:"query"`
	// AnyWord is true when no hit had every word, so these have some.
	AnyWord    bool         `json:"any_word"`
	Hits       []engine.Hit `json:"hits"`
	Total      int          `json:"total" jsonschema:"hits found in all pages"`
	More       int          `json:"more" jsonschema:"hits after this page"`
	NextCursor string       `json:"next_cursor,omitempty" jsonschema:"pass as cursor for the next page"`
	// BeyondLimit says that more hits exist than limit let through.
	BeyondLimit bool `json:"beyond_limit" jsonschema:"more hits exist past limit: raise it or narrow the search"`
}

func (s *Server) search(ctx context.Context, in SearchIn) (string, SearchOut, error) {
	q := strings.TrimSpace(in.Query)
	if q == "" {
		return "", SearchOut{}, usageErrorf("query is empty: give the words to search for")
	}
	offset, err := offsetCursor(in.Cursor)
	if err != nil {
		return "", SearchOut{}, err
	}
	req := engine.SearchRequest{Text: q}
	req.Kind, req.Limit = in.Kind, orDefault(in.Limit, searchDefault)
	if req.Since, err = engine.ParseTime(in.Since, time.Now()); err != nil {
		return "", SearchOut{}, usageErrorf("since %v", err)
	}
	var warn string
	if in.Session != "" {
		sess, w, err := s.session(ctx, in.Session, "")
		if err != nil {
			return "", SearchOut{}, err
		}
		req.Session, warn = sess.ID, w
	} else {
		warn = s.freshen(ctx, in.Project)
	}
	req.Project = in.Project
	limit := req.Limit
	req.Limit++ // one more tells whether the limit cut the hits short
	res, err := s.eng.Search(ctx, req)
	if err != nil {
		return "", SearchOut{}, err
	}
	hits := engine.Hits(res.Hits)
	beyond := len(hits) > limit
	if beyond {
		hits = hits[:limit]
	}
	render := func(p page) (string, any) {
		out := SearchOut{Notice: notice, Query: q, AnyWord: res.Any, Hits: []engine.Hit{}, Total: p.total, More: p.more(), NextCursor: p.next(), BeyondLimit: beyond}
		var body strings.Builder
		for i, h := range hits[p.offset : p.offset+p.n] {
			h.Snippet, h.Score = handoff.Shorten(strings.TrimSpace(h.Snippet), maxField), round(h.Score)
			out.Hits = append(out.Hits, h)
			who := h.Kind
			if h.Role != "" {
				who += " by " + h.Role
			}
			fmt.Fprintf(&body, "%d. session %s · %s · %s %d\n   %s\n", p.offset+i+1, h.Session, human(time.Time(h.At)), who, h.ID, oneLine(h.Snippet))
		}
		head := warn + pageHead(p, "hits", fmt.Sprintf(" for %q, best first", q), fmt.Sprintf("No hits for %q.\n", q))
		if res.Any && p.n > 0 {
			head += "(no hit has every word; these have some of them)\n"
		}
		tail := pageTail(p, "hits")
		if beyond && p.next() == "" {
			tail += fmt.Sprintf("More hits exist past the first %d: raise limit (up to %d), or narrow the search (session, project, kind, since).\n", limit, searchMax)
		}
		return fenced(head, body.String(), tail), out
	}
	text, out := fitPage(len(hits), offset, 0, s.max, render)
	return text, out.(SearchOut), nil
}

// SessionsOut is the sessions tool's structured output: one page.
type SessionsOut struct {
	Notice     string              `json:"notice"`
	Sessions   []engine.SessionRow `json:"sessions"`
	Total      int                 `json:"total" jsonschema:"sessions the ledger holds (of project, when given)"`
	More       int                 `json:"more" jsonschema:"sessions after this page"`
	NextCursor string              `json:"next_cursor,omitempty" jsonschema:"pass as cursor for the next page"`
}

func (s *Server) sessions(ctx context.Context, in SessionsIn) (string, SessionsOut, error) {
	offset, err := offsetCursor(in.Cursor)
	if err != nil {
		return "", SessionsOut{}, err
	}
	warn := s.freshen(ctx, in.Project)
	limit := orDefault(in.Limit, sessionsDefault)
	project := in.Project
	if project != "" {
		project = engine.AbsPath(project)
	}
	list, err := s.eng.SessionsOf(ctx, store.SessionFilter{Project: project, Limit: limit, Offset: offset})
	if err != nil {
		return "", SessionsOut{}, err
	}
	total, err := s.eng.CountSessions(ctx, in.Project)
	if err != nil {
		return "", SessionsOut{}, err
	}
	rows := engine.SessionRows(list)
	empty := "The ledger holds no sessions yet: they appear once transcripts are ingested (ledger's hooks, or `ledger ingest`).\n"
	if in.Project != "" {
		empty = fmt.Sprintf("No sessions of project %s in the ledger; call sessions without project to list every project's.\n", in.Project)
	}
	render := func(p page) (string, any) {
		out := SessionsOut{Notice: notice, Sessions: []engine.SessionRow{}, Total: p.total, More: p.more(), NextCursor: p.next()}
		var body strings.Builder
		for i, r := range rows[p.offset-offset : p.offset-offset+p.n] {
			r.Title = handoff.Shorten(r.Title, maxField)
			out.Sessions = append(out.Sessions, r)
			clears := ""
			if r.Clears > 0 {
				clears = " · " + plural(r.Clears, "clear")
			}
			fmt.Fprintf(&body, "%d. %s · %s · last activity %s · %d messages · %s%s · project %s\n", p.offset+i+1, r.ID, r.Source,
				human(time.Time(r.LastAt)), r.Messages, plural(r.Compactions, "compaction"), clears, orNone(r.Project))
			if r.Title != "" {
				fmt.Fprintf(&body, "   title: %s\n", oneLine(r.Title))
			}
		}
		head := warn + pageHead(p, "sessions", ", newest activity first", empty)
		return fenced(head, body.String(), pageTail(p, "sessions")), out
	}
	// A page is at most limit sessions, and the cursor goes on through
	// all of them: the total is the ledger's, not the page's.
	text, out := fitPage(total, offset, min(limit, len(rows)), s.max, render)
	return text, out.(SessionsOut), nil
}

// ResumeOut is the resume tool's structured output (`ledger resume
// --format json`); its Markdown is fenced as recorded data.
type ResumeOut struct {
	Notice string `json:"notice"`
	engine.ResumeDoc
}

func (s *Server) resume(ctx context.Context, in ResumeIn) (string, ResumeOut, error) {
	budget := orDefault(in.Budget, handoff.DefaultResumeBudget)
	if budget < handoff.MinBudget {
		return "", ResumeOut{}, usageErrorf("budget %d is too small: at least %d tokens", budget, handoff.MinBudget)
	}
	sess, warn, err := s.session(ctx, in.Session, in.Project)
	if err != nil {
		return "", ResumeOut{}, err
	}
	// The context must fit one result as text and as JSON (where each line
	// break and quote takes two characters): fit it to the room left, and
	// once more if escaping took it over.
	room := s.max - chars(warn) - jsonLen(ResumeOut{notice, engine.ResumeDoc{Session: sess.ID, HandoffID: new(int64)}}) - 16
	for try := 0; ; try++ {
		r, err := s.eng.Resume(ctx, engine.ResumeRequest{Session: sess.ID, Budget: budget, MaxChars: room})
		if err != nil {
			return "", ResumeOut{}, err
		}
		out := ResumeOut{notice, r.Doc()}
		// r.Markdown is fenced by the engine already: no second fence.
		text := warn + r.Markdown
		over := max(chars(text), jsonLen(out)) - s.max
		if over <= 0 || try == 3 {
			if over > 0 { // a context the budget floor keeps over the cap
				cut, _ := cutText(r.Markdown, 0, chars(r.Markdown)-over-200)
				out.Markdown = handoff.Fence(handoff.Unfence(cut))
				text = warn + out.Markdown + "(cut to fit the result cap)\n"
			}
			return text, out, nil
		}
		room -= over + 32
	}
}

// minPage is the room a page of a handoff's Markdown keeps beside its
// fields: fields that leave less are left out (the Markdown holds them).
const minPage = 1500

// HandoffFields are a handoff's fields (the contract's handoff object, its
// Markdown apart).
type HandoffFields struct {
	ID            int64         `json:"id"`
	Session       string        `json:"session"`
	Project       string        `json:"project"`
	Branch        string        `json:"branch,omitempty"`
	CreatedAt     string        `json:"created_at"`
	Trigger       string        `json:"trigger"`
	Task          string        `json:"task"`
	FilesModified []string      `json:"files_modified"`
	Decisions     []string      `json:"decisions"`
	TestsRun      []TestRun     `json:"tests_run"`
	Errors        []string      `json:"errors"`
	Blockers      []string      `json:"blockers"`
	NextSteps     []string      `json:"next_steps"`
	Notes         []HandoffNote `json:"notes"`
	Tokens        int           `json:"tokens"`
}

// TestRun is a test command and its latest status.
type TestRun struct {
	Command string `json:"command"`
	Status  string `json:"status"`
}

// HandoffNote is a note a handoff carries.
type HandoffNote struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// HandoffOut is the handoff tool's structured output: the fields (on the
// first page) and a page of the Markdown.
type HandoffOut struct {
	Notice     string         `json:"notice"`
	Handoff    *HandoffFields `json:"handoff,omitempty" jsonschema:"the handoff's fields, on the first page"`
	Markdown   string         `json:"markdown" jsonschema:"this page of the handoff's Markdown, fenced as recorded data"`
	More       int            `json:"more" jsonschema:"characters of Markdown after this page"`
	NextCursor string         `json:"next_cursor,omitempty" jsonschema:"pass as cursor for the rest of the Markdown"`
}

func (s *Server) handoff(ctx context.Context, in HandoffIn) (string, HandoffOut, error) {
	cur, paging, err := parseTextCursor(in.Cursor)
	if err != nil {
		return "", HandoffOut{}, err
	}
	var d handoff.Doc
	warn := ""
	if paging {
		// The rest of the very handoff the first page was of, even if a
		// newer one was written since.
		if d, err = s.eng.FindHandoff(ctx, strconv.FormatInt(cur.id, 10)); err != nil || d.ID != cur.id {
			return "", HandoffOut{}, usageErrorf("handoff %d of this cursor is no longer in the ledger: call handoff without cursor for the latest", cur.id)
		}
	} else {
		sess, w, err := s.session(ctx, in.Session, in.Project)
		if err != nil {
			return "", HandoffOut{}, err
		}
		warn = w
		if d, err = s.eng.FindHandoff(ctx, sess.ID); errors.Is(err, engine.ErrNotFound) {
			return "", HandoffOut{}, usageErrorf("%s has no handoff yet: one is written by `ledger compact`, or before each compaction when ledger's hooks are installed. The resume tool extracts one from its latest messages now.", sessionName(sess.ID, in.Session))
		} else if err != nil {
			return "", HandoffOut{}, err
		}
	}
	var fields *HandoffFields
	if !paging {
		fields = handoffFields(d)
		if jsonLen(fields) > s.max-minPage {
			fields = nil // the Markdown holds the same; a page must fit
			warn += "(the handoff's fields are too long for one result: its Markdown below holds them)\n"
		}
	}
	md := d.Markdown
	from := cur.offset
	room := s.max - chars(warn) - jsonLen(HandoffOut{Notice: notice, Handoff: fields, NextCursor: textCursor{d.ID, chars(md)}.String()}) - chars(handoff.Fence("")) - 200
	for {
		part, end := cutText(md, from, max(room, 200))
		out := HandoffOut{Notice: notice, Handoff: fields, Markdown: handoff.Fence(part), More: chars(md) - end}
		text := warn
		// The session and trigger are recorded data: named here only when
		// plain; the Markdown's front matter, fenced, holds them.
		of := ""
		if handoff.PlainID(d.Session) {
			of = " of session " + d.Session
		}
		if from == 0 {
			text += fmt.Sprintf("Handoff %d%s, written %s%s:\n", d.ID, of, human(d.CreatedAt), triggerNote(d.Trigger))
		} else {
			text += fmt.Sprintf("Handoff %d%s, continued from character %d:\n", d.ID, of, from)
		}
		text += out.Markdown
		if out.More > 0 {
			out.NextCursor = textCursor{d.ID, end}.String()
			text += moreLine(out.More, "characters", out.NextCursor)
		}
		over := max(chars(text), jsonLen(out)) - s.max
		if over <= 0 || room <= 200 {
			return text, out, nil
		}
		room -= over + 16
	}
}

func handoffFields(d handoff.Doc) *HandoffFields {
	f := &HandoffFields{ID: d.ID, Session: d.Session, Project: d.Project, Branch: d.Branch, CreatedAt: rfc(d.CreatedAt),
		Trigger: d.Trigger, Task: d.Task, FilesModified: nonNil(d.FilesModified), Decisions: nonNil(d.Decisions),
		TestsRun: []TestRun{}, Errors: nonNil(d.Errors), Blockers: nonNil(d.Blockers), NextSteps: nonNil(d.NextSteps),
		Notes: []HandoffNote{}, Tokens: d.Tokens}
	for _, t := range d.TestsRun {
		f.TestsRun = append(f.TestsRun, TestRun{Command: t.Command, Status: t.Status})
	}
	for _, n := range d.Notes {
		f.Notes = append(f.Notes, HandoffNote{Kind: n.Kind, Text: n.Text})
	}
	return f
}

// AuditOut is the audit tool's structured output: the totals and one page
// of compactions, oldest first.
type AuditOut struct {
	Notice      string             `json:"notice"`
	Totals      engine.AuditTotals `json:"totals"`
	Compactions []engine.AuditRow  `json:"compactions"`
	Total       int                `json:"total" jsonschema:"compactions in all pages"`
	More        int                `json:"more" jsonschema:"compactions after this page"`
	NextCursor  string             `json:"next_cursor,omitempty" jsonschema:"pass as cursor for the next page"`
}

func (s *Server) audit(ctx context.Context, in AuditIn) (string, AuditOut, error) {
	offset, err := offsetCursor(in.Cursor)
	if err != nil {
		return "", AuditOut{}, err
	}
	since, err := engine.ParseTime(in.Since, time.Now())
	if err != nil {
		return "", AuditOut{}, usageErrorf("since %v", err)
	}
	id, warn := "", ""
	if in.Session != "" {
		sess, w, err := s.session(ctx, in.Session, "")
		if err != nil {
			return "", AuditOut{}, err
		}
		id, warn = sess.ID, w
	} else {
		warn = s.freshen(ctx, "")
	}
	rows, err := s.eng.Audit(ctx, id, since)
	if err != nil {
		return "", AuditOut{}, err
	}
	t := engine.Totals(rows)
	empty := "No compactions recorded"
	if in.Session != "" {
		empty += " for " + sessionName(id, in.Session)
	}
	if !since.IsZero() {
		empty += " since " + human(since)
	}
	render := func(p page) (string, any) {
		out := AuditOut{Notice: notice, Totals: t, Compactions: rows[p.offset : p.offset+p.n], Total: p.total, More: p.more(), NextCursor: p.next()}
		var body strings.Builder
		if p.total > 0 {
			clears := ""
			if t.Clears > 0 {
				clears = fmt.Sprintf(" (and %s by ledger compact)", plural(int64(t.Clears), "clear"))
			}
			fmt.Fprintf(&body, "%s%s · median tokens before a compaction %s · median tool calls between compactions %s\n",
				plural(int64(t.Compactions), "compaction"), clears, optInt(t.MedianPreTokens), optInt(t.MedianToolCalls))
		}
		for i, r := range out.Compactions {
			if r.Source == "cli" {
				r.Trigger = "clear" // ledger compact's handoff, not the agent's compaction
			}
			fmt.Fprintf(&body, "%d. %s · session %s · %s · tokens before %s, after %s · source %s · handoff %s · summary %d tokens · %d tool calls since the previous\n",
				p.offset+i+1, human(time.Time(r.At)), r.Session, r.Trigger, optInt(r.PreTokens), optInt(r.PostTokens), r.Source, optInt(r.HandoffID), r.SummaryTokens, r.ToolCalls)
		}
		head := warn + pageHead(p, "compactions", ", oldest first", empty+".\n")
		return fenced(head, body.String(), pageTail(p, "compactions")), out
	}
	text, out := fitPage(len(rows), offset, 0, s.max, render)
	return text, out.(AuditOut), nil
}

// MeterOut is the meter tool's structured output (`ledger meter --json`).
type MeterOut struct {
	Notice string `json:"notice"`
	engine.Meter
}

func (s *Server) meter(ctx context.Context, in MeterIn) (string, MeterOut, error) {
	sess, warn, err := s.session(ctx, in.Session, in.Project)
	if err != nil {
		return "", MeterOut{}, err
	}
	m, err := s.eng.Meter(ctx, sess.ID, engine.MeterOptions{})
	if err != nil {
		return "", MeterOut{}, err
	}
	m.Ratio = round(m.Ratio)
	out := MeterOut{notice, m}
	how := "estimated"
	if m.Exact {
		how = "exact, from the last API response"
	}
	var body strings.Builder
	fmt.Fprintf(&body, "session %s (model %s): %d of %d tokens in use (%.0f%%, %s)\n", m.Session, orNone(m.Model), m.UsedTokens, m.LimitTokens, 100*m.Ratio, how)
	names := make([]string, 0, len(m.Categories))
	for k := range m.Categories {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(&body, "- %s: %d tokens\n", k, m.Categories[k].Tokens)
	}
	fmt.Fprintf(&body, "window: %s\n", m.LimitSource)
	tail := ""
	switch {
	case m.MustCompact:
		tail = "Over 95% of the window: write a handoff (`ledger compact`) and /clear now.\n"
	case m.ShouldCompact:
		tail = "Over 80% of the window: consider a handoff (`ledger compact`) and /clear.\n"
	}
	return fenced(warn, body.String(), tail), out, nil
}

// NoteOut is the note tool's structured output: the note as stored (its
// secrets redacted), its text shortened if it must be to fit the cap.
type NoteOut struct {
	Notice string `json:"notice"`
	store.Note
}

func (s *Server) note(ctx context.Context, in NoteIn) (string, NoteOut, error) {
	switch in.Kind {
	case handoff.NoteDecision, handoff.NoteNext, handoff.NoteBlocker:
	default:
		return "", NoteOut{}, usageErrorf("kind %q: want decision, next or blocker", in.Kind)
	}
	text := strings.TrimSpace(in.Text)
	if text == "" {
		return "", NoteOut{}, usageErrorf("text is empty: give the note itself")
	}
	if chars(text) > maxNote {
		return "", NoteOut{}, usageErrorf("the note has %d characters: keep it to %d (a sentence or two)", chars(text), maxNote)
	}
	sess, err := s.resolve(ctx, in.Session, in.Project)
	if err != nil {
		return "", NoteOut{}, err
	}
	n, err := s.eng.Note(ctx, engine.NoteRequest{Session: sess.ID, Kind: in.Kind, Text: text})
	if err != nil {
		return "", NoteOut{}, err
	}
	head := fmt.Sprintf("Recorded %s note %d for %s; its next handoff carries it:\n", n.Kind, n.ID, sessionName(n.SessionID, in.Session))
	// The note as stored (its secrets redacted), shortened if it must be
	// to fit the cap: the ledger holds it whole.
	for room := maxNote; ; {
		out := NoteOut{notice, n}
		out.Text = handoff.Shorten(n.Text, room)
		text := fenced(head, out.Text+"\n", "")
		over := max(chars(text), jsonLen(out)) - s.max
		if over <= 0 || room <= 100 {
			return text, out, nil
		}
		room = max(room-over-16, 100)
	}
}

// sessionName names a session in ledger's own lines, outside the fence:
// by its id (id "" when none was found) or else the call's session
// argument, whichever is plain (handoff.PlainID); an id that is not plain
// is recorded data, and the argument may be one copied from a record.
func sessionName(id, arg string) string {
	arg = strings.TrimSpace(arg)
	switch {
	case handoff.PlainID(id):
		return "session " + id
	case handoff.PlainID(arg):
		return fmt.Sprintf("session %q", arg)
	case arg != "":
		return "the session named (an id ledger does not repeat outside its records)"
	}
	return "the project's latest session"
}

// triggerNote is " (auto)" or " (manual)": the trigger a handoff records,
// when it is one of those; any other is left to the fenced front matter.
func triggerNote(trigger string) string {
	if trigger == compact.TriggerAuto || trigger == compact.TriggerManual {
		return " (" + trigger + ")"
	}
	return ""
}

// orDefault is v, or def when v is 0 (an argument left out).
func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func rfc(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func human(t time.Time) string {
	if t.IsZero() {
		return "unknown time"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

func round(f float64) float64 { return math.Round(f*1000) / 1000 }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func optInt(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}

func plural(n int64, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

// MessageOut is the message tool's structured output: a message with its
// neighbours.
type MessageOut struct {
	Notice string `json:"notice"`
	engine.InContext
}

func (s *Server) message(ctx context.Context, in MessageIn) (string, MessageOut, error) {
	around := orDefault(in.Around, messageAroundDefault)
	c, err := s.eng.MessageInContext(ctx, in.ID, around)
	if errors.Is(err, store.ErrNotFound) {
		return "", MessageOut{}, usageErrorf("no message %d in the ledger: pass the id of a hit of kind message, as the search tool gives it", in.ID)
	}
	if err != nil {
		return "", MessageOut{}, err
	}
	// Each message gets its share of the result cap.
	each := max(s.max/(2*len(c.Messages)+2), 80)
	var body strings.Builder
	for i := range c.Messages {
		m := &c.Messages[i]
		m.Text = handoff.Shorten(strings.TrimSpace(m.Text), each)
		mark, who := " ", m.Role
		if m.Hit {
			mark = ">"
		}
		if m.Tool != "" {
			who += " (" + m.Tool + ")"
		}
		fmt.Fprintf(&body, "%s #%d · %s · %s\n   %s\n", mark, m.Seq, human(time.Time(m.At)), who, oneLine(m.Text))
	}
	head := fmt.Sprintf("Message %d (#%d of session %s) with up to %d messages either side, in conversation order; > marks it:\n", c.ID, c.Seq, c.Session, around)
	return fenced(head, body.String(), ""), MessageOut{Notice: notice, InContext: c}, nil
}
