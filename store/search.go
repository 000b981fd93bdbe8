package store

import (
	"context"
	"fmt"
	"math"
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

// searchIndex is one full-text index and the table it indexes.
type searchIndex struct {
	kind, fts, table, at string
	role                 string // the role column, or '' for none
	where                string // more conditions on the table (t)
}

var searchIndexes = []searchIndex{
	// a compaction summary message is found as its compaction
	{kind: KindMessage, fts: "messages_fts", table: "messages", at: "at", role: "t.role", where: " AND t.compact_summary = 0"},
	{kind: KindHandoff, fts: "handoffs_fts", table: "handoffs", at: "created_at", role: "''"},
	{kind: KindCompaction, fts: "compactions_fts", table: "compactions", at: "at", role: "''"},
}

// rankWindow is how many matches of each index a search ranks: the most
// recently written ones that pass the filters. FTS5 hands out a MATCH's
// rows newest first at little cost (about 0.4 µs a row), but bm25 costs
// about 4 µs a row and reading a message row for its time and filters as
// much again: ranking every match of a common word grows with the ledger
// (70-180 ms at 100k messages). Up to rankWindow matches the ranking is
// exact; beyond, it is the best of the newest rankWindow. (bm25 still
// counts every match of each phrase once per query, for its IDF: that pass
// grows with the ledger, about 2 ms per 100k messages for a common word and
// 25 ms for a five-word path.)
const rankWindow = 1000

// rankSlack is how many more than the limit of the best-ranked window rows
// an unfiltered message search reads back from the table, so that the
// compaction summaries it then drops rarely leave it short (when they do,
// it reads them all).
const rankSlack = 16

// search runs one MATCH expression against each index the filters allow and
// merges the hits, best first. It ranks, then makes snippets for the hits
// it keeps: a snippet costs about 90 µs.
func (s *Store) search(ctx context.Context, o SearchOptions, match string) ([]Hit, error) {
	hits, cut, err := s.rank(ctx, o, match, true)
	if err == nil && len(hits) < o.Limit && (cut || len(hits) == 0) {
		// Too few, and the cut may have left out what the compaction
		// summaries it dropped made room for: rank the whole window.
		hits, _, err = s.rank(ctx, o, match, false)
	}
	if err != nil {
		return nil, err
	}
	if err := s.snippets(ctx, match, hits, !o.filtered()); err != nil {
		return nil, err
	}
	return hits, nil
}

// filtered tells whether a search has filters that need each match's row.
func (o SearchOptions) filtered() bool {
	return o.SessionID != "" || o.Project != "" || !o.Since.IsZero() || !o.Until.IsZero() || o.Role != ""
}

// rankedHit is a Hit as rank reads it, with whether the window of messages
// was cut.
type rankedHit struct {
	Hit
	Cut bool `db:"cut"`
}

// rank returns the best hits without their snippets. With cut, and no
// filters, the message table is read only for the window's best rows
// (ties included), not for every row of the window; it reports whether
// that left rows out.
//
// Integers are written into the statement, not bound: SQLite prepares a
// statement again once a value bound to a LIMIT or range is known, and a
// statement of three windows costs about a millisecond to prepare.
func (s *Store) rank(ctx context.Context, o SearchOptions, match string, cut bool) ([]Hit, bool, error) {
	var ctes, parts []string
	var args []any // only the windows have arguments
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
	filtered := o.filtered()
	cutFlag := "0"
	for _, ix := range searchIndexes {
		if o.Kind != "" && o.Kind != ix.kind || o.Role != "" && ix.role == "''" {
			continue
		}
		w := "w_" + ix.kind
		// The window: the newest matches (FTS5 walks rowids backwards
		// without sorting), each ranked. Filters need the table's row;
		// without them FTS5 alone answers.
		var cte string
		if filtered {
			cte = fmt.Sprintf(`%s AS MATERIALIZED (SELECT %s.rowid AS id, bm25(%s) AS rank
				FROM %s JOIN %s t ON t.id = %s.rowid WHERE %s MATCH ?`, w, ix.fts, ix.fts, ix.fts, ix.table, ix.fts, ix.fts)
			args = append(args, match)
			cte += sessionFilter("t.session_id") + timeFilter("t."+ix.at)
			if o.Role != "" {
				cte += ` AND t.role = ?`
				args = append(args, o.Role)
			}
		} else {
			cte = fmt.Sprintf(`%s AS MATERIALIZED (SELECT rowid AS id, bm25(%s) AS rank FROM %s WHERE %s MATCH ?`,
				w, ix.fts, ix.fts, ix.fts)
			args = append(args, match)
		}
		cte += fmt.Sprintf(` ORDER BY %s.rowid DESC LIMIT %d)`, ix.fts, rankWindow)
		ctes = append(ctes, cte)

		// Each index is ranked and limited on its own; SQLite merges a few
		// rows. With cut, only the messages as good as the window's
		// (limit+slack)th are read from the table.
		q := fmt.Sprintf(`SELECT * FROM (SELECT t.session_id, '%s' AS kind, t.id, t.%s AS at, %s AS role, -%s.rank AS score, %%[1]s AS cut
			FROM %s JOIN %s t ON t.id = %s.id WHERE 1%s`, ix.kind, ix.at, ix.role, w, w, ix.table, w, ix.where)
		if cut && !filtered && ix.kind == KindMessage {
			n := o.Limit + rankSlack
			q += fmt.Sprintf(` AND %[1]s.rank <= coalesce((SELECT rank FROM %[1]s ORDER BY rank LIMIT 1 OFFSET %[2]d), 1e308)`, w, n-1)
			cutFlag = fmt.Sprintf(`((SELECT count(*) FROM %s) > %d)`, w, n)
		}
		q += fmt.Sprintf(` ORDER BY %s.rank, t.%s DESC LIMIT %d)`, w, ix.at, o.Limit)
		parts = append(parts, q)
	}
	if len(parts) == 0 {
		return []Hit{}, false, nil
	}
	for i := range parts {
		parts[i] = fmt.Sprintf(parts[i], cutFlag)
	}
	q := `WITH ` + strings.Join(ctes, ", ") + ` ` + strings.Join(parts, " UNION ALL ") +
		fmt.Sprintf(` ORDER BY score DESC, at DESC LIMIT %d`, o.Limit)
	var rows []rankedHit
	if err := s.db.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, false, fmt.Errorf("search: %w", err)
	}
	hits := make([]Hit, len(rows))
	wasCut := false
	for i, r := range rows {
		hits[i] = r.Hit
		hits[i].At = hits[i].At.UTC()
		wasCut = wasCut || r.Cut
	}
	return hits, wasCut, nil
}

