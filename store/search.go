package store

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Kinds of search hits.
const (
	KindMessage    = "message"
	KindHandoff    = "handoff"
	KindCompaction = "compaction"
	KindNote       = "note"
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

// searchIndex is one full-text index and the table it indexes: a row of
// the table below, which is all that differs between the three.
type searchIndex struct {
	kind  string // the hits' kind
	fts   string // the FTS5 table
	table string // its content table (alias t in the statements)
	at    string // the table's time column
	role  string // the table's role column, or '' for none
	where string // more conditions on t
}

var searchIndexes = []searchIndex{
	// kind           fts                table          at            role      where
	{KindMessage, "messages_fts", "messages", "at", "t.role", " AND t.compact_summary = 0"}, // a summary message is found as its compaction
	{KindHandoff, "handoffs_fts", "handoffs", "created_at", "''", ""},
	{KindCompaction, "compactions_fts", "compactions", "at", "''", ""},
	{KindNote, "notes_fts", "notes", "created_at", "''", ""},
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

// indexes are the indexes a search's kind and role filters allow.
func (o SearchOptions) indexes() []searchIndex {
	var out []searchIndex
	for _, ix := range searchIndexes {
		if (o.Kind == "" || o.Kind == ix.kind) && (o.Role == "" || ix.role != "''") {
			out = append(out, ix)
		}
	}
	return out
}

// rankedHit is a Hit as rank reads it, with whether the window of messages
// was cut.
type rankedHit struct {
	Hit
	Cut bool `db:"cut"`
}

// rank returns the best hits without their snippets, in one statement:
//
//	WITH w_message AS MATERIALIZED (the window of messages_fts),
//	     w_handoff AS MATERIALIZED (the window of handoffs_fts), ...
//	SELECT the best of w_message, each with its row
//	UNION ALL SELECT the best of w_handoff ...
//	ORDER BY score DESC, at DESC LIMIT limit
//
// Each index is ranked and limited on its own; SQLite merges a few rows.
// With cut, and no filters, the message table is read only for the
// window's best rows (ties included), not for every row of the window; rank
// reports whether that left rows out.
//
// Integers are written into the statement, not bound: SQLite prepares a
// statement again once a value bound to a LIMIT or range is known, and a
// statement of three windows costs about a millisecond to prepare.
func (s *Store) rank(ctx context.Context, o SearchOptions, match string, cut bool) ([]Hit, bool, error) {
	indexes := o.indexes()
	if len(indexes) == 0 {
		return []Hit{}, false, nil
	}
	cut = cut && !o.filtered()
	cutCol := "0"
	var q query
	q.add("WITH ")
	for i, ix := range indexes {
		if i > 0 {
			q.add(", ")
		}
		q.window(ix, o, match)
		if cut && ix.kind == KindMessage {
			cutCol = fmt.Sprintf("((SELECT count(*) FROM w_%s) > %d)", ix.kind, o.Limit+rankSlack)
		}
	}
	for i, ix := range indexes {
		if i > 0 {
			q.add(" UNION ALL ")
		}
		q.best(ix, o.Limit, cutCol, cut && ix.kind == KindMessage)
	}
	q.add(" ORDER BY score DESC, at DESC LIMIT " + strconv.Itoa(o.Limit))
	var rows []rankedHit
	if err := s.db.SelectContext(ctx, &rows, q.sql.String(), q.args...); err != nil {
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

// query is a statement being built, with its arguments in order.
type query struct {
	sql  strings.Builder
	args []any
}

func (q *query) add(sql string, args ...any) {
	q.sql.WriteString(sql)
	q.args = append(q.args, args...)
}

// window adds an index's window, w_<kind>: its newest rankWindow matches
// (FTS5 walks rowids backwards without sorting), each with its bm25. The
// filters need the table's row; without them FTS5 alone answers.
func (q *query) window(ix searchIndex, o SearchOptions, match string) {
	q.add("w_" + ix.kind + " AS MATERIALIZED (SELECT " + ix.fts + ".rowid AS id, bm25(" + ix.fts + ") AS rank FROM " + ix.fts)
	if o.filtered() {
		q.add(" JOIN " + ix.table + " t ON t.id = " + ix.fts + ".rowid")
	}
	q.add(" WHERE "+ix.fts+" MATCH ?", match)
	if o.SessionID != "" {
		q.add(" AND t.session_id = ?", o.SessionID)
	}
	if o.Project != "" {
		// below dir: "dir/" <= project < "dir0" ('0' follows '/')
		dir := filepath.Clean(o.Project)
		q.add(" AND t.session_id IN (SELECT id FROM sessions WHERE project = ? OR (project >= ? AND project < ?))", dir, dir+"/", dir+"0")
	}
	if !o.Since.IsZero() {
		q.add(" AND t."+ix.at+" >= ?", o.Since.UTC())
	}
	if !o.Until.IsZero() {
		q.add(" AND t."+ix.at+" < ?", o.Until.UTC())
	}
	if o.Role != "" {
		q.add(" AND t.role = ?", o.Role)
	}
	q.add(" ORDER BY " + ix.fts + ".rowid DESC LIMIT " + strconv.Itoa(rankWindow) + ")")
}

// best adds an index's best limit hits, each read from its table: with
// cut, only the rows as good as the window's (limit+slack)th.
func (q *query) best(ix searchIndex, limit int, cutCol string, cut bool) {
	w := "w_" + ix.kind
	q.add("SELECT * FROM (SELECT t.session_id, '" + ix.kind + "' AS kind, t.id, t." + ix.at + " AS at, " + ix.role + " AS role, -" +
		w + ".rank AS score, " + cutCol + " AS cut FROM " + w + " JOIN " + ix.table + " t ON t.id = " + w + ".id WHERE 1" + ix.where)
	if cut {
		q.add(" AND " + w + ".rank <= coalesce((SELECT rank FROM " + w + " ORDER BY rank LIMIT 1 OFFSET " +
			strconv.Itoa(limit+rankSlack-1) + "), 1e308)")
	}
	q.add(" ORDER BY " + w + ".rank, t." + ix.at + " DESC LIMIT " + strconv.Itoa(limit) + ")")
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
