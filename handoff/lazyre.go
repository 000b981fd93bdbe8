package handoff

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"unicode/utf8"
)

// lazyRE is a regular expression compiled at its first use, behind a
// literal prefilter.
//
// This package has about a hundred; compiling them all when the package
// initialises cost every ledger process 1.4 ms of start-up (about half of
// `ledger version`), and most processes never extract a handoff.
// TestRegexpsCompile compiles them all.
//
// Most of them are alternations of words run over every sentence and
// every line of tool output, and most texts hold none of those words: the
// prefilter asks first whether the text contains one of the literals any
// match must contain (see factors), which costs a few substring searches
// instead of a backtracking run. Extraction spent 70% of its time in
// regexps that did not match. MatchString goes further: an expression that
// is an alternation is run branch by branch, each behind its own
// prefilter, so that a sentence holding "with" runs the one branch about
// "go with", not all thirty of the expression's.
type lazyRE struct {
	once     sync.Once
	expr     string
	re       *regexp.Regexp
	filter   filter    // nil: no prefilter
	branches []*branch // nil: MatchString runs re
}

// branch is one alternative of an expression, compiled on its own.
type branch struct {
	re     *regexp.Regexp
	filter filter
}

// filter is what a text must contain to match: from each of its sets,
// one literal.
type filter [][]factor

// allRegexps are the package's lazy regular expressions, for the tests.
var allRegexps []*lazyRE

func lazyRegexp(expr string) *lazyRE {
	l := &lazyRE{expr: expr}
	allRegexps = append(allRegexps, l)
	return l
}

func (l *lazyRE) get() *regexp.Regexp {
	l.once.Do(func() {
		l.re = regexp.MustCompile(l.expr)
		t, err := syntax.Parse(l.expr, syntax.Perl)
		if err != nil {
			return
		}
		l.filter = required(t)
		if alts := alternatives(t); len(alts) > 1 {
			for _, a := range alts {
				re, err := regexp.Compile(a.String())
				if err != nil {
					l.branches = nil
					return
				}
				l.branches = append(l.branches, &branch{re: re, filter: required(a)})
			}
		}
	})
	return l.re
}

// text is a string being matched, lowercased on demand for the
// case-insensitive prefilters.
type text struct {
	s, lower string
	folded   bool
	special  bool // holds ſ or the Kelvin sign: no case-insensitive prefilter
}

// mayMatch is false when t cannot match f: one of its sets has no literal
// in t.
func (t *text) mayMatch(f filter) bool {
	for _, set := range f {
		if !t.holdsOne(set) {
			return false
		}
	}
	return true
}

// holdsOne tells whether t holds one of the literals of set.
func (t *text) holdsOne(set []factor) bool {
	for _, f := range set {
		if !f.fold {
			if strings.Contains(t.s, f.lit) {
				return true
			}
			continue
		}
		if !t.folded {
			t.lower, t.folded = strings.ToLower(t.s), true
			// ſ (U+017F) and the Kelvin sign (U+212A) match s and k
			// case-insensitively, and ToLower keeps them as they are.
			t.special = hasFoldSpecial(t.s)
		}
		if t.special || strings.Contains(t.lower, f.lit) {
			return true
		}
	}
	return false
}

// mayMatch is false when s cannot match: it holds none of the literals
// every match contains.
func (l *lazyRE) mayMatch(s string) bool {
	l.get()
	t := text{s: s}
	return t.mayMatch(l.filter)
}

func hasFoldSpecial(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return strings.Contains(s, "ſ") || strings.Contains(s, "\u212a")
		}
	}
	return false
}

func (l *lazyRE) MatchString(s string) bool {
	return l.matchText(&text{s: s})
}

// matchText is MatchString on a text several expressions are matched
// against: it is lower-cased once for all their prefilters, not once per
// expression (scoring a sentence runs a dozen).
func (l *lazyRE) matchText(t *text) bool {
	l.get()
	s := t.s
	if !t.mayMatch(l.filter) {
		return false
	}
	if l.branches == nil {
		return l.re.MatchString(s)
	}
	for _, b := range l.branches {
		if t.mayMatch(b.filter) && b.re.MatchString(s) {
			return true
		}
	}
	return false
}

func (l *lazyRE) FindStringIndex(s string) []int {
	if !l.mayMatch(s) {
		return nil
	}
	return l.re.FindStringIndex(s)
}

