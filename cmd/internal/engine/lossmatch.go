package engine

import (
	"path"
	"strings"
	"sync"
	"unicode"
)

// How the loss report decides that a text (a compaction summary, or a
// handoff's Markdown) kept an item of the state of the work. The rules
// lean towards "kept": a loss is reported only when the text does not name
// the item at all, so that the report never overstates what a summary
// lost.
//
//	file      its path, its path under the project, or its base name, as a
//	          whole name (pkg/a.go is not mentioned by pkg/a.go.orig nor
//	          by xa.go); a base name two of the files share counts only
//	          with its folder (auth/store.go).
//	task      its id (spotter-gqc.6, or gqc.6 without the project prefix;
//	          not a bare number: TodoWrite's "3" says nothing), or its
//	          subject as words (below).
//	error     its words (below), or a name it carries (a file:line, a test
//	          or an identifier such as TestSessionExpiry or
//	          otel_trace_helpers.ex:58) together with a third of its words.
//	request,  its words: the whole text as a phrase; or half of its pairs
//	decision  of neighbouring distinctive words; or 60% of those words
//	          and a fifth of the pairs. Distinctive words are those of 3
//	          letters or more that are not stop words, compared by a crude
//	          stem (closing = closes = close). Single words prove little in
//	          a summary of thousands of words (project, session, test are
//	          in all of them); neighbouring pairs rarely match by chance.

// lossText is a text items are looked for in.
type lossText struct {
	lower string             // lower-cased
	flat  string             // its words, lower-cased, one space apart and around
	stems map[string]bool    // the stems of its distinctive words
	pairs map[[2]string]bool // its distinctive stems side by side (stop words left out)
}

func newLossText(s string) lossText {
	t := lossText{lower: strings.ToLower(s), stems: map[string]bool{}, pairs: map[[2]string]bool{}}
	t.flat = " " + strings.Join(lossWords(s), " ") + " "
	seq := distinctiveSeq(s)
	for i, w := range seq {
		t.stems[w] = true
		if i > 0 {
			t.pairs[[2]string{seq[i-1], w}] = true
		}
	}
	return t
}

// lossWords splits s into lower-case runs of letters and digits.
func lossWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// stem is a crude English stem: enough that closing, closes and close
// compare equal, never so much that two different names do.
func stem(w string) string {
	for _, suf := range []string{"ations", "ation", "ings", "ing", "ies", "ied", "ed", "es", "s", "e"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 3 {
			w = strings.TrimSuffix(w, suf)
			if suf == "ies" || suf == "ied" {
				w += "y"
			}
			break
		}
	}
	return w
}

// lossStopWords carry no topic of their own. The set is built on first use:
// an init would build it at every start of the binary, for a loss report
// few processes make.
var lossStopWords = sync.OnceValue(func() map[string]bool {
	words := map[string]bool{}
	for _, w := range strings.Fields(`the and that this with for from into onto are was were been being have has had
		not but you your our its it's they them their then than there here what when where which while who why how
		all any each some more most other such only own same too very can will just should would could may might must
		shall does did doing done don't now also use using used make made get got let lets about after again before
		because between both down during few further once over under until off out per via yes no please okay ok
		thing things way see look need needs want wants like i'm we're let's one two new old add run`) {
		words[w] = true
	}
	return words
})

// distinctiveSeq are the stems of s's words that name something, in
// order: three letters or more, no stop word.
func distinctiveSeq(s string) []string {
	var out []string
	for _, w := range lossWords(s) {
		if len([]rune(w)) >= 3 && !lossStopWords()[w] {
			out = append(out, stem(w))
		}
	}
	return out
}

// wordEvidence is how much of an item's distinctive words a text holds:
// the share of its stems, and the share of its pairs of neighbouring stems
// (which a text holds by chance far less often than single words).
func (t lossText) wordEvidence(s string) (words, pairs float64, n int) {
	seq := distinctiveSeq(s)
	seen := map[string]bool{}
	got := 0
	for _, w := range seq {
		if !seen[w] {
			seen[w] = true
			if t.stems[w] {
				got++
			}
		}
	}
	if len(seen) == 0 {
		return 0, 0, 0
	}
	seenPair := map[[2]string]bool{}
	gotPairs := 0
	for i := 1; i < len(seq); i++ {
		p := [2]string{seq[i-1], seq[i]}
		if p[0] == p[1] || seenPair[p] {
			continue
		}
		seenPair[p] = true
		if t.pairs[p] {
			gotPairs++
		}
	}
	words = float64(got) / float64(len(seen))
	if len(seenPair) > 0 {
		pairs = float64(gotPairs) / float64(len(seenPair))
	}
	return words, pairs, len(seen)
}

// phrase tells whether the text holds s's words in order, side by side.
func (t lossText) phrase(s string) bool {
	words := lossWords(s)
	if len(words) == 0 {
		return false
	}
	return strings.Contains(t.flat, " "+strings.Join(words, " ")+" ")
}

