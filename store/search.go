package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
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
	Host      string // sessions of this machine only (Session.Host)
	Source    string // sessions of this agent only (Session.Source)
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
	// Score is how much of the query the hit holds (see Store.rank):
	// higher is better; the hits of a query whose words must all match
	// score alike, and come newest first.
	Score float64 `db:"score"`
}

// SearchResult is what a search found.
type SearchResult struct {
	Hits []Hit
	// Any is true when no hit matched every word, so the search fell back
	// to hits matching any of them.
	Any bool
}

// Search runs a full-text search over messages, handoffs, compaction
// summaries and notes. When every word together matches nothing, it falls
// back to any word and says so.
//
// Ranking (see rank) uses no corpus-wide statistics, so that its cost does
// not grow with the ledger: a query whose words must all match lists the
// newest matches first; a query where some terms may be missing (OR, or the
// any-word fallback) lists first the matches that hold more of its terms,
// the rarer terms counting more.
func (s *Store) Search(ctx context.Context, o SearchOptions) (SearchResult, error) {
	if o.Query.Empty() {
		return SearchResult{Hits: []Hit{}}, nil
	}
	if o.Limit <= 0 {
		o.Limit = 20
	}
	rank, all, anyWord := s.rank, o.Query.MatchAll(), o.Query.MatchAny()
	if s.pg {
		rank, all, anyWord = s.rankPG, o.Query.tsquery(true), o.Query.tsquery(false)
	}
	search := func(match string, scored bool) ([]Hit, error) {
		return s.search(ctx, o, match, scored, rank)
	}
	hits, err := search(all, len(o.Query.Groups) > 1)
	if err != nil {
		return SearchResult{}, err
	}
	if len(hits) > 0 || o.Query.Words() < 2 {
		return SearchResult{Hits: hits}, nil
	}
	hits, err = search(anyWord, true)
	if err != nil {
		return SearchResult{}, err
	}
	return SearchResult{Hits: hits, Any: len(hits) > 0}, nil
}

// searchIndex is one full-text index and the table it indexes: a row of
// the table below, which is all that differs between the four.
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

// scoreWindow is how many of an index's newest matches a query with
// optional terms scores (see rank).
const scoreWindow = 200

// bestOf ranks the hits of each index the filters allow (rank, on either
// backend) and keeps the best: highest score, then newest.
func (o SearchOptions) bestOf(rank func(searchIndex) ([]Hit, error)) ([]Hit, error) {
	var hits []Hit
	for _, ix := range o.indexes() {
		h, err := rank(ix)
		if err != nil {
			return nil, err
		}
		hits = append(hits, h...)
	}
	slices.SortStableFunc(hits, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := b.At.Compare(a.At); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	hits = hits[:min(len(hits), o.Limit)]
	return hits, nil
}

// rankFunc ranks one index's matches of a query (rank, or rankPG on
// PostgreSQL).
type rankFunc func(ctx context.Context, ix searchIndex, o SearchOptions, match string, scored bool) ([]Hit, error)

// search runs one query expression (an FTS5 MATCH, or a tsquery on
// PostgreSQL) against each index the filters allow and merges the hits,
// best first; scored says some of the query's terms may be missing from a
// hit (OR, the any-word fallback). It ranks, then makes snippets for the
// hits it keeps (snippet.go), on either backend.
func (s *Store) search(ctx context.Context, o SearchOptions, match string, scored bool, rank rankFunc) ([]Hit, error) {
	hits, err := o.bestOf(func(ix searchIndex) ([]Hit, error) { return rank(ctx, ix, o, match, scored) })
	if err != nil {
		return nil, err
	}
	if err := s.snippets(ctx, o.Query.terms(), hits); err != nil {
		return nil, err
	}
	if hits == nil {
		hits = []Hit{}
	}
	return hits, nil
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

// rank returns an index's best hits for a search, without their snippets.
//
// FTS5 hands out a MATCH's rows newest first (by rowid, the order rows were
// stored in) at about 0.4 µs a row and stops at the LIMIT, whatever the
// number of matches: the candidates are the newest matches that pass the
// filters. A query whose words must all match keeps the newest limit of
// them, each scored by how many terms it has. Otherwise rank takes the
// newest scoreWindow matches, finds which of the query's terms each holds
// (one rowid-range walk per term), and scores each match by the terms it
// holds, a term counting 1 + ln(N/n) where N is the number of candidates
// and n how many of them hold it: a term every candidate holds counts 1,
// a rarer one more.
//
// FTS5's bm25() is not used: it computes each term's IDF by counting every
// row of the whole index that matches it, once per query, which for a
// common word at a million messages is 80% of a search.
func (s *Store) rank(ctx context.Context, ix searchIndex, o SearchOptions, match string, scored bool) ([]Hit, error) {
	terms := o.Query.terms()
	n := o.Limit
	if scored && len(terms) > 1 {
		n = max(n, scoreWindow)
	} else {
		scored = false
	}
	var q query
	q.add("SELECT t.session_id, '"+ix.kind+"' AS kind, t.id, t."+ix.at+" AS at, "+ix.role+" AS role FROM "+ix.fts+
		" JOIN "+ix.table+" t ON t.id = "+ix.fts+".rowid WHERE "+ix.fts+" MATCH ?"+ix.where, match)
	if o.SessionID != "" {
		// The session's rows lie between its first and last id: FTS5 seeks
		// there instead of walking every newer match.
		var lo, hi sql.NullInt64
		if err := s.db.QueryRowxContext(ctx, `SELECT min(id), max(id) FROM `+ix.table+` WHERE session_id = ?`, o.SessionID).Scan(&lo, &hi); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		if !lo.Valid {
			return nil, nil
		}
		q.add(" AND "+ix.fts+".rowid BETWEEN "+strconv.FormatInt(lo.Int64, 10)+" AND "+strconv.FormatInt(hi.Int64, 10)+
			" AND t.session_id = ?", o.SessionID)
	}
	o.scopeFilters(&q, ix)
	var hits []Hit
	var err error
	if !scored && o.SessionID == "" && o.Query.tokens() > 1 && o.Query.numbered() {
		hits, err = s.newestOfFew(ctx, ix, q, n)
	} else {
		hits, err = s.newest(ctx, ix, q, n)
	}
	if err != nil {
		return nil, err
	}
	for i := range hits {
		hits[i].Score = float64(len(terms))
	}
	if !scored || len(hits) == 0 {
		return hits, nil
	}
	if err := s.score(ctx, ix, hits, terms); err != nil {
		return nil, err
	}
	slices.SortStableFunc(hits, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) })
	return hits[:min(len(hits), o.Limit)], nil
}

