package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentledger/ledger/compact"
)

// Session is a stored agent session. (What it does not know: see the
// package doc.)
type Session struct {
	ID            string
	Source        string
	Project       string
	GitBranch     string
	Title         string
	Model         string
	ContextWindow int64
	ContextTokens int64
	// StartedAt and LastAt are the times of the session's first and
	// latest record: zero when its transcript gave none.
	StartedAt, LastAt time.Time
	Messages          int64
	// Compactions counts the agent's compactions; Clears the handoffs
	// `ledger compact` recorded (a clear is not a compaction).
	Compactions int64
	Clears      int64
	ToolCalls   int64
	// Host is the machine whose ledger first wrote the session ('' for
	// sessions written before ledger kept it).
	Host string
	// Cost is the session's cost as its agent reports it (Claude Code's
	// cost-state), nil when it reports none.
	Cost *compact.Cost
}

// sessionRow is a sessions row as both backends scan it.
type sessionRow struct {
	ID            string          `db:"id"`
	Source        string          `db:"source"`
	Project       string          `db:"project"`
	GitBranch     string          `db:"git_branch"`
	Title         string          `db:"title"`
	Model         string          `db:"model"`
	ContextWindow int64           `db:"context_window"`
	ContextTokens int64           `db:"context_tokens"`
	StartedAt     sql.NullTime    `db:"started_at"`
	LastAt        sql.NullTime    `db:"last_at"`
	Messages      int64           `db:"messages"`
	Compactions   int64           `db:"compactions"`
	Clears        int64           `db:"clears"`
	ToolCalls     int64           `db:"tool_calls"`
	Host          string          `db:"host"`
	CostUSD       sql.NullFloat64 `db:"cost_usd"`
	LinesAdded    sql.NullInt64   `db:"lines_added"`
	LinesRemoved  sql.NullInt64   `db:"lines_removed"`
}

func (r sessionRow) session() Session {
	s := Session{ID: r.ID, Source: r.Source, Project: r.Project, GitBranch: r.GitBranch, Title: r.Title, Model: r.Model,
		ContextWindow: r.ContextWindow, ContextTokens: r.ContextTokens, StartedAt: utc(r.StartedAt), LastAt: utc(r.LastAt),
		Messages: r.Messages, Compactions: r.Compactions, Clears: r.Clears, ToolCalls: r.ToolCalls, Host: r.Host}
	if r.CostUSD.Valid {
		s.Cost = &compact.Cost{USD: r.CostUSD.Float64, LinesAdded: r.LinesAdded.Int64, LinesRemoved: r.LinesRemoved.Int64}
	}
	return s
}

func sessions(rows []sessionRow) []Session {
	out := make([]Session, len(rows))
	for i, r := range rows {
		out[i] = r.session()
	}
	return out
}

// utc is t in UTC, the zero time when it is NULL (unknown).
func utc(t sql.NullTime) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time.UTC()
}

// int64Ptr is n, nil when it is NULL (unknown).
func int64Ptr(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	return &n.Int64
}

const sessionColumns = `id, source, project, git_branch, title, model, context_window, context_tokens,
	started_at, last_at, messages, compactions, tool_calls, host, cost_usd, lines_added, lines_removed`

// sessionSelect reads sessionColumns with the session's compactions
// told apart: the stored count holds every compaction record, the clears
// `ledger compact` recorded (source cli) included.
var sessionSelect = strings.Replace(sessionColumns, "compactions,", `compactions - `+clearsOf+` AS compactions, `+clearsOf+` AS clears,`, 1)

const clearsOf = `(SELECT count(*) FROM compactions c WHERE c.session_id = sessions.id AND c.source = 'cli')`

// SessionFilter narrows a session listing.
type SessionFilter struct {
	// Project keeps sessions whose project is this folder or below it.
	Project string
	// Projects keeps sessions of any of these folders or below them (the
	// worktrees of one repository); with Project, either matches.
	Projects []string
	// Exact makes Project and Projects match those folders themselves,
	// not the folders below them.
	Exact bool
	// Exclude leaves out one session (the one asking).
	Exclude string
	// Source keeps one agent's sessions ("claude" or "codex").
	Source string
	// Host keeps the sessions of one machine (see Session.Host).
	Host string
	// Since and Until keep sessions whose latest activity is at or after
	// Since and before Until (zero: no bound).
	Since, Until time.Time
	// Limit caps the number of sessions (0: no cap); Offset skips the
	// first ones (a listing's later pages).
	Limit, Offset int
}

// Sessions lists sessions, newest activity first.
func (s *Store) Sessions(ctx context.Context, f SessionFilter) ([]Session, error) {
	var q query
	q.add(`SELECT ` + sessionSelect + ` FROM sessions`)
	f.where(&q)
	q.add(` ORDER BY last_at IS NULL, last_at DESC, id`)
	if f.Limit > 0 || f.Offset > 0 {
		limit := int64(f.Limit)
		if f.Limit <= 0 {
			limit = math.MaxInt64 // no limit, in words both backends read
		}
		q.add(` LIMIT ` + q.arg(limit) + ` OFFSET ` + q.arg(f.Offset))
	}
	var rows []sessionRow
	if err := s.db.SelectContext(ctx, &rows, q.String(), q.args...); err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return sessions(rows), nil
}

