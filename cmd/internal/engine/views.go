package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/store"
)

// The JSON documents of docs/contract.md that more than one front door serves:
// the command line prints them with --json; the MCP server and the web view
// return the same shapes.

// Time is a time that marshals as RFC 3339 UTC, or null when zero.
type Time time.Time

// MarshalJSON writes t as RFC 3339 UTC, or null.
func (t Time) MarshalJSON() ([]byte, error) {
	tt := time.Time(t)
	if tt.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(tt.UTC().Format(time.RFC3339))
}

// UnmarshalJSON reads what MarshalJSON writes.
func (t *Time) UnmarshalJSON(b []byte) error {
	var tt time.Time
	if string(b) != "null" {
		if err := json.Unmarshal(b, &tt); err != nil {
			return err
		}
	}
	*t = Time(tt)
	return nil
}

// SessionRow is one element of `ledger sessions --json`.
type SessionRow struct {
	ID          string `json:"id"`
	Source      string `json:"source"`
	Project     string `json:"project"`
	Title       string `json:"title"`
	StartedAt   Time   `json:"started_at"`
	LastAt      Time   `json:"last_at"`
	Messages    int64  `json:"messages"`
	Compactions int64  `json:"compactions"`
	// Clears counts the handoffs `ledger compact` wrote (a clear, not a
	// compaction).
	Clears int64 `json:"clears"`
	// Host is the machine whose ledger first wrote the session.
	Host string `json:"host"`
	// CostUSD, LinesAdded and LinesRemoved are the session's cost as its
	// agent reports it (Claude Code's cost-state), null when it reports
	// none (Codex).
	CostUSD      *float64 `json:"cost_usd"`
	LinesAdded   *int64   `json:"lines_added"`
	LinesRemoved *int64   `json:"lines_removed"`
}

// SessionRows is a session listing as the contract shows it.
func SessionRows(list []store.Session) []SessionRow {
	out := make([]SessionRow, 0, len(list))
	for _, x := range list {
		row := SessionRow{ID: x.ID, Source: x.Source, Project: x.Project, Title: x.Title,
			StartedAt: Time(x.StartedAt), LastAt: Time(x.LastAt),
			Messages: x.Messages, Compactions: x.Compactions, Clears: x.Clears, Host: x.Host}
		if c := x.Cost; c != nil {
			row.CostUSD, row.LinesAdded, row.LinesRemoved = &c.USD, &c.LinesAdded, &c.LinesRemoved
		}
		out = append(out, row)
	}
	return out
}

// CostText is a session's cost as a listing shows it, "$1.87 +412/-97"
// (dollars, lines added and removed), "-" when its agent reports none.
func CostText(c *compact.Cost) string {
	if c == nil {
		return "-"
	}
	return fmt.Sprintf("$%.2f +%d/-%d", c.USD, c.LinesAdded, c.LinesRemoved)
}

// Sessions lists sessions, newest activity first: every one, or a
// project's (a folder: sessions started in it or below it); at most limit
// when limit > 0.
func (e *Engine) Sessions(ctx context.Context, project string, limit int) ([]store.Session, error) {
	st, err := e.Store(ctx)
	if err != nil {
		return nil, err
	}
	if project != "" {
		project = AbsPath(project)
	}
	return st.Sessions(ctx, store.SessionFilter{Project: project, Limit: limit})
}

// SessionsOf lists the sessions a filter keeps, newest activity first; a
// project is a folder, as in Sessions.
func (e *Engine) SessionsOf(ctx context.Context, f store.SessionFilter) ([]store.Session, error) {
	st, err := e.Store(ctx)
	if err != nil {
		return nil, err
	}
	if f.Project != "" {
		f.Project = AbsPath(f.Project)
	}
	return st.Sessions(ctx, f)
}

// Hit is one element of `ledger search --json`: its snippet plain.
type Hit struct {
	Session string  `json:"session"`
	Kind    string  `json:"kind"`
	ID      int64   `json:"id"`
	At      Time    `json:"at"`
	Role    string  `json:"role"`
	Snippet string  `json:"snippet"`
	Score   float64 `json:"score"`
}

