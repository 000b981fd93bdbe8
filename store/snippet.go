package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// snippetWords is how many words a snippet shows.
const snippetWords = 24

// snippetText bounds how much of a hit's text a snippet reads.
const snippetText = 400_000

// searchText is the column each index's text is in.
var searchText = map[string]string{
	KindMessage: "text", KindHandoff: "markdown", KindCompaction: "summary", KindNote: "text",
}

// snippets fills in the hits' snippets and projects, in one query for
// their texts (on either backend: a round trip to a server each). The
// snippet is cut and marked here (snippet), with the tokenizer queries
// are parsed with. FTS5's snippet() found the hits again by MATCH and
// tokenized each text in the SQLite library: 40% of a search, most of it
// seeking a five-word path's doclists again. PostgreSQL's ts_headline
// would split the text with its own parser, which keeps a path or a file
// name whole.
func (s *Store) snippets(ctx context.Context, terms []term, hits []Hit) error {
	var q query
	var parts []string
	at := map[string]map[int64][]int{} // kind, id: the hits' places
	for _, ix := range searchIndexes {
		var ids []string
		for i, h := range hits {
			if h.Kind != ix.kind {
				continue
			}
			if at[ix.kind] == nil {
				at[ix.kind] = map[int64][]int{}
			}
			if at[ix.kind][h.ID] == nil {
				ids = append(ids, q.arg(h.ID))
			}
			at[ix.kind][h.ID] = append(at[ix.kind][h.ID], i)
		}
		if len(ids) == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf(`SELECT '%s' AS kind, t.id, substr(t.%s, 1, %d) AS text, coalesce(s.project, '') AS project
			FROM %s t LEFT JOIN sessions s ON s.id = t.session_id WHERE t.id IN (%s)`,
			ix.kind, searchText[ix.kind], snippetText, ix.table, strings.Join(ids, ", ")))
	}
	if len(parts) == 0 {
		return nil
	}
	var rows []struct {
		Kind    string `db:"kind"`
		ID      int64  `db:"id"`
		Text    string `db:"text"`
		Project string `db:"project"`
	}
	if err := s.db.SelectContext(ctx, &rows, strings.Join(parts, " UNION ALL "), q.args...); err != nil {
		return fmt.Errorf("search snippets: %w", err)
	}
	for _, r := range rows {
		for _, i := range at[r.Kind][r.ID] {
			hits[i].Snippet = snippet(r.Text, terms, snippetWords)
			hits[i].Project = r.Project
		}
	}
	return nil
}

// span is a word's place in a text, in bytes.
type span struct{ from, to int }

// isWordRune tells whether r belongs in a word, as the index's unicode61
// tokenizer has it (tokenize).
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Co, r)
}

// nextWord returns the first word of text at or after byte i, or ok false.
func nextWord(text string, i int) (w span, ok bool) {
	start := -1
	for i < len(text) {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		in := isWordRune(r)
		switch {
		case in && start < 0:
			start = i
		case !in && start >= 0:
			return span{start, i}, true
		}
		i += size
	}
	if start >= 0 {
		return span{start, len(text)}, true
	}
	return span{}, false
}

