package compact

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/agentledger/ledger/compact/bpe"
)

func TestCharsEstimator(t *testing.T) {
	tests := []struct {
		name string
		msg  Message
		want int
	}{
		{"empty", Message{}, 0},
		{"text", Message{Role: RoleUser, Blocks: []Block{{Kind: BlockText, Text: "12345678"}}}, 2},
		{"rounds half up", Message{Blocks: []Block{{Kind: BlockText, Text: "123456"}}}, 2},
		{"runes not bytes", Message{Blocks: []Block{{Kind: BlockText, Text: "éééé"}}}, 1},
		{"tool use counts name and input", Message{Role: RoleAssistant, Blocks: []Block{
			{Kind: BlockToolUse, ToolName: "Bash", Input: `{"command":"ls"}`}}}, 5},
		{"tool result and thinking", Message{Blocks: []Block{
			{Kind: BlockThinking, Text: "abcd"}, {Kind: BlockToolResult, Text: "abcd"}}}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (CharsEstimator{}).MessageTokens(tt.msg); got != tt.want {
				t.Errorf("MessageTokens = %d, want %d", got, tt.want)
			}
		})
	}
	if got, want := (CharsEstimator{}).Tokens("abcdefgh"), 2; got != want {
		t.Errorf("Tokens = %d, want %d", got, want)
	}
}

// TestBPETokens pins the tokenizer to known cl100k_base counts. The
// expected figures were computed with tiktoken-go v0.1.8 (EncodeOrdinary),
// the library the estimator was calibrated with, so a change of tokenizer
// library that changed counts would fail here.
func TestBPETokens(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"tiktoken is great!", 6},
		{"<|endoftext|>", 7}, // special-token text counts as ordinary text
		{"func (s *Store) Open(ctx context.Context, path string) (*Store, error) {\n\treturn nil, err\n}", 26},
		{"/home/dev/src/payments/pkg/auth/session_store.go", 10},
		{`{"file_path":"/tmp/x.go","old_string":"a\tb"}`, 15},
		{"--- FAIL: TestSessionExpiry (0.00s)\n    session_store_test.go:48: session still valid", 24},
		{"日本語のテキストと絵文字🎉👍🏽", 21},
		{"   spaces   and\ttabs\r\n\r\nnewlines  ", 10},
		{"12345678901234567890 3.14159 0xdeadbeef", 18},
		{"Ünïcödé façade naïve résumé", 14},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := bpeTokens(tt.in); got != tt.want {
				t.Errorf("bpeTokens(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestBPETokensLongInput(t *testing.T) {
	prose := strings.Repeat("The quick brown fox jumps over the lazy dog; then it naps.\n", 300) // ~18 KB
	long := strings.Repeat("x", 3000)                                                            // runs longer than maxRun get cut
	tests := []struct {
		name string
		in   string
	}{
		{"prose in chunks", prose},
		{"long runs", strings.Repeat("word "+long+"\n"+strings.Repeat(" ", 3000), 2)},
		{"multibyte, no spaces", strings.Repeat("日本語のテキスト", 200)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := bpeTokens(tt.in)
			whole := bpe.Count(tt.in)
			if diff := got - whole; diff < -whole/100 || diff > whole/100 {
				t.Errorf("chunked count %d, whole count %d: more than 1%% apart", got, whole)
			}
		})
	}
}