// coversWords is the rule for requests and decisions: the whole text as a
// phrase; or, for an item of two distinctive words or more, half of its
// pairs of neighbouring words, or 60% of its words with a fifth of its
// pairs. A shortened item ("…" in the middle) is judged by its words.
func (t lossText) coversWords(s string) bool {
	if t.phrase(s) {
		return true
	}
	words, pairs, n := t.wordEvidence(s)
	if n < 2 {
		return false
	}
	return pairs >= 0.5 || words >= 0.6 && pairs >= 0.2
}

// name tells whether the text holds name as a whole name: not part of a
// longer word, path segment or file name. A name may end a longer path
// (…/pkg/a.go holds a.go) and may be followed by a sentence's full stop.
func (t lossText) name(name string) bool {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return false
	}
	for from := 0; ; {
		i := strings.Index(t.lower[from:], name)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(name)
		if !nameByte(before(t.lower, i)) && !continuesName(t.lower, end) {
			return true
		}
		from = i + 1
	}
}

func before(s string, i int) byte {
	if i == 0 {
		return ' '
	}
	return s[i-1]
}

// nameByte is a byte that would make the text before a name part of it.
func nameByte(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 0x80
}

// continuesName tells whether s goes on with the same name at end: a name
// character, or a dot or dash followed by one (a.go.orig, a.go-old).
func continuesName(s string, end int) bool {
	if end >= len(s) {
		return false
	}
	c := s[end]
	if c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 0x80 {
		return true
	}
	if (c == '.' || c == '-') && end+1 < len(s) {
		n := s[end+1]
		return n == '_' || n >= '0' && n <= '9' || n >= 'a' && n <= 'z'
	}
	return false
}

// coversFile is the rule for files: path is as the handoff has it
// (absolute, or relative to the project); shared says its base name is
// another file's too.
func (t lossText) coversFile(p, project string, shared bool) bool {
	p = strings.TrimSuffix(p, "/")
	if t.name(p) {
		return true
	}
	if project != "" {
		if rel, ok := strings.CutPrefix(p, strings.TrimSuffix(project, "/")+"/"); ok && t.name(rel) {
			return true
		}
	}
	base := path.Base(p)
	if shared {
		dir := path.Base(path.Dir(p))
		if dir == "." || dir == "/" {
			return false
		}
		return t.name(dir + "/" + base)
	}
	return t.name(base)
}

// taskIDs are the names a tracker id goes by: the id, and without its
// project prefix (spotter-gqc.6: gqc.6) when what is left still names
// something. Bare numbers (TodoWrite's ids) name nothing.
func taskIDs(id string) []string {
	id = strings.TrimSpace(id)
	if len(id) < 3 || isDigits(id) {
		return nil
	}
	out := []string{id}
	if _, rest, ok := strings.Cut(id, "-"); ok && len(rest) >= 3 && !isDigits(rest) {
		out = append(out, rest)
	}
	return out
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// coversTask is the rule for tracker items.
func (t lossText) coversTask(id, subject string) bool {
	for _, n := range taskIDs(id) {
		if t.name(n) {
			return true
		}
	}
	return t.coversWords(subject)
}

// coversError is the rule for errors: its words, or a name it carries with
// a third of its distinctive words.
func (t lossText) coversError(e string) bool {
	if t.coversWords(e) {
		return true
	}
	named := false
	for _, n := range errorNames(e) {
		if t.name(n) {
			named = true
			break
		}
	}
	if !named {
		return false
	}
	words, _, _ := t.wordEvidence(e)
	return words >= 1.0/3
}

// errorNames are the names an error carries: tokens that look like code
// rather than prose (a file:line, a path, snake_case, CamelCase inside a
// word, a dotted name), with the file of a file:line on its own too.
func errorNames(e string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(e, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune("\"'`()[]{}<>,;“”‘’", r)
	}) {
		f = strings.TrimRight(f, ".:")
		if len(f) < 4 || !codeLike(f) {
			continue
		}
		out = append(out, f)
		if file, line, ok := strings.Cut(f, ":"); ok && isDigits(strings.Split(line, ":")[0]) {
			out = append(out, file, path.Base(file))
		} else if strings.Contains(f, "/") {
			out = append(out, path.Base(f))
		}
	}
	return out
}

// codeLike tells whether a token is a name from code: it has an
// underscore, a slash, a dot or colon between letters or digits, or an
// upper-case letter after a lower-case one.
func codeLike(s string) bool {
	prevLower := false
	for i, r := range s {
		switch {
		case r == '_' || r == '/':
			return true
		case (r == '.' || r == ':') && i > 0 && i < len(s)-1:
			return true
		case unicode.IsUpper(r) && prevLower:
			return true
		}
		prevLower = unicode.IsLower(r)
	}
	return false
}