// Hits is a search's hits as the contract shows them.
func Hits(hits []store.Hit) []Hit {
	out := make([]Hit, 0, len(hits))
	for _, h := range hits {
		out = append(out, Hit{Session: h.SessionID, Kind: h.Kind, ID: h.ID, At: Time(h.At), Role: h.Role,
			Snippet: Unmark(h.Snippet, "", ""), Score: h.Score})
	}
	return out
}

// Unmark replaces the store's highlight markers in a snippet.
func Unmark(s, start, end string) string {
	return strings.NewReplacer(store.MarkStart, start, store.MarkEnd, end).Replace(s)
}

// SearchRequest is a search as a front door takes it: the query text and
// filters, a session as an id or prefix, a project as any folder.
type SearchRequest struct {
	store.SearchOptions
	Text    string // the query, in the language of store.ParseQuery
	Session string
}

// Search runs a full-text search, best first.
func (e *Engine) Search(ctx context.Context, req SearchRequest) (store.SearchResult, error) {
	o := req.SearchOptions
	o.Query = store.ParseQuery(req.Text)
	if o.Project != "" {
		o.Project = AbsPath(o.Project)
	}
	var err error
	if o.SessionID, err = e.OptionalSessionID(ctx, req.Session); err != nil {
		return store.SearchResult{}, err
	}
	st, err := e.Store(ctx)
	if err != nil {
		return store.SearchResult{}, err
	}
	// The projects kept out are left out by the search itself, so that
	// the limit counts what is shown (optout.go).
	var out *optOut
	if o.ExcludeTrees, o.ExcludeProjects, out, err = excludedFromSearch(ctx, st); err != nil {
		return store.SearchResult{}, err
	}
	res, err := st.Search(ctx, o)
	if err != nil {
		return res, err
	}
	res.Hits = dropExcluded(out, res.Hits) // what the search could not tell: an ignore file at a checkout's top
	return res, nil
}

// AuditRow is one element of `ledger audit --json`.
type AuditRow struct {
	// Compaction is the compaction's id (a viewer links to it; not in the
	// contract's JSON).
	Compaction    int64  `json:"-"`
	Session       string `json:"session"`
	At            Time   `json:"at"`
	Trigger       string `json:"trigger"`
	PreTokens     *int64 `json:"pre_tokens"`
	PostTokens    *int64 `json:"post_tokens"`
	Source        string `json:"source"`
	HandoffID     *int64 `json:"handoff_id"`
	SummaryTokens int    `json:"summary_tokens"`
	ToolCalls     int64  `json:"tool_calls"`
	// PreservedMessages is how many messages a partial compaction kept
	// verbatim besides its summary (0: the summary replaced them all).
	PreservedMessages int64 `json:"preserved_messages"`
}

// Audit is the compaction history, oldest first: every session's, or one
// (an id or prefix), at or after since.
func (e *Engine) Audit(ctx context.Context, sessionArg string, since time.Time) ([]AuditRow, error) {
	return e.audit(ctx, sessionArg, since, func(int, int) bool { return true })
}

// AuditPage is the compaction history as a viewer pages it, oldest first:
// every row (for totals and charts), but the summary's tokens counted only
// for one page of size rows, page 0 the newest. Counting is most of the
// cost: ledger's estimator runs about 0.5 ms per summary.
func (e *Engine) AuditPage(ctx context.Context, sessionArg string, since time.Time, page, size int) ([]AuditRow, error) {
	return e.audit(ctx, sessionArg, since, func(i, n int) bool {
		return i >= n-(page+1)*size && i < n-page*size
	})
}