// snippets fills in the hits' snippets: one query per kind. FTS5 finds
// a MATCH's row by rowid slowly (it seeks every segment of every term's
// doclist: about 1.5 ms for a five-word path at 100k messages), but walks
// a rowid range fast: the hits of an unfiltered search are among the
// window's newest matches, so it walks from the newest down to the oldest
// hit and makes snippets for the hits only. A filtered search's hits may lie
// far apart: it seeks each.
func (s *Store) snippets(ctx context.Context, match string, hits []Hit, walk bool) error {
	for _, ix := range searchIndexes {
		var ids []any
		at := map[int64][]int{}
		lo := int64(math.MaxInt64)
		for i, h := range hits {
			if h.Kind == ix.kind {
				ids = append(ids, h.ID)
				at[h.ID] = append(at[h.ID], i)
				lo = min(lo, h.ID)
			}
		}
		if len(ids) == 0 {
			continue
		}
		in := "(?" + strings.Repeat(", ?", len(ids)-1) + ")"
		where := "rowid IN " + in
		if walk {
			// +rowid: a filter, not a constraint FTS5 would seek with.
			where = fmt.Sprintf("rowid >= %d AND +rowid IN %s", lo, in)
		}
		q := fmt.Sprintf(`SELECT rowid, snippet(%s, 0, '%s', '%s', '…', 24) FROM %s WHERE %s MATCH ? AND %s`,
			ix.fts, MarkStart, MarkEnd, ix.fts, ix.fts, where)
		rows, err := s.db.QueryContext(ctx, q, append([]any{match}, ids...)...)
		if err != nil {
			return fmt.Errorf("search snippets: %w", err)
		}
		for rows.Next() {
			var id int64
			var snip string
			if err := rows.Scan(&id, &snip); err != nil {
				rows.Close()
				return fmt.Errorf("search snippets: %w", err)
			}
			for _, i := range at[id] {
				hits[i].Snippet = snip
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("search snippets: %w", err)
		}
	}
	return nil
}

func joinAnd(w []string) string {
	if len(w) == 0 {
		return ""
	}
	return " AND " + strings.Join(w, " AND ")
}
