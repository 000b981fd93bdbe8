package bpe

import (
	"bufio"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
	"github.com/tiktoken-go/tokenizer/codec"
)

// splitPattern is cl100k_base's, as the reference library compiles it.
const splitPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

var reference = codec.NewCl100kBase()

// refPieces splits s with the reference regular expression.
func refPieces(t testing.TB, re *regexp2.Regexp, s string) []string {
	var out []string
	m, err := re.FindStringMatch(s)
	for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
		out = append(out, m.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func pieces(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		if s[i] == del {
			i++
			continue
		}
		j := pieceEnd(s, i)
		out = append(out, s[i:j])
		i = j
	}
	return out
}

func equalPieces(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSplitEveryRune puts code points in the contexts where the split
// pattern's classes (\p{L}, \p{N}, \s, the contractions) decide a piece's
// end, and compares the pieces with the reference expression's: every code
// point of planes 0 and 1, where the categories vary, and a sample of the
// others (CJK ideographs, private use, unassigned).
//
// Under -race (ten times slower) planes 0 and 1 are sampled: each code
// point whose classes (isLetter, isNumber, isSpace) differ from either
// neighbour's, where a table of ours that disagrees with the reference's
// shows as a run cut short, and one in eight of the rest, which finds a
// run of eight or more the reference classes otherwise.
func TestSplitEveryRune(t *testing.T) {
	re := regexp2.MustCompile(splitPattern, regexp2.None)
	classes := func(r rune) [3]bool { return [3]bool{isLetter(r), isNumber(r), isSpace(r)} }
	var sb strings.Builder
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		if r >= 0x20000 && r%251 != 0 {
			continue
		}
		if raceEnabled && r%8 != 0 && r > 0x7f {
			if c := classes(r); c == classes(r-1) && c == classes(r+1) {
				continue
			}
		}
		c := string(r)
		sb.Reset()
		sb.WriteString("a" + c + "b " + c + "1" + c + c + "'" + c + "x " + c + "\n" + c + " " + c + ".")
		s := sb.String()
		if got, want := pieces(s), refPieces(t, re, s); !equalPieces(got, want) {
			t.Fatalf("U+%04X: pieces %q, want %q", r, got, want)
		}
	}
}

// TestCountMatchesReference compares Count with the reference library on
// the real transcripts of the shared corpus, line by line, and on random
// text made of the characters that make pieces end.
func TestCountMatchesReference(t *testing.T) {
	check := func(s string) {
		t.Helper()
		want, err := reference.Count(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := Count(s); got != want {
			t.Fatalf("Count(%q) = %d, want %d", shorten(s), got, want)
		}
	}
	alphabet := []string{"a", "Z", "é", "ſ", "日", "1", "٣", "½", " ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u2028", "'", "'s", "'LL",
		"'re", "'Ve", ".", "...", "!?", "🎉", "👍🏽", "-", "_", "/", "\\", "\"", "{", "\x00", "\xff", "\xe2\x82", "x", "abc", "XYZ", "0xdead"}
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		var sb strings.Builder
		for range 1 + rnd.IntN(40) {
			sb.WriteString(alphabet[rnd.IntN(len(alphabet))])
		}
		check(sb.String())
	}
	// Long pieces take the heap merge.
	for _, s := range []string{strings.Repeat("a", 500), strings.Repeat("ab", 300), strings.Repeat("=", 1000),
		strings.Repeat("日本語", 100), strings.Repeat("0123456789abcdef", 40)} {
		check(s)
	}
	corpus := os.Getenv("LEDGER_CORPUS")
	if corpus == "" {
		corpus = filepath.Join("..", "..", "..", "shared", "corpus")
	}
	files, _ := filepath.Glob(filepath.Join(corpus, "*", "*.jsonl"))
	if len(files) == 0 {
		if os.Getenv("LEDGER_REQUIRE_CORPUS") != "" {
			t.Fatalf("no corpus at %s", corpus)
		}
		t.Skipf("no corpus at %s", corpus)
	}
	lines := 0
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			line := sc.Text()
			// Under -race, where the reference costs ten times as much, a
			// window of each line at a random place (its cut ends are
			// text of any kind too, bytes of a rune cut included).
			if raceEnabled && len(line) > 400 {
				at := rnd.IntN(len(line) - 400)
				line = line[at : at+400]
			}
			check(line)
			lines++
		}
		fh.Close()
	}
	t.Logf("%d corpus lines", lines)
}

func TestMergeScanAndHeapAgree(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	letters := "etaoinshrdlu THE_-=.0123"
	for range 3000 {
		b := make([]byte, 1+rnd.IntN(mergeHeapThreshold-1))
		for i := range b {
			b[i] = letters[rnd.IntN(len(letters))]
		}
		if s, h := mergeScan(string(b)), mergeHeap(string(b)); s != h {
			t.Fatalf("%q: scan %d, heap %d", b, s, h)
		}
	}
}

func shorten(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

var benchText = strings.Repeat("func (s *Store) Session(ctx context.Context, id string) (*Session, error) {\n\t// Look the session up by its full id or a unique prefix.\n}\n", 40)

func BenchmarkCount(b *testing.B) {
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		Count(benchText)
	}
}

func BenchmarkReferenceCount(b *testing.B) {
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		reference.Count(benchText)
	}
}
