package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
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
	// ExcludeTrees leaves out the sessions of these folders and of the
	// folders below them (paused projects); ExcludeProjects those of
	// these project folders themselves (projects with a .ledgerignore).
	// They are left out before the limit is applied.
	ExcludeTrees, ExcludeProjects []string
	Limit                         int
}

// Hit is one search result.
type Hit struct {
	SessionID string
	Kind      string
	ID        int64
	// At is the time of the hit's row: zero for a message whose
	// transcript line had no time.
	At      time.Time
	Role    string
	Snippet string
	// Project is the project (folder) of the hit's session, "" when it
	// has none.
	Project string
	// Score is how much of the query the hit holds (see Store.rank):
	// higher is better; the hits of a query whose words must all match
	// score alike, and come newest first.
	Score float64
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
	search := func(all, scored bool) ([]Hit, error) {
		return s.search(ctx, o, s.d.match(o.Query, all), scored)
	}
	hits, err := search(true, len(o.Query.Groups) > 1)
	if err != nil {
		return SearchResult{}, err
	}
	if len(hits) > 0 || o.Query.Words() < 2 {
		return SearchResult{Hits: hits}, nil
	}
	hits, err = search(false, true)
	if err != nil {
		return SearchResult{}, err
	}
	return SearchResult{Hits: hits, Any: len(hits) > 0}, nil
}

// SettleSearch files into the full-text indexes what a write of written
// messages (an ingest, a sync) left pending, so that the searches after
// it do not each read it: on PostgreSQL, the GIN indexes' pending lists;
// on SQLite, the index segments FTS5 left for later writes to merge. A search read
// the whole list for every query: 70-100 ms instead of 10 ms for a rare
// word at 100k messages right after an ingest (up to 4 MB of pending
// entries, until autovacuum gets to the table). It is the work the next
// flush of the list would have done (about 50 ms after an ingest of 100k
// messages). Filing a pending list is for the index's owner: under
// another role it does nothing, and the hooks' own limit on the list
// (pgBegin) bounds what is left. On SQLite the work is in proportion to
// written (sqliteDialect.settleSearch).
func (s *Store) SettleSearch(ctx context.Context, written int) error {
	return s.d.settleSearch(ctx, s.db, written)
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
	// windows: on PostgreSQL, the newest matches are looked for in
	// windows of the newest rows (see windowed): the table grows by
	// thousands of rows a session.
	windows bool
}

var searchIndexes = []searchIndex{
	// kind           fts                table          at            role      where                         windows
	{KindMessage, "messages_fts", "messages", "at", messageRole, " AND t.compact_summary = 0", true}, // a summary message is found as its compaction
	{KindHandoff, "handoffs_fts", "handoffs", "created_at", "''", "", false},
	{KindCompaction, "compactions_fts", "compactions", "at", "''", "", false},
	{KindNote, "notes_fts", "notes", "created_at", "''", "", false},
}

// messageRole is who a message's text is from: a tool result is the
// tool's, whichever role its agent gives the line (Claude Code keeps tool
// results in user lines, Codex in tool items). Search shows and filters by
// it: --role tool is every agent's tool output, --role user what users
// typed.
const messageRole = "CASE WHEN t.kind = 'tool_result' THEN 'tool' ELSE t.role END"

// scoreWindow is how many of an index's newest matches a query with
// optional terms scores (see rank).
const scoreWindow = 200