// CountSessions counts the sessions a filter keeps, whatever its Limit
// and Offset: a listing's real total.
func (s *Store) CountSessions(ctx context.Context, f SessionFilter) (int, error) {
	var q query
	q.add(`SELECT count(*) FROM sessions`)
	f.where(&q)
	var n int
	if err := s.db.GetContext(ctx, &n, q.String(), q.args...); err != nil {
		return 0, fmt.Errorf("count sessions: %w", err)
	}
	return n, nil
}

// where adds the filter's WHERE clause to q.
func (f SessionFilter) where(q *query) {
	var where []string
	dirs := f.Projects
	if f.Project != "" {
		dirs = append([]string{f.Project}, dirs...)
	}
	if len(dirs) > 0 {
		var or []string
		for _, d := range dirs {
			dir := filepath.Clean(d)
			if f.Exact {
				or = append(or, `project = `+q.arg(dir))
				continue
			}
			// below dir: "dir/" <= project < "dir0" ('0' follows '/')
			or = append(or, `(project = `+q.arg(dir)+` OR (project >= `+q.arg(dir+"/")+` AND project < `+q.arg(dir+"0")+`))`)
		}
		where = append(where, "("+strings.Join(or, " OR ")+")")
	}
	if f.Exclude != "" {
		where = append(where, `id <> `+q.arg(f.Exclude))
	}
	if f.Source != "" {
		where = append(where, `source = `+q.arg(f.Source))
	}
	if f.Host != "" {
		where = append(where, `host = `+q.arg(f.Host))
	}
	if !f.Since.IsZero() {
		where = append(where, `last_at >= `+q.arg(f.Since.UTC()))
	}
	if !f.Until.IsZero() {
		where = append(where, `last_at < `+q.arg(f.Until.UTC()))
	}
	if len(where) > 0 {
		q.add(` WHERE ` + strings.Join(where, " AND "))
	}
}

// Session returns the session whose id is id or starts with it (git-style
// prefixes), as given or as stored (StoredKey: an id holding a secret is
// stored redacted). No match is ErrNotFound; several are an
// *AmbiguousError.
func (s *Store) Session(ctx context.Context, idOrPrefix string) (Session, error) {
	sess, err := s.session(ctx, idOrPrefix)
	if errors.Is(err, ErrNotFound) {
		// An id an agent gave, holding a secret: stored redacted.
		if k := s.otherKey(idOrPrefix); k != "" {
			if sess, kerr := s.session(ctx, k); !errors.Is(kerr, ErrNotFound) {
				return sess, kerr
			}
		}
	}
	return sess, err
}

func (s *Store) session(ctx context.Context, idOrPrefix string) (Session, error) {
	if idOrPrefix == "" {
		return Session{}, fmt.Errorf("session %q: %w", idOrPrefix, ErrNotFound)
	}
	var out []sessionRow
	// Exact match first; then the prefix range [p, p+U+10FFFF) uses the primary key.
	err := s.db.SelectContext(ctx, &out, `SELECT `+sessionSelect+` FROM sessions WHERE id = $1`, idOrPrefix)
	if err == nil && len(out) == 0 {
		err = s.db.SelectContext(ctx, &out, `SELECT `+sessionSelect+` FROM sessions WHERE id >= $1 AND id < $2 ORDER BY id LIMIT 11`,
			idOrPrefix, idOrPrefix+"\U0010FFFF")
	}
	if err != nil {
		return Session{}, fmt.Errorf("find session %s: %w", idOrPrefix, err)
	}
	switch len(out) {
	case 0:
		return Session{}, fmt.Errorf("no session %q: %w", idOrPrefix, ErrNotFound)
	case 1:
		return out[0].session(), nil
	}
	ids := make([]string, 0, len(out))
	for i, c := range out {
		if i == 10 {
			ids = append(ids, "...")
			break
		}
		ids = append(ids, c.ID)
	}
	return Session{}, &AmbiguousError{Prefix: idOrPrefix, Candidates: ids}
}

// SetContextWindow records the model's window the agent stated for a
// session (Claude Code's status line), when it differs from the one on
// record. A session the ledger does not hold is left alone.
func (s *Store) SetContextWindow(ctx context.Context, session string, tokens int64) error {
	_, err := s.db.ExecContext(ctx, `UPDATE sessions SET context_window = $1 WHERE id = $2 AND context_window <> $1`,
		tokens, session)
	if err != nil {
		return fmt.Errorf("set the context window of %s: %w", session, err)
	}
	return nil
}

// SessionFiles lists the transcript files ingested for a session (the
// main transcript and its subagents'), from their cursors.
func (s *Store) SessionFiles(ctx context.Context, sessionID string) ([]string, error) {
	var paths []string
	if err := s.db.SelectContext(ctx, &paths, `SELECT path FROM cursors WHERE session_id = $1 ORDER BY path`, sessionID); err != nil {
		return nil, fmt.Errorf("list files of %s: %w", sessionID, err)
	}
	var mine []string // this machine's files (cursorKey)
	for _, p := range paths {
		if p, ok := s.d.cursorPath(s.host, p); ok {
			mine = append(mine, p)
		}
	}
	return mine, nil
}
