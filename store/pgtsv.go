package store

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgtype"
)

// A team ledger's messages carry their tsvector from the client: the
// server computing it (a regular expression, then to_tsvector's parser)
// was half of what the server spent on an ingest. pgTSVector makes the one
// the server's ledger_text_tsv makes (migrations/postgres/00010: the
// expression messages.tsv was generated with), so that old rows, rows the
// server still computes and queries (to_tsquery, which splits a word as
// the parser does) agree with the client's: the first pgTSVectorChars
// characters, split at every character that is not a letter or a digit,
// lower-cased, and a word that begins as a number with an exponent cut
// after it as the parser cuts it (81e0c76 is 81e0 and c76); words of at
// most pgMaxLexeme bytes (longer ones are left out, as to_tsvector leaves
// them), each at its position among the words, at most pgMaxPositions
// positions a word and none past pgMaxPosition.
const (
	pgTSVectorChars = 400_000
	pgMaxLexeme     = 2046
	pgMaxPosition   = 1<<14 - 1
	pgMaxPositions  = 255
)

// pgClientTSV is, per table whose copied rows (copyFrom) carry a tsvector
// the client computes, the column it is computed from. A compaction's
// summary, written by an UPDATE, gets its tsvector from the dialect's
// textVector instead.
var pgClientTSV = map[string]string{"messages": "text"}

// pgTSVector is text's tsvector (see above), in one pass over text with
// one copy of it: an ingest makes one for every message.
func pgTSVector(text string) pgtype.TSVector {
	type span struct {
		start, end int32 // in low
		pos        uint16
	}
	var low strings.Builder
	low.Grow(len(text))
	spans := make([]span, 0, len(text)/8)
	pos, from, at := 0, -1, 0 // at: where the word begins in text
	add := func(start, end, written int) {
		if end-start <= pgMaxLexeme && written <= pgMaxLexeme {
			pos++
			spans = append(spans, span{int32(start), int32(end), uint16(min(pos, pgMaxPosition))})
		}
	}
	end := func(i int) {
		if from < 0 {
			return
		}
		w := low.String()[from:]
		if n := exponentPrefix(w); n > 0 && n < len(w) {
			add(from, from+n, n)
			add(from+n, low.Len(), i-at-n)
		} else {
			add(from, low.Len(), i-at)
		}
		from = -1
	}
	i := 0
	for chars := 0; i < len(text) && chars < pgTSVectorChars; chars++ {
		if c := text[i]; c < utf8.RuneSelf {
			i++
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			default:
				end(i - 1)
				continue
			}
			if from < 0 {
				from, at = low.Len(), i-1
			}
			low.WriteByte(c)
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if r = unicode.ToLower(r); !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			end(i)
			i += size
			continue
		}
		if from < 0 {
			from, at = low.Len(), i
		}
		i += size
		low.WriteRune(r)
	}
	end(i)
	all := low.String()
	// Each word's lexeme, in order of first use; then the lexemes sorted,
	// each with its positions (ascending, as the words come) in one array.
	type lexeme struct {
		w     string
		n     int // positions kept
		first int // its first position's index in positions
	}
	var lexemes []lexeme
	of := make([]int32, len(spans))
	index := make(map[string]int32, len(spans))
	for k, sp := range spans {
		w := all[sp.start:sp.end]
		j, ok := index[w]
		if !ok {
			j = int32(len(lexemes))
			index[w] = j
			lexemes = append(lexemes, lexeme{w: w})
		}
		of[k] = j
		if l := &lexemes[j]; l.n < pgMaxPositions {
			l.n++
		}
	}
	next := 0
	for j := range lexemes {
		lexemes[j].first, next = next, next+lexemes[j].n
		lexemes[j].n = 0
	}
	positions := make([]pgtype.TSVectorPosition, next)
	for k, sp := range spans {
		l := &lexemes[of[k]]
		if l.n == pgMaxPositions || l.n > 0 && positions[l.first+l.n-1].Position == sp.pos {
			continue
		}
		positions[l.first+l.n].Position = sp.pos
		l.n++
	}
	slices.SortFunc(lexemes, func(a, b lexeme) int { return strings.Compare(a.w, b.w) })
	v := pgtype.TSVector{Valid: true, Lexemes: make([]pgtype.TSVectorLexeme, len(lexemes))}
	for j, l := range lexemes {
		v.Lexemes[j] = pgtype.TSVectorLexeme{Word: l.w, Positions: positions[l.first : l.first+l.n : l.first+l.n]}
	}
	return v
}

// exponentPrefix is the length of the number with an exponent w begins
// with (digits, e, digits: what to_tsvector's parser reads as a float),
// or 0.
func exponentPrefix(w string) int {
	digits := func(k int) int {
		for k < len(w) && '0' <= w[k] && w[k] <= '9' {
			k++
		}
		return k
	}
	k := digits(0)
	if k == 0 || k+1 >= len(w) || w[k] != 'e' || w[k+1] < '0' || w[k+1] > '9' {
		return 0
	}
	return digits(k + 1)
}