func (l *lazyRE) FindStringSubmatch(s string) []string {
	if !l.mayMatch(s) {
		return nil
	}
	return l.re.FindStringSubmatch(s)
}

func (l *lazyRE) FindAllString(s string, n int) []string {
	if !l.mayMatch(s) {
		return nil
	}
	return l.re.FindAllString(s, n)
}

func (l *lazyRE) FindAllStringSubmatch(s string, n int) [][]string {
	if !l.mayMatch(s) {
		return nil
	}
	return l.re.FindAllStringSubmatch(s, n)
}

func (l *lazyRE) ReplaceAllString(src, repl string) string {
	if !l.mayMatch(src) {
		return src
	}
	return l.re.ReplaceAllString(src, repl)
}

// alternatives splits t into expressions whose union matches what t
// matches: the branches of its top alternation, with what a concatenation
// puts before and after it (\b(a|b)c is \bac or \bbc). Nil when t is not
// an alternation.
func alternatives(t *syntax.Regexp) []*syntax.Regexp {
	for t.Op == syntax.OpCapture {
		t = t.Sub[0]
	}
	switch t.Op {
	case syntax.OpAlternate:
		return t.Sub
	case syntax.OpConcat:
		for i, sub := range t.Sub {
			inner := alternatives(sub)
			if inner == nil {
				continue
			}
			out := make([]*syntax.Regexp, len(inner))
			for j, alt := range inner {
				subs := make([]*syntax.Regexp, 0, len(t.Sub))
				subs = append(subs, t.Sub[:i]...)
				subs = append(subs, alt)
				subs = append(subs, t.Sub[i+1:]...)
				out[j] = &syntax.Regexp{Op: syntax.OpConcat, Flags: t.Flags, Sub: subs}
			}
			return out
		}
	}
	return nil
}

// required returns sets of literals every match of t contains one of,
// each: the factors of each element of a concatenation (\bnot\s+(?:work|
// support) needs "not" and "work" or "support"), else t's factors.
func required(t *syntax.Regexp) filter {
	switch t.Op {
	case syntax.OpCapture, syntax.OpPlus:
		return required(t.Sub[0])
	case syntax.OpRepeat:
		if t.Min >= 1 {
			return required(t.Sub[0])
		}
		return nil
	case syntax.OpConcat:
		var out filter
		for _, s := range t.Sub {
			out = append(out, required(s)...)
		}
		return out
	}
	if f := factors(t); f != nil && minLen(f) > 0 {
		return filter{f}
	}
	return nil
}

// factor is a literal a match may contain: lowercase ASCII when fold (the
// expression matches it in any case).
type factor struct {
	lit  string
	fold bool
}

// factors returns literals of which every match of t contains at least
// one, or nil when it finds no such set:
//
//	literal        itself
//	a|b            the factors of a and those of b (each must have some)
//	ab             the factors of a or those of b, whichever are longer
//	(a), a+, a{2,} those of a
//	a*, a?, \b, .  none
func factors(t *syntax.Regexp) []factor {
	switch t.Op {
	case syntax.OpLiteral:
		fold := t.Flags&syntax.FoldCase != 0
		var sb strings.Builder
		for _, r := range t.Rune {
			if fold && r >= utf8.RuneSelf {
				return nil // folds beyond ASCII: not worth the care
			}
			if fold && 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			sb.WriteRune(r)
		}
		return []factor{{sb.String(), fold}}
	case syntax.OpCapture:
		return factors(t.Sub[0])
	case syntax.OpPlus:
		return factors(t.Sub[0])
	case syntax.OpRepeat:
		if t.Min >= 1 {
			return factors(t.Sub[0])
		}
		return nil
	case syntax.OpAlternate:
		var out []factor
		for _, s := range t.Sub {
			f := factors(s)
			if f == nil {
				return nil
			}
			out = append(out, f...)
		}
		return out
	case syntax.OpConcat:
		var best []factor
		bestLen := 0
		for _, s := range t.Sub {
			f := factors(s)
			if n := minLen(f); f != nil && n > bestLen {
				best, bestLen = f, n
			}
		}
		return best
	}
	return nil
}

func minLen(fs []factor) int {
	n := -1
	for _, f := range fs {
		if n < 0 || len(f.lit) < n {
			n = len(f.lit)
		}
	}
	return n
}