func TestNextChunk(t *testing.T) {
	tests := []struct {
		name string
		s    string
		want int
	}{
		{"short", "hello world", 11},
		{"long run of letters", strings.Repeat("a", maxRun+10), maxRun},
		{"long run of spaces", "ab" + strings.Repeat(" ", maxRun+10), 2 + maxRun},
		{"run cut on a rune boundary", strings.Repeat("é", maxRun), maxRun},
		{"long text", strings.Repeat("abc def\n", 2000), chunkBytes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nextChunk(tt.s); got != tt.want {
				t.Errorf("nextChunk = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestCutPoint(t *testing.T) {
	tests := []struct {
		name  string
		s     string
		limit int
		want  int
	}{
		{"after newline", "aaaaaa\nbbbbbbbbb", 10, 7},
		{"after space", "aaaaaa bbbbbbbbb", 10, 7},
		{"newline too early", "a\nbbbbbbbbbbbbbb", 10, 10},
		{"rune boundary", "aaaaaaaaaé", 10, 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cutPoint(tt.s, tt.limit); got != tt.want {
				t.Errorf("cutPoint = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestTokenEstimatorBlocks(t *testing.T) {
	// A unit scale makes the structure visible: each want is tokenizer
	// counts plus overheads.
	e := &TokenEstimator{TextScale: 1, ToolInputScale: 1, ToolResultScale: 1, ToolCallOverhead: 100,
		ToolParamOverhead: 10, ToolResultOverhead: 1000, ResponseOverhead: 7, MessageOverhead: 3, ImageTokens: 500}
	tok := bpeTokens
	tests := []struct {
		name string
		b    Block
		want int
	}{
		{"text", Block{Kind: BlockText, Text: "hello world"}, 2},
		{"thinking counts as text", Block{Kind: BlockThinking, Text: "hello world"}, 2},
		{"tool use: string values raw", Block{Kind: BlockToolUse, ToolName: "Bash", Input: `{"command":"echo \"hi\"\nls"}`},
			100 + tok("Bash") + tok("command") + tok("echo \"hi\"\nls") + 10},
		{"tool use: other values as JSON", Block{Kind: BlockToolUse, ToolName: "Read", Input: `{"limit":200,"paths":["a","b"]}`},
			100 + tok("Read") + tok("limit") + tok("200") + tok("paths") + tok(`["a","b"]`) + 20},
		{"tool use: input not JSON", Block{Kind: BlockToolUse, ToolName: "apply_patch", Input: "*** Begin Patch\n"},
			100 + tok("apply_patch") + tok("*** Begin Patch\n")},
		{"tool use: no input", Block{Kind: BlockToolUse, ToolName: "Bash"}, 100 + tok("Bash")},
		{"tool result", Block{Kind: BlockToolResult, Text: "hello world"}, 1002},
		{"image", Block{Kind: BlockImage}, 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := e.BlockTokens(tt.b); got != tt.want {
				t.Errorf("BlockTokens = %d, want %d", got, tt.want)
			}
		})
	}

	msgs := []struct {
		name string
		m    Message
		want int
	}{
		{"assistant overhead", Message{Role: RoleAssistant, Blocks: []Block{{Kind: BlockText, Text: "hello world"}}}, 9},
		{"user overhead", Message{Role: RoleUser, Blocks: []Block{{Kind: BlockText, Text: "hello world"}}}, 5},
		{"tool message", Message{Role: RoleTool}, 3},
	}
	for _, tt := range msgs {
		t.Run(tt.name, func(t *testing.T) {
			if got := e.MessageTokens(tt.m); got != tt.want {
				t.Errorf("MessageTokens = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestDefaultEstimatorScale(t *testing.T) {
	e := NewEstimator()
	text := strings.Repeat("Refactor the parser so that errors carry line numbers. ", 20)
	if got, want := e.Tokens(text), scaled(DefaultTextScale, bpeTokens(text)); got != want {
		t.Errorf("Tokens = %d, want %d", got, want)
	}
	if DefaultEstimator().Tokens(text) != e.Tokens(text) {
		t.Error("DefaultEstimator and NewEstimator disagree")
	}
}

func TestEstimatorConcurrent(t *testing.T) {
	e := DefaultEstimator()
	text := strings.Repeat("concurrent use is safe ", 50)
	want := e.Tokens(text)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got := e.Tokens(text); got != want {
				t.Errorf("Tokens = %d, want %d", got, want)
			}
		})
	}
	wg.Wait()
}

// TestTokenizerLazy checks, in a fresh process, that nothing loads the
// tokenizer until an estimate needs it.
func TestTokenizerLazy(t *testing.T) {
	if os.Getenv("COMPACT_LAZY_CHILD") == "1" {
		e := NewEstimator()
		_ = DefaultEstimator()
		_ = ContextLimit("claude-opus-4-6", nil)
		m := NewMeter(Request{SystemPrompt: "x", Messages: []Message{{Role: RoleUser}}}, 1000, CharsEstimator{})
		_ = m.Summary()
		if d := TokenizerInitTime(); d != 0 {
			t.Fatalf("tokenizer loaded before any estimate (%v)", d)
		}
		if e.Tokens("hello world") == 0 {
			t.Fatal("no tokens")
		}
		d := TokenizerInitTime()
		if d == 0 {
			t.Fatal("TokenizerInitTime = 0 after an estimate")
		}
		t.Logf("tokenizer init: %v", d)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestTokenizerLazy$", "-test.v")
	cmd.Env = append(os.Environ(), "COMPACT_LAZY_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "tokenizer init:") {
			t.Log(strings.TrimSpace(line))
		}
	}
}

func TestMergeResponses(t *testing.T) {
	u1, u2 := &Usage{OutputTokens: 1}, &Usage{OutputTokens: 90}
	msgs := []Message{
		{UUID: "u", Role: RoleUser, Blocks: []Block{{Kind: BlockText, Text: "go"}}},
		{UUID: "a1", Role: RoleAssistant, ResponseID: "r1", Usage: u1, Blocks: []Block{{Kind: BlockText, Text: "ok"}}},
		{UUID: "a2", Role: RoleAssistant, ResponseID: "r1", Usage: u2, Blocks: []Block{{Kind: BlockToolUse, ToolID: "t1"}}},
		{UUID: "r", Role: RoleUser, Blocks: []Block{{Kind: BlockToolResult, ToolID: "t1"}}},
		{UUID: "a3", Role: RoleAssistant, ResponseID: "r2", Blocks: []Block{{Kind: BlockText, Text: "done"}}},
	}
	got := MergeResponses(msgs)
	if len(got) != 4 {
		t.Fatalf("len = %d, want 4", len(got))
	}
	if got[1].UUID != "a1" || len(got[1].Blocks) != 2 || got[1].Usage != u2 {
		t.Errorf("merged = %+v, want a1 with 2 blocks and the last usage", got[1])
	}
	if len(msgs[1].Blocks) != 1 {
		t.Error("MergeResponses modified its input")
	}

	est := &TokenEstimator{TextScale: 1, ResponseOverhead: 100, MessageOverhead: 1}
	// u: 1+1, r1: 100+1+0, r: 1+0, r2: 100+1
	if got, want := EstimateMessages(msgs, est), int64(1+1+100+1+1+100+1); got != want {
		t.Errorf("EstimateMessages = %d, want %d", got, want)
	}
}

var benchText = strings.Repeat("func (s *Store) Session(ctx context.Context, id string) (*Session, error) {\n\t// Look the session up by its full id or a unique prefix.\n}\n", 40)

func BenchmarkTokens(b *testing.B) {
	e := NewEstimator()
	n := e.Tokens(benchText)
	b.SetBytes(int64(len(benchText)))
	b.ResetTimer()
	for b.Loop() {
		e.Tokens(benchText)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

func BenchmarkMessageTokens(b *testing.B) {
	e := NewEstimator()
	m := Message{Role: RoleAssistant, Blocks: []Block{
		{Kind: BlockText, Text: "Let me fix the failing test."},
		{Kind: BlockToolUse, ToolName: "Edit", Input: `{"file_path":"/src/store/session.go","old_string":"return nil","new_string":"return ErrNotFound"}`},
	}}
	n := e.MessageTokens(m)
	b.ResetTimer()
	for b.Loop() {
		e.MessageTokens(m)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

func BenchmarkCharsEstimator(b *testing.B) {
	var e CharsEstimator
	n := e.Tokens(benchText)
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		e.Tokens(benchText)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkTokensPathological tokenizes 1 MB without a space, the case
// the chunking guards against.
func BenchmarkTokensPathological(b *testing.B) {
	s := strings.Repeat("=", 1<<20)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		bpeTokens(s)
	}
}

// TestLineEndIsAPieceBoundary checks what Memo relies on: counting a text
// line by line (cut after each run of line breaks) gives its count.
func TestLineEndIsAPieceBoundary(t *testing.T) {
	rnd := rand.New(rand.NewPCG(11, 12))
	alphabet := []string{"a", "word", " ", "  ", "\t", "\n", "\n\n", "\r\n", " \n", "\n ", ".", "!\n", "'s", "12", "日本", "\u00a0", "\u2028", "-", "\x7f"}
	var texts []string
	for range 3000 {
		var sb strings.Builder
		for range 1 + rnd.IntN(60) {
			sb.WriteString(alphabet[rnd.IntN(len(alphabet))])
		}
		texts = append(texts, sb.String())
	}
	texts = append(texts, benchText, strings.Repeat("x \n\n  y\n", 500))
	memo := NewEstimator().Memo()
	for _, s := range texts {
		sum := 0
		for rest := s; len(rest) > 0; {
			line := rest[:lineEnd(rest)]
			sum += bpe.Count(line)
			rest = rest[len(line):]
		}
		if whole := bpe.Count(s); sum != whole {
			t.Fatalf("%q: %d tokens line by line, %d whole", s, sum, whole)
		}
		if got, want := memo(s), NewEstimator().Tokens(s); got != want {
			t.Fatalf("%q: Memo %d, Tokens %d", s, got, want)
		}
	}
}

// nextChunkReference is nextChunk as it was first written, byte by byte.
func nextChunkReference(s string) int {
	n := len(s)
	if n > chunkBytes {
		n = cutPoint(s, chunkBytes)
	}
	run, prevSpace := 0, false
	for i := 0; i < n; i++ {
		space := s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r'
		if i > 0 && space == prevSpace {
			run++
		} else {
			run = 1
		}
		prevSpace = space
		if run > maxRun {
			for !utf8.RuneStart(s[i]) {
				i--
			}
			return i
		}
	}
	return n
}

func TestNextChunkMatchesReference(t *testing.T) {
	rnd := rand.New(rand.NewPCG(13, 14))
	parts := []string{"a", " ", "\n", "é", "日本", strings.Repeat("x", 700), strings.Repeat(" ", 600), strings.Repeat("é", 300), "\t\r"}
	for range 3000 {
		var sb strings.Builder
		for range rnd.IntN(40) {
			sb.WriteString(parts[rnd.IntN(len(parts))])
		}
		s := sb.String()
		if got, want := nextChunk(s), nextChunkReference(s); got != want {
			t.Fatalf("nextChunk = %d, want %d (len %d)", got, want, len(s))
		}
	}
}
