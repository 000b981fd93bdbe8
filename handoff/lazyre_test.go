package handoff

import (
	"bufio"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRegexpsCompile compiles every lazy regular expression, as
// MustCompile at package initialisation used to: a bad one fails here, not
// in a user's handoff.
func TestRegexpsCompile(t *testing.T) {
	if len(allRegexps) < 50 {
		t.Fatalf("%d lazy regular expressions registered, want the package's (about 100)", len(allRegexps))
	}
	for _, l := range allRegexps {
		if _, err := regexp.Compile(l.expr); err != nil {
			t.Errorf("%q: %v", l.expr, err)
		}
	}
}

// TestPrefilterSound checks that no prefilter turns away a text its
// expression matches, and that MatchString run branch by branch says what
// the whole expression says: every expression against every line of the real
// corpus and of testdata, and against random mixes of the literals the
// prefilters look for (in random case, with ſ and the Kelvin sign).
func TestPrefilterSound(t *testing.T) {
	var texts []string
	rnd := rand.New(rand.NewPCG(5, 6))
	// A window of each text, at a random place: every expression runs on
	// every text where its prefilter says no, which is the slow part.
	// Under -race a line in 36 (about 200 of the corpus's): the random
	// mixes of literals below, which aim at the prefilters, stay as many
	// as in a line-in-12 sample and cost a fraction of a line each.
	sample, mixes := 3, 3000
	if raceEnabled {
		sample, mixes = 36, 750
	}
	add := func(s string) {
		if rnd.IntN(sample) != 0 {
			return
		}
		if len(s) > 400 {
			at := rnd.IntN(len(s) - 400)
			s = s[at : at+400]
		}
		texts = append(texts, s)
	}
	roots := []string{"testdata"}
	corpus := os.Getenv("LEDGER_CORPUS")
	if corpus == "" {
		corpus = filepath.Join("..", "..", "shared", "corpus")
	}
	roots = append(roots, corpus)
	for _, root := range roots {
		filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
			if err != nil || fi.IsDir() || fi.Size() > 8<<20 {
				return nil
			}
			f, err := os.Open(p)
			if err != nil {
				return nil
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 1<<20), 16<<20)
			for sc.Scan() {
				add(sc.Text())
			}
			return nil
		})
	}
	var lits []string
	filtered := 0
	for _, l := range allRegexps {
		l.get()
		if l.filter != nil {
			filtered++
		}
		for _, set := range l.filter {
			for _, f := range set {
				lits = append(lits, f.lit)
			}
		}
		for _, b := range l.branches {
			for _, set := range b.filter {
				for _, f := range set {
					lits = append(lits, f.lit)
				}
			}
		}
	}
	noise := []string{" ", "\n", "ſ", "\u212a", "x", "`", ".", "'", "_", "/", "1", "É"}
	for range mixes {
		var sb strings.Builder
		for range 1 + rnd.IntN(6) {
			s := lits[rnd.IntN(len(lits))]
			if rnd.IntN(2) == 0 {
				s = strings.ToUpper(s)
			}
			if rnd.IntN(8) == 0 {
				s = strings.ReplaceAll(strings.ReplaceAll(s, "s", "ſ"), "k", "\u212a")
			}
			sb.WriteString(s)
			sb.WriteString(noise[rnd.IntN(len(noise))])
		}
		texts = append(texts, sb.String())
	}
	t.Logf("%d of %d expressions have a prefilter; %d texts", filtered, len(allRegexps), len(texts))
	for _, l := range allRegexps {
		for _, s := range texts {
			want := l.re.MatchString(s)
			if !l.mayMatch(s) && want {
				t.Fatalf("%q: the prefilter turns away %q, which matches", l.expr, s)
			}
			if got := l.MatchString(s); got != want {
				t.Fatalf("%q: MatchString(%q) = %v branch by branch, %v whole", l.expr, s, got, want)
			}
		}
	}
}