// newest runs q (rank's statement so far) for its newest n matches.
func (s *Store) newest(ctx context.Context, ix searchIndex, q query, n int) ([]Hit, error) {
	// The LIMIT is written into the statement, not bound: SQLite prepares
	// a statement again once a value bound to a LIMIT is known.
	return s.selectHits(ctx, q.sql.String()+" ORDER BY "+ix.fts+".rowid DESC LIMIT "+strconv.Itoa(n), q.args...)
}

// selectHits runs a statement of rank's shape and returns its hits, their
// times in UTC. A message's time is NULL when its transcript line had none
// that parses (unknown, not made up): its hit's At is then zero, which
// every front door shows as unknown. Scanned into time.Time, one such row
// failed the whole search.
func (s *Store) selectHits(ctx context.Context, stmt string, args ...any) ([]Hit, error) {
	var rows []struct {
		Hit
		At sql.NullTime `db:"at"` // the shallower field: sqlx scans "at" here
	}
	if err := s.db.SelectContext(ctx, &rows, stmt, args...); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	hits := make([]Hit, len(rows))
	for i, r := range rows {
		hits[i] = r.Hit
		hits[i].At = Time(r.At)
	}
	return hits, nil
}

// newestOfFew is newest for a query of several words one of which holds a
// digit (an id, a number, a hash: words that match seldom). FTS5 serves
// such a query slowly newest first however seldom its words match
// together: it reads each word's whole match list to walk it backwards (a
// rare identifier of common words, withRetry/case_33516 at a million
// messages: 0.87 ms newest first, 0.08 ms oldest first). So it first asks
// for n+1 matches oldest first: when there are no more than n, those are
// all of them; else it asks for the newest n, as newest does. That first
// statement costs a query that matches often 0.5-1 ms in a new process,
// which is why words without a digit go newest first at once.
func (s *Store) newestOfFew(ctx context.Context, ix searchIndex, q query, n int) ([]Hit, error) {
	hits, err := s.selectHits(ctx, q.sql.String()+" ORDER BY "+ix.fts+".rowid LIMIT "+strconv.Itoa(n+1), q.args...)
	if err != nil {
		return nil, err
	}
	if len(hits) > n {
		return s.newest(ctx, ix, q, n)
	}
	slices.Reverse(hits)
	return hits, nil
}

// score scores hits (an index's candidates, newest first) by the terms
// each holds (see rank).
func (s *Store) score(ctx context.Context, ix searchIndex, hits []Hit, terms []term) error {
	lo, hi := hits[len(hits)-1].ID, hits[0].ID
	held := make([]map[int64]bool, len(terms))
	for i, t := range terms {
		held[i] = map[int64]bool{}
		rows, err := s.db.QueryContext(ctx, `SELECT rowid FROM `+ix.fts+` WHERE `+ix.fts+` MATCH ? AND rowid BETWEEN ? AND ?`,
			t.fts(), lo, hi)
		if err != nil {
			return fmt.Errorf("search: %w", err)
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return fmt.Errorf("search: %w", err)
			}
			held[i][id] = true
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("search: %w", err)
		}
	}
	scoreHeld(hits, held)
	return nil
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