// audit lists the history, counting the summary tokens of the rows counted
// says (i of n).
func (e *Engine) audit(ctx context.Context, sessionArg string, since time.Time, counted func(i, n int) bool) ([]AuditRow, error) {
	_, list, err := e.compactions(ctx, sessionArg, since)
	if err != nil {
		return nil, err
	}
	count := compact.DefaultEstimator().Tokens
	rows := make([]AuditRow, 0, len(list))
	for i, c := range list {
		row := AuditRow{Compaction: c.ID, Session: c.SessionID, At: Time(c.At), Trigger: c.Trigger,
			PreTokens: c.PreTokens, PostTokens: c.PostTokens, Source: c.Source, HandoffID: c.HandoffID, ToolCalls: c.ToolCalls,
			PreservedMessages: c.PreservedMessages}
		if counted(i, len(list)) {
			row.SummaryTokens = count(c.Summary)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// AuditTotals sums up a compaction history: how many, the median context
// before them, and the median tool calls between them.
type AuditTotals struct {
	// Compactions counts the agent's compactions; Clears the handoffs
	// `ledger compact` recorded (source cli), which the medians leave out.
	Compactions int `json:"compactions"`
	Clears      int `json:"clears"`
	// MedianPreTokens is nil when no compaction recorded its pre_tokens.
	MedianPreTokens *int64 `json:"median_pre_tokens"`
	// MedianToolCalls is nil for no compactions.
	MedianToolCalls *int64 `json:"median_tool_calls"`
}

// Totals sums up rows.
func Totals(rows []AuditRow) AuditTotals {
	var pre, calls []int64
	clears := 0
	for _, r := range rows {
		if r.Source == "cli" {
			clears++
			continue
		}
		if r.PreTokens != nil {
			pre = append(pre, *r.PreTokens)
		}
		calls = append(calls, r.ToolCalls)
	}
	return AuditTotals{Compactions: len(rows) - clears, Clears: clears, MedianPreTokens: nullInt(Median(pre)), MedianToolCalls: nullInt(Median(calls))}
}

// compactions lists the compaction history, oldest first: every
// session's, or one (an id or prefix), at or after since.
func (e *Engine) compactions(ctx context.Context, sessionArg string, since time.Time) (*store.Store, []store.Compaction, error) {
	f := store.CompactionFilter{Since: since}
	var err error
	if f.SessionID, err = e.OptionalSessionID(ctx, sessionArg); err != nil {
		return nil, nil, err
	}
	st, err := e.Store(ctx)
	if err != nil {
		return nil, nil, err
	}
	list, err := st.Compactions(ctx, f)
	return st, list, err
}

func nullInt(v int64, ok bool) *int64 {
	if !ok {
		return nil
	}
	return &v
}

// orZero is *n, 0 when n is nil (unknown): where a count that may be
// unknown is used as a number.
func orZero(n *int64) int64 {
	if n == nil {
		return 0
	}
	return *n
}

// Median of xs, and false for none; an even count averages the middle two.
func Median(xs []int64) (int64, bool) {
	if len(xs) == 0 {
		return 0, false
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2], true
	}
	return (s[n/2-1] + s[n/2]) / 2, true
}

// ResumeDoc is `ledger resume --format json`.
type ResumeDoc struct {
	Session   string `json:"session"`
	HandoffID *int64 `json:"handoff_id"`
	Tokens    int    `json:"tokens"`
	Markdown  string `json:"markdown"`
}

// Doc is the resume context as `ledger resume --format json` prints it.
func (r Resume) Doc() ResumeDoc {
	return ResumeDoc{Session: r.Session.ID, HandoffID: r.HandoffID, Tokens: r.Tokens, Markdown: r.Markdown}
}

// Accuracy is `ledger meter --accuracy --json`: the estimator against the
// real usage of every API response in a session.
type Accuracy struct {
	Messages                int     `json:"messages"`
	MedianAbsError          float64 `json:"median_abs_error"`
	P90AbsError             float64 `json:"p90_abs_error"`
	BaselineMedianAbsError  float64 `json:"baseline_median_abs_error"`
	BaselineP90AbsError     float64 `json:"baseline_p90_abs_error"`
	SkippedThinkingMessages int     `json:"skipped_thinking"`
	SkippedPartialMessages  int     `json:"skipped_partial"`
}

// MeterAccuracy measures the token estimator against a session's real
// usage: target is a transcript file, else a session id or prefix.
func (e *Engine) MeterAccuracy(ctx context.Context, target string) (Accuracy, error) {
	v, err := e.View(ctx, target)
	if err != nil {
		return Accuracy{}, err
	}
	a := compact.MeasureAccuracy(v.Messages, nil)
	return Accuracy{Messages: a.Messages, MedianAbsError: a.MedianAbsError, P90AbsError: a.P90AbsError,
		BaselineMedianAbsError: a.BaselineMedianAbsError, BaselineP90AbsError: a.BaselineP90AbsError,
		SkippedThinkingMessages: a.SkippedThinking, SkippedPartialMessages: a.SkippedPartial}, nil
}

// Doctor runs the database's integrity checks, after rebuilding the
// full-text indexes when rebuild is set.
func (e *Engine) Doctor(ctx context.Context, rebuild bool) (store.Health, error) {
	st, err := e.Store(ctx)
	if err != nil {
		return store.Health{}, err
	}
	if rebuild {
		if err := st.RebuildFTS(ctx); err != nil {
			return store.Health{}, err
		}
	}
	h, err := st.Check(ctx)
	h.Rebuilt = rebuild
	return h, err
}

// Versions is `ledger version --json` but for the binary's own version,
// which the front door knows.
type Versions struct {
	Version       string `json:"version"`
	SchemaVersion int64  `json:"schema_version"`
	SQLiteVersion string `json:"sqlite_version"`
	// NoLedger is the ledger's path when there is none there yet: the
	// schema version is then this binary's.
	NoLedger string `json:"no_ledger,omitempty"`
}

// Versions reads the database's schema version and SQLite's.
func (e *Engine) Versions(ctx context.Context, version string) (Versions, error) {
	v := Versions{Version: version}
	st, err := e.Store(ctx)
	if err != nil {
		return v, err
	}
	if v.SchemaVersion, err = st.SchemaVersion(ctx); err != nil {
		return v, err
	}
	v.SQLiteVersion, err = st.SQLiteVersion(ctx)
	return v, err
}

// CountSessions counts the sessions of a project folder (and those below
// it; "": every project): the real total of a listing that shows a page.
func (e *Engine) CountSessions(ctx context.Context, project string) (int, error) {
	st, err := e.Store(ctx)
	if err != nil {
		return 0, err
	}
	if project != "" {
		project = AbsPath(project)
	}
	return st.CountSessions(ctx, store.SessionFilter{Project: project})
}

// InContext is a message (by the id a search hit gives) with the
// messages around it in its session, in conversation order.
type InContext struct {
	Session  string           `json:"session"`
	ID       int64            `json:"id"`
	Seq      int64            `json:"seq"`
	Messages []ContextMessage `json:"messages"`
}

// ContextMessage is one message of an InContext.
type ContextMessage struct {
	Seq  int64  `json:"seq"`
	Role string `json:"role"`
	Kind string `json:"kind"`
	Tool string `json:"tool,omitempty"`
	At   Time   `json:"at"`
	Text string `json:"text"`
	// Hit marks the message asked for.
	Hit bool `json:"hit"`
}

// MessageInContext is message id with up to around messages before it
// and after it in its session; store.ErrNotFound when there is none.
func (e *Engine) MessageInContext(ctx context.Context, id int64, around int) (InContext, error) {
	st, err := e.Store(ctx)
	if err != nil {
		return InContext{}, err
	}
	p, err := st.MessagePlace(ctx, id)
	if err != nil {
		return InContext{}, err
	}
	msgs, seqs, err := st.MessageRange(ctx, p.SessionID, max(p.Seq-int64(around), 0), p.Seq+int64(around)+1)
	if err != nil {
		return InContext{}, err
	}
	out := InContext{Session: p.SessionID, ID: id, Seq: p.Seq, Messages: []ContextMessage{}}
	for i, m := range msgs {
		role := m.Role
		if m.Kind() == compact.BlockToolResult {
			role = compact.RoleTool // as search names it, whoever's line it came in
		}
		out.Messages = append(out.Messages, ContextMessage{Seq: seqs[i], Role: string(role), Kind: string(m.Kind()),
			Tool: m.ToolName(), At: Time(m.Time), Text: m.SearchText(), Hit: seqs[i] == p.Seq})
	}
	return out, nil
}
