package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// PostgreSQL full text: each searchable table has a stored tsvector column
// (tsv) of its text split as SQLite's unicode61 tokenizer splits it, and a
// GIN index on it (migrations/postgres). A query is the same Query, made a
// tsquery (Query.tsquery) in place of an FTS5 MATCH expression: the same
// query language, the same filters, the same rows found; ranking follows
// the SQLite backend's (newest first, or terms held when some may be
// missing), and snippets are cut and marked as FTS5 marks them.

// tsquery renders a term for to_tsquery: its tokens quoted (they are
// letters and digits only) and followed by one another, the last a prefix
// when the term is.
func (t term) tsquery() string {
	parts := make([]string, len(t.tokens))
	for i, tok := range t.tokens {
		parts[i] = "'" + strings.ReplaceAll(tok, "'", "''") + "'"
	}
	if t.prefix {
		parts[len(parts)-1] += ":*"
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "(" + strings.Join(parts, " <-> ") + ")"
}

// tsquery renders the query for to_tsquery, every word of a group needed
// (all) or any of them: MatchAll and MatchAny's PostgreSQL counterparts.
func (q Query) tsquery(all bool) string { return q.render(tsSyntax, all) }

// rankPG is rank on PostgreSQL: the newest matches that pass the filters,
// scored as rank scores them.
func (s *Store) rankPG(ctx context.Context, ix searchIndex, o SearchOptions, tsq string, scored bool) ([]Hit, error) {
	terms := o.Query.terms()
	n := o.Limit
	if scored && len(terms) > 1 {
		n = max(n, scoreWindow)
	} else {
		scored = false
	}
	// The newest n matches are found in windows of the newest rows, each
	// wider than the last, the last the whole table: a common word's
	// newest matches lie in the first, and PostgreSQL would otherwise
	// fetch and sort every match before it took n.
	var top sql.NullInt64
	if err := s.db.GetContext(ctx, &top, `SELECT max(id) FROM `+ix.table); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	var hits []Hit
	for _, span := range []int64{4096, 65536, 0} {
		var q query
		q.add("SELECT t.session_id, '"+ix.kind+"' AS kind, t.id, t."+ix.at+" AS at, "+ix.role+" AS role FROM "+ix.table+
			" t WHERE t.tsv @@ to_tsquery('simple', ?)"+ix.where, tsq)
		whole := span == 0 || top.Int64-span <= 0
		if !whole {
			q.add(" AND t.id > ?", top.Int64-span)
		}
		o.filters(&q, ix)
		q.add(" ORDER BY t.id DESC LIMIT " + strconv.Itoa(n))
		var err error
		if hits, err = s.selectHits(ctx, q.sql.String(), q.args...); err != nil {
			return nil, err
		}
		if whole || len(hits) >= n {
			break
		}
	}
	for i := range hits {
		hits[i].Score = float64(len(terms))
	}
	if !scored || len(hits) == 0 {
		return hits, nil
	}
	lo, hi := hits[len(hits)-1].ID, hits[0].ID
	held := make([]map[int64]bool, len(terms))
	for i, t := range terms {
		var ids []int64
		if err := s.db.SelectContext(ctx, &ids, `SELECT id FROM `+ix.table+` WHERE tsv @@ to_tsquery('simple', ?) AND id BETWEEN ? AND ?`,
			t.tsquery(), lo, hi); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		held[i] = map[int64]bool{}
		for _, id := range ids {
			held[i][id] = true
		}
	}
	scoreHeld(hits, held)
	slices.SortStableFunc(hits, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) })
	return hits[:min(len(hits), o.Limit)], nil
}

// filters adds a search's session, project, host, time and role filters
// on the rows of ix (alias t).
func (o SearchOptions) filters(q *query, ix searchIndex) {
	if o.SessionID != "" {
		q.add(" AND t.session_id = ?", o.SessionID)
	}
	o.scopeFilters(q, ix)
}

// scopeFilters adds the project, host, agent, time and role filters, on both
// backends (SQLite narrows a session's rows by their rowids first).
func (o SearchOptions) scopeFilters(q *query, ix searchIndex) {
	if o.Project != "" {
		// below dir: "dir/" <= project < "dir0" ('0' follows '/')
		dir := filepath.Clean(o.Project)
		q.add(" AND t.session_id IN (SELECT id FROM sessions WHERE project = ? OR (project >= ? AND project < ?))", dir, dir+"/", dir+"0")
	}
	if o.Host != "" {
		q.add(" AND t.session_id IN (SELECT id FROM sessions WHERE host = ?)", o.Host)
	}
	if o.Source != "" {
		q.add(" AND t.session_id IN (SELECT id FROM sessions WHERE source = ?)", o.Source)
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
}

// scoreHeld scores hits by the terms each holds (held[i]: the hits that
// hold term i), on either backend: each term weighs 1 + log(hits/holders)
// (an IDF over the window, not the corpus), and a hit scores the weights
// of the terms it holds.
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