// bestOf ranks the hits of the indexes the filters allow (the dialect's
// rank) and keeps the best: highest score, then newest.
func (o SearchOptions) bestOf(rank func([]searchIndex) ([]Hit, error)) ([]Hit, error) {
	hits, err := rank(o.indexes())
	if err != nil {
		return nil, err
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

// search runs one query expression (the dialect's match: an FTS5 MATCH,
// or a tsquery) against each index the filters allow and merges the hits,
// best first; scored says some of the query's terms may be missing from a
// hit (OR, the any-word fallback). It ranks (the dialect's rank), then
// makes snippets for the hits it keeps (snippet.go).
func (s *Store) search(ctx context.Context, o SearchOptions, match string, scored bool) ([]Hit, error) {
	hits, err := o.bestOf(func(ixs []searchIndex) ([]Hit, error) { return s.d.rank(ctx, s.db, ixs, o, match, scored) })
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

// selectHits runs a statement of rank's shape and returns its hits, their
// times in UTC. A message's time is NULL when its transcript line had none
// that parses (unknown, not made up): its hit's At is then zero, which
// every front door shows as unknown. Scanned into time.Time, one such row
// failed the whole search.
func selectHits(ctx context.Context, db *sqlx.DB, stmt string, args ...any) ([]Hit, error) {
	var rows []hitRow
	if err := db.SelectContext(ctx, &rows, stmt, args...); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	hits := make([]Hit, len(rows))
	for i, r := range rows {
		hits[i] = r.hit()
	}
	return hits, nil
}

// hitRow is a row of a search statement, on either backend: a hit, its
// time NULL where unknown. A statement without snippet or score columns
// leaves them empty.
type hitRow struct {
	SessionID string       `db:"session_id"`
	Kind      string       `db:"kind"`
	ID        int64        `db:"id"`
	At        sql.NullTime `db:"at"`
	Role      string       `db:"role"`
	Snippet   string       `db:"snippet"`
	Score     float64      `db:"score"`
}

func (r hitRow) hit() Hit {
	return Hit{SessionID: r.SessionID, Kind: r.Kind, ID: r.ID, At: utc(r.At), Role: r.Role, Snippet: r.Snippet, Score: r.Score}
}

// scopeFilters adds the project, host, agent, exclusion, time and role filters on the
// rows of ix (alias t), on both backends.
func (o SearchOptions) scopeFilters(q *query, ix searchIndex) {
	if o.Project != "" {
		// below dir: "dir/" <= project < "dir0" ('0' follows '/')
		dir := filepath.Clean(o.Project)
		q.add(" AND t.session_id IN (SELECT id FROM sessions WHERE project = " + q.arg(dir) +
			" OR (project >= " + q.arg(dir+"/") + " AND project < " + q.arg(dir+"0") + "))")
	}
	if o.Host != "" {
		q.add(" AND t.session_id IN (SELECT id FROM sessions WHERE host = " + q.arg(o.Host) + ")")
	}
	if o.Source != "" {
		q.add(" AND t.session_id IN (SELECT id FROM sessions WHERE source = " + q.arg(o.Source) + ")")
	}
	if len(o.ExcludeTrees)+len(o.ExcludeProjects) > 0 {
		var or []string
		for _, d := range o.ExcludeTrees {
			dir := filepath.Clean(d)
			or = append(or, "project = "+q.arg(dir)+" OR (project >= "+q.arg(dir+"/")+" AND project < "+q.arg(dir+"0")+")")
		}
		for _, p := range o.ExcludeProjects {
			or = append(or, "project = "+q.arg(p))
		}
		q.add(" AND t.session_id NOT IN (SELECT id FROM sessions WHERE " + strings.Join(or, " OR ") + ")")
	}
	if !o.Since.IsZero() {
		q.add(" AND t." + ix.at + " >= " + q.arg(o.Since.UTC()))
	}
	if !o.Until.IsZero() {
		q.add(" AND t." + ix.at + " < " + q.arg(o.Until.UTC()))
	}
	if o.Role != "" {
		q.add(" AND " + ix.role + " = " + q.arg(o.Role))
	}
}

// scoreHeld scores hits by the terms each holds (held[i]: the hits that
// hold term i), on either backend: each term weighs 1 + log(hits/holders)
// (an IDF over the window, not the corpus: a term every candidate holds
// counts 1, a rarer one more), and a hit scores the weights of the terms
// it holds.
func scoreHeld(hits []Hit, held []map[int64]bool) {
	weight := make([]float64, len(held))
	for i := range held {
		n := 0
		for _, h := range hits {
			if held[i][h.ID] {
				n++
			}
		}
		if n > 0 {
			weight[i] = 1 + math.Log(float64(len(hits))/float64(n))
		}
	}
	for k := range hits {
		hits[k].Score = 0
		for i := range held {
			if held[i][hits[k].ID] {
				hits[k].Score += weight[i]
			}
		}
		hits[k].Score = math.Round(hits[k].Score*1000) / 1000
	}
}
