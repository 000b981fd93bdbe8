package store

import (
	"strings"
	"unicode"
)

// Query is a parsed search query. Its language is small and forgiving:
//
//	word            all words must match (AND)
//	"exact phrase"  the words in this order
//	prefix*         any word starting with prefix
//	-word, -"a b"   leave out what matches (--word is the word itself)
//	a OR b          either side (AND binds tighter: a b OR c is (a b) OR c)
//
// Paths and identifiers are words too: pkg/auth/session_store.go is the
// phrase "pkg auth session store go", which is how the index tokenized it.
// Nothing a user types is an error: stray quotes close at the end, operators
// FTS5 knows (AND, NOT, NEAR, parentheses, ^, :) are plain words or
// ignored, and a query with nothing searchable matches nothing.
type Query struct {
	// Groups are OR-ed; the terms inside a group are AND-ed.
	Groups  [][]term
	Exclude []term
}

type term struct {
	tokens []string // as the index's unicode61 tokenizer splits them
	prefix bool     // the last token is a prefix
}

// ParseQuery reads the query language above.
func ParseQuery(s string) Query {
	var q Query
	var group []term
	flush := func() {
		if len(group) > 0 {
			q.Groups = append(q.Groups, group)
			group = nil
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		}
		// "-word" leaves word out; "--word" is a word (a flag's name, as
		// `ledger search -- --strict` looks for it).
		neg := false
		if c == '-' && i+1 < len(s) && s[i+1] != ' ' && s[i+1] != '-' {
			neg = true
			i++
		}
		var raw string
		quoted := false
		if i < len(s) && s[i] == '"' {
			quoted = true
			end := strings.IndexByte(s[i+1:], '"')
			if end < 0 {
				raw, i = s[i+1:], len(s)
			} else {
				raw, i = s[i+1:i+1+end], i+2+end
			}
		} else {
			end := strings.IndexAny(s[i:], " \t\n\r\"")
			if end < 0 {
				end = len(s) - i
			}
			raw, i = s[i:i+end], i+end
		}
		if !quoted && !neg && raw == "OR" {
			flush()
			continue
		}
		t := term{prefix: !quoted && strings.HasSuffix(raw, "*")}
		t.tokens = tokenize(raw)
		if len(t.tokens) == 0 {
			continue
		}
		if neg {
			q.Exclude = append(q.Exclude, t)
		} else {
			group = append(group, t)
		}
	}
	flush()
	return q
}

// tokenize splits s as FTS5's unicode61 tokenizer does: runs of letters,
// digits and marks (other than the private-use and symbol classes), folded
// to lower case.
func tokenize(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Co, r))
	})
}

// Empty tells whether the query has nothing to search for.
func (q Query) Empty() bool { return len(q.Groups) == 0 }

// fts renders a term as an FTS5 phrase: every token double-quoted, so no
// token is read as an operator.
func (t term) fts() string {
	var sb strings.Builder
	for i, tok := range t.tokens {
		if i > 0 {
			sb.WriteString(" + ")
		}
		sb.WriteByte('"')
		sb.WriteString(strings.ReplaceAll(tok, `"`, `""`))
		sb.WriteByte('"')
	}
	if t.prefix {
		sb.WriteByte('*')
	}
	return sb.String()
}

// MatchAll renders the query as an FTS5 MATCH expression in which every
// word of a group must match. It is "" when the query is empty.
func (q Query) MatchAll() string { return q.render(ftsSyntax, true) }

// MatchAny renders the query with every word of a group optional (OR): the
// fallback when nothing matches them all.
func (q Query) MatchAny() string { return q.render(ftsSyntax, false) }

// syntax is a backend's full-text query language: its operators and how a
// term is written.
type syntax struct {
	and, or, andNot string
	term            func(term) string
}

var (
	ftsSyntax = syntax{and: " AND ", or: " OR ", andNot: ") NOT (", term: term.fts} // FTS5 MATCH
	tsSyntax  = syntax{and: " & ", or: " | ", andNot: ") & !(", term: term.tsquery} // PostgreSQL to_tsquery
)

// render writes the query in syn, every word of a group needed (all) or
// any of them; groups are alternatives, excluded terms are left out. It
// is "" when the query is empty.
func (q Query) render(syn syntax, all bool) string {
	if q.Empty() {
		return ""
	}
	within := syn.or
	if all {
		within = syn.and
	}
	terms := func(ts []term, sep string) string {
		parts := make([]string, len(ts))
		for i, t := range ts {
			parts[i] = syn.term(t)
		}
		return strings.Join(parts, sep)
	}
	var groups []string
	for _, g := range q.Groups {
		groups = append(groups, "("+terms(g, within)+")")
	}
	expr := strings.Join(groups, syn.or)
	if len(q.Exclude) > 0 {
		expr = "(" + expr + syn.andNot + terms(q.Exclude, syn.or) + ")"
	}
	return expr
}

// terms are the query's positive terms, each once.
func (q Query) terms() []term {
	var out []term
	seen := map[string]bool{}
	for _, g := range q.Groups {
		for _, t := range g {
			if k := t.fts(); !seen[k] {
				seen[k] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// tokens is how many words the query's positive terms hold in all.
func (q Query) tokens() int {
	n := 0
	for _, g := range q.Groups {
		for _, t := range g {
			n += len(t.tokens)
		}
	}
	return n
}

// numbered tells whether a word of the query's positive terms holds a
// digit.
func (q Query) numbered() bool {
	for _, g := range q.Groups {
		for _, t := range g {
			for _, tok := range t.tokens {
				if strings.ContainsAny(tok, "0123456789") {
					return true
				}
			}
		}
	}
	return false
}

// Words is how many positive terms the query has: a fallback to "any"
// means something only when there are several.
func (q Query) Words() int {
	n := 0
	for _, g := range q.Groups {
		n += len(g)
	}
	return n
}
