package handoff

import (
	"regexp"
	"sync"
)

// lazyRE is a regular expression compiled at its first use. This package
// has about a hundred; compiling them all when the package initialises cost
// every ledger process 1.4 ms of start-up (about half of `ledger version`),
// and most processes never extract a handoff. TestRegexpsCompile compiles
// them all.
type lazyRE struct {
	once sync.Once
	expr string
	re   *regexp.Regexp
}

// allRegexps are the package's lazy regular expressions, for the test.
var allRegexps []*lazyRE

func lazyRegexp(expr string) *lazyRE {
	l := &lazyRE{expr: expr}
	allRegexps = append(allRegexps, l)
	return l
}

func (l *lazyRE) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.expr) })
	return l.re
}

func (l *lazyRE) MatchString(s string) bool { return l.get().MatchString(s) }

func (l *lazyRE) FindString(s string) string { return l.get().FindString(s) }

func (l *lazyRE) FindStringIndex(s string) []int { return l.get().FindStringIndex(s) }

func (l *lazyRE) FindStringSubmatch(s string) []string { return l.get().FindStringSubmatch(s) }

func (l *lazyRE) FindAllString(s string, n int) []string { return l.get().FindAllString(s, n) }

func (l *lazyRE) FindAllStringSubmatch(s string, n int) [][]string {
	return l.get().FindAllStringSubmatch(s, n)
}

func (l *lazyRE) ReplaceAllString(src, repl string) string {
	return l.get().ReplaceAllString(src, repl)
}
