package store

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Kinds of search hits.
const (
	KindMessage    = "message"
	KindHandoff    = "handoff"
	KindCompaction = "compaction"
)

// Highlight markers around the matched words in a Hit's snippet; renderers
// turn them into colour or drop them.
const (
	MarkStart = "\x02"
	MarkEnd   = "\x03"
)

// SearchOptions is a search: the query and its filters.
type SearchOptions struct {
	Query     Query
	SessionID string // a full session id
	Project   string // sessions of this folder or below it
	Since     time.Time
	Until     time.Time
	Kind      string // "", or one of the Kind constants
	Role      string // messages of this role only (leaves out handoffs and compactions)
	Limit     int
}

// Hit is one search result.
type Hit struct {
	SessionID string    `db:"session_id"`
	Kind      string    `db:"kind"`
	ID        int64     `db:"id"`
	At        time.Time `db:"at"`
	Role      string    `db:"role"`
	Snippet   string    `db:"snippet"`
	// Score is FTS5's bm25 rank negated: higher is better.
	Score float64 `db:"score"`
}

// SearchResult is what a search found.
type SearchResult struct {
	Hits []Hit
	// Any is true when no hit matched every word, so the search fell back
	// to hits matching any of them.
	Any bool
}

// Search runs a full-text search over messages, handoffs and compaction
// summaries, best first (newer first among equal scores). When every word
// together matches nothing, it falls back to any word and says so.
func (s *Store) Search(ctx context.Context, o SearchOptions) (SearchResult, error) {
	if o.Query.Empty() {
		return SearchResult{Hits: []Hit{}}, nil
	}
	if o.Limit <= 0 {
		o.Limit = 20
	}
	hits, err := s.search(ctx, o, o.Query.MatchAll())
	if err != nil {
		return SearchResult{}, err
	}
	if len(hits) > 0 || o.Query.Words() < 2 {
		return SearchResult{Hits: hits}, nil
	}
	hits, err = s.search(ctx, o, o.Query.MatchAny())
	if err != nil {
		return SearchResult{}, err
	}
	return SearchResult{Hits: hits, Any: len(hits) > 0}, nil
}

// search runs one MATCH expression against each index the filters allow and
// merges them. Each part is limited on its own, so FTS5 ranks within its
// index and SQLite merges a few rows, not every match.
func (s *Store) search(ctx context.Context, o SearchOptions, match string) ([]Hit, error) {
	var parts []string
	var args []any
	sessionFilter := func(col string) string {
		var w []string
		if o.SessionID != "" {
			w = append(w, col+" = ?")
			args = append(args, o.SessionID)
		}
		if o.Project != "" {
			dir := filepath.Clean(o.Project)
			w = append(w, col+" IN (SELECT id FROM sessions WHERE project = ? OR (project >= ? AND project < ?))")
			args = append(args, dir, dir+"/", dir+"0")
		}
		return joinAnd(w)
	}
	timeFilter := func(col string) string {
		var w []string
		if !o.Since.IsZero() {
			w = append(w, col+" >= ?")
			args = append(args, o.Since.UTC())
		}
		if !o.Until.IsZero() {
			w = append(w, col+" < ?")
			args = append(args, o.Until.UTC())
		}
		return joinAnd(w)
	}
	snippet := func(table string) string {
		return fmt.Sprintf(`snippet(%s, 0, '%s', '%s', '…', 16)`, table, MarkStart, MarkEnd)
	}
	if o.Kind == "" || o.Kind == KindMessage {
		q := `SELECT * FROM (SELECT m.session_id, 'message' AS kind, m.id, m.at, m.role, ` + snippet("messages_fts") + ` AS snippet,
				-messages_fts.rank AS score
			FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid
			WHERE messages_fts MATCH ? AND m.compact_summary = 0`
		// (a compaction summary message is found as its compaction)
		args = append(args, match)
		q += sessionFilter("m.session_id") + timeFilter("m.at")
		if o.Role != "" {
			q += ` AND m.role = ?`
			args = append(args, o.Role)
		}
		q += ` ORDER BY messages_fts.rank, m.at DESC LIMIT ?)`
		args = append(args, o.Limit)
		parts = append(parts, q)
	}
	if o.Role == "" && (o.Kind == "" || o.Kind == KindHandoff) {
		q := `SELECT * FROM (SELECT h.session_id, 'handoff' AS kind, h.id, h.created_at AS at, '' AS role, ` + snippet("handoffs_fts") + ` AS snippet,
				-handoffs_fts.rank AS score
			FROM handoffs_fts JOIN handoffs h ON h.id = handoffs_fts.rowid
			WHERE handoffs_fts MATCH ?`
		args = append(args, match)
		q += sessionFilter("h.session_id") + timeFilter("h.created_at")
		q += ` ORDER BY handoffs_fts.rank, h.created_at DESC LIMIT ?)`
		args = append(args, o.Limit)
		parts = append(parts, q)
	}
	if o.Role == "" && (o.Kind == "" || o.Kind == KindCompaction) {
		q := `SELECT * FROM (SELECT c.session_id, 'compaction' AS kind, c.id, c.at, '' AS role, ` + snippet("compactions_fts") + ` AS snippet,
				-compactions_fts.rank AS score
			FROM compactions_fts JOIN compactions c ON c.id = compactions_fts.rowid
			WHERE compactions_fts MATCH ?`
		args = append(args, match)
		q += sessionFilter("c.session_id") + timeFilter("c.at")
		q += ` ORDER BY compactions_fts.rank, c.at DESC LIMIT ?)`
		args = append(args, o.Limit)
		parts = append(parts, q)
	}
	if len(parts) == 0 {
		return []Hit{}, nil
	}
	q := strings.Join(parts, " UNION ALL ") + ` ORDER BY score DESC, at DESC LIMIT ?`
	args = append(args, o.Limit)
	hits := []Hit{}
	if err := s.db.SelectContext(ctx, &hits, q, args...); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	for i := range hits {
		hits[i].At = hits[i].At.UTC()
	}
	return hits, nil
}

func joinAnd(w []string) string {
	if len(w) == 0 {
		return ""
	}
	return " AND " + strings.Join(w, " AND ")
}
