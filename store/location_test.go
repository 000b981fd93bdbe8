package store

import (
	"regexp"
	"testing"
)

// TestURLLikeIsTheRegexp checks that urlLike, a loop so that no regexp is
// compiled at start-up, says what the expression it replaced says.
func TestURLLikeIsTheRegexp(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]+:`)
	cases := []string{"", ":", "a:", "ab:", "C:", `C:\ledger.db`, "c:/x", "mysql://h/db", "sqlite:///x", "file:ledger.db",
		"postgres:/x", "git+ssh://h", "a.b-c+d:", "1ab:", "-ab:", "ab", "ab/c:", "./x:y", "x y:", "éa:", "ab\x00:", "ledger.db",
		"/home/u/ledger.db", "a+:", "a.:", "ab:cd:"}
	// Every string of up to three characters over an alphabet with one
	// of each class the expression tells apart.
	alphabet := []byte{'a', 'Z', '7', '+', '.', '-', ':', '/', '_', 0xc3}
	var gen func(prefix []byte, n int)
	gen = func(prefix []byte, n int) {
		cases = append(cases, string(prefix))
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			gen(append(append([]byte{}, prefix...), c), n-1)
		}
	}
	gen(nil, 4)
	for _, s := range cases {
		if got, want := urlLike(s), re.MatchString(s); got != want {
			t.Errorf("urlLike(%q) = %v, want %v", s, got, want)
		}
	}
}