// fold is a word as the index compares it: in lower case, without
// diacritics (unicode61's remove_diacritics: é is e).
func fold(w string) string {
	if isASCII(w) {
		return strings.ToLower(w)
	}
	var b strings.Builder
	for _, r := range norm.NFD.String(strings.ToLower(w)) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// snippet is about n words of text around its best passage, as FTS5's
// snippet() makes them: each place a term matches (its words in a row, the
// last a prefix when the term is one) between MarkStart and MarkEnd, a
// phrase as one; the window of n words that holds the most different
// terms (the earliest of equals), starting a third of n before its first
// match; and an ellipsis where the text was cut. The text is read only as
// far as that window: for a one-word query, to its first match.
func snippet(text string, terms []term, n int) string {
	type want struct {
		toks   []string // folded
		prefix bool
	}
	var ts []want
	for _, t := range terms {
		if len(t.tokens) == 0 {
			continue
		}
		w := want{prefix: t.prefix}
		for _, tok := range t.tokens {
			w.toks = append(w.toks, fold(tok))
		}
		ts = append(ts, w)
	}
	var ws []span
	foldedAt := map[int]string{} // the non-ASCII words, folded
	is := func(i int, tok string, prefix bool) bool {
		w := text[ws[i].from:ws[i].to]
		if isASCII(w) {
			if prefix {
				return len(w) >= len(tok) && strings.EqualFold(w[:len(tok)], tok)
			}
			return len(w) == len(tok) && strings.EqualFold(w, tok)
		}
		f, ok := foldedAt[i]
		if !ok {
			f = fold(w)
			foldedAt[i] = f
		}
		return f == tok || prefix && strings.HasPrefix(f, tok)
	}
	type match struct{ at, len, term int }
	var ms []match
	// Candidate windows start a third of n before a match; each is scored
	// once the words it spans are read.
	lo, best, next := 0, 0, 0 // next: the first match whose window is not scored yet
	seen := make([]int, len(ts))
	score := func(c int) {
		start := max(0, ms[c].at-n/3)
		if c > 0 && start == max(0, ms[c-1].at-n/3) {
			return
		}
		held := 0
		for _, o := range ms {
			if o.at >= start && o.at+o.len <= start+n && seen[o.term] != c+1 {
				seen[o.term] = c + 1
				held++
			}
		}
		if held > best {
			lo, best = start, held
		}
	}
	for pos := 0; ; {
		w, ok := nextWord(text, pos)
		if !ok {
			break
		}
		ws = append(ws, w)
		pos = w.to
		j := len(ws) - 1
		for ti, t := range ts {
			at := j - len(t.toks) + 1
			if at < 0 {
				continue
			}
			hit := true
			for k, tok := range t.toks {
				if !is(at+k, tok, t.prefix && k == len(t.toks)-1) {
					hit = false
					break
				}
			}
			if hit {
				ms = append(ms, match{at, len(t.toks), ti})
			}
		}
		for next < len(ms) && next < 256 && max(0, ms[next].at-n/3)+n <= len(ws) {
			score(next)
			next++
		}
		if best == len(ts) && len(ws) >= lo+n || next == 256 && len(ws) >= lo+n {
			break
		}
	}
	for ; next < len(ms) && next < 256; next++ {
		score(next)
	}
	if len(ws) == 0 {
		return ""
	}
	// A phrase is marked as one (pkg/auth/session_store.go), overlapping
	// matches as one: end[i] is the last word of the mark that starts at
	// word i, or -1.
	end := make([]int, len(ws))
	for i := range end {
		end[i] = -1
	}
	sort.SliceStable(ms, func(a, b int) bool { return ms[a].at < ms[b].at })
	for i := 0; i < len(ms); {
		from, to := ms[i].at, ms[i].at+ms[i].len-1
		j := i + 1
		for ; j < len(ms) && ms[j].at <= to; j++ {
			to = max(to, ms[j].at+ms[j].len-1)
		}
		end[from] = to
		i = j
	}
	hi := min(len(ws), lo+n)
	var sb strings.Builder
	if lo > 0 {
		sb.WriteString("…")
	}
	pos := ws[lo].from
	if lo == 0 {
		pos = 0 // what comes before the first word
	}
	open := -1 // the last word of the open mark
	for k := lo - 1; k >= 0 && k >= lo-64; k-- {
		if end[k] >= lo {
			// A mark that starts before the window reaches into it.
			open = end[k]
			sb.WriteString(MarkStart)
			break
		}
	}
	for i := lo; i < hi; i++ {
		w := ws[i]
		sb.WriteString(text[pos:w.from])
		if open < 0 && end[i] >= 0 {
			open = end[i]
			sb.WriteString(MarkStart)
		}
		sb.WriteString(text[w.from:w.to])
		if open >= 0 && (i == open || i == hi-1) {
			sb.WriteString(MarkEnd)
			open = -1
		}
		pos = w.to
	}
	if _, more := nextWord(text, pos); hi < len(ws) || more {
		sb.WriteString("…")
	} else {
		sb.WriteString(text[pos:])
	}
	return sb.String()
}
