package compact

import (
	"encoding/json"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/agentledger/ledger/compact/bpe"
)

// Estimator guesses how many tokens text and messages take in a model's
// context, for when the API has not said (before a request is sent, or for
// parts of a request the API does not break down).
type Estimator interface {
	// Tokens estimates the tokens of plain text.
	Tokens(s string) int
	// MessageTokens estimates the tokens of one message: its blocks plus
	// what the message and each block cost by their structure.
	MessageTokens(m Message) int
}

// CharsEstimator is the plain rule of thumb: a token per four characters
// (Unicode code points), with no cost for structure. It is the baseline the
// default estimator is measured against; on the corpus it misses real
// output_tokens by a median of 44-47% (see TokenEstimator).
type CharsEstimator struct{}

// Tokens returns the characters of s divided by four, rounded.
func (CharsEstimator) Tokens(s string) int {
	return (utf8.RuneCountInString(s) + 2) / 4
}

// MessageTokens returns the characters of the message's text, thinking,
// tool names, tool inputs and tool results divided by four, rounded.
func (CharsEstimator) MessageTokens(m Message) int {
	return (messageChars(m) + 2) / 4
}

// messageChars counts the characters a message carries: text, thinking,
// tool names and inputs, tool results.
func messageChars(m Message) int {
	n := 0
	for _, b := range m.Blocks {
		n += utf8.RuneCountInString(b.Text) + utf8.RuneCountInString(b.ToolName) + utf8.RuneCountInString(b.Input)
	}
	return n
}

// The default estimator's constants, fitted on the real usage of the
// corpus (../shared/corpus): every API response of
// claude/spotter-ae4a77f8 (Haiku 4.5 and Opus 4.6) and
// claude/ccviewer-fe5e1c67 (Sonnet 4) without thinking blocks and with a
// final usage, 295 responses; estimate against usage.output_tokens,
// minimizing median + p90/4 of the absolute relative error over a grid.
// Result with cl100k_base: median 3.3%, p90 8.1% (chars/4: 46.2%, 73.0%);
// on spotter-258c7280, not used for the fit: median 2.7%, p90 8.2% (chars/4:
// 60.5%, 72.0%). o200k_base, fitted the same way, did no better (median
// 2.8%, p90 8.5%) and takes twice as long to load. TestCalibration
// re-measures all of this.
//
// Claude writes a tool call as markup, not as the JSON a transcript stores:
// an invoke element carrying the tool's name, one parameter element per
// input field, string values raw (not JSON-quoted or escaped). Hence a cost
// per call, one per parameter, and tokens of the raw values.
const (
	// DefaultTextScale converts cl100k_base tokens of prose to Claude
	// tokens: Claude's tokenizer spends about a quarter more.
	DefaultTextScale = 1.24
	// DefaultToolInputScale is the same for tool inputs (code, paths,
	// commands), which Claude's tokenizer splits a little finer still.
	DefaultToolInputScale = 1.30
	// DefaultToolCallOverhead is the markup of one tool call.
	DefaultToolCallOverhead = 22
	// DefaultToolParamOverhead is the markup around one input parameter.
	DefaultToolParamOverhead = 10
	// DefaultResponseOverhead is what an assistant response costs beyond
	// its blocks (block separators, end of turn).
	DefaultResponseOverhead = 18

	// The input side has no per-message usage to fit against; these come
	// from the growth of the context between consecutive API calls of the
	// same corpus files (context_{n+1} - context_n - output_n against the
	// tool results and user text in between, 250 steps, median error 8%).

	// DefaultToolResultScale converts cl100k_base tokens of tool output.
	DefaultToolResultScale = 1.16
	// DefaultToolResultOverhead is the wrapping of one tool result.
	DefaultToolResultOverhead = 8
	// DefaultMessageOverhead is what a user, system or tool message costs
	// beyond its blocks.
	DefaultMessageOverhead = 6
	// DefaultImageTokens is charged per image block: Anthropic's figure for
	// an image at the largest size sent without downscaling (about 1.15
	// megapixels). Transcripts do not keep the size; this is the ceiling.
	DefaultImageTokens = 1600
)

// TokenEstimator is the default estimator: a real BPE tokenizer
// (cl100k_base, package bpe, its vocabulary compiled into the binary)
// scaled to Claude's tokenizer, plus what content blocks cost by their
// structure. Its fields are exported so that a caller can recalibrate it
// for another model family; NewEstimator fills them with the fitted
// defaults.
//
// The tokenizer needs no loading: its tables are read in place from the
// binary. A TokenEstimator is safe for concurrent use.
type TokenEstimator struct {
	// TextScale, ToolInputScale and ToolResultScale convert tokenizer
	// counts of text (and thinking), tool inputs and tool outputs.
	TextScale       float64
	ToolInputScale  float64
	ToolResultScale float64
	// ToolCallOverhead is added per tool call, ToolParamOverhead per field
	// of its input, ToolResultOverhead per tool output.
	ToolCallOverhead   int
	ToolParamOverhead  int
	ToolResultOverhead int
	// ResponseOverhead is added per assistant message, MessageOverhead per
	// message of any other role.
	ResponseOverhead int
	MessageOverhead  int
	// ImageTokens is charged per image block.
	ImageTokens int
}

// NewEstimator returns a TokenEstimator with the constants fitted on the
// corpus.
func NewEstimator() *TokenEstimator {
	return &TokenEstimator{
		TextScale:          DefaultTextScale,
		ToolInputScale:     DefaultToolInputScale,
		ToolResultScale:    DefaultToolResultScale,
		ToolCallOverhead:   DefaultToolCallOverhead,
		ToolParamOverhead:  DefaultToolParamOverhead,
		ToolResultOverhead: DefaultToolResultOverhead,
		ResponseOverhead:   DefaultResponseOverhead,
		MessageOverhead:    DefaultMessageOverhead,
		ImageTokens:        DefaultImageTokens,
	}
}

var defaultEstimator = NewEstimator()

// DefaultEstimator returns the shared default estimator. Callers must not
// change its fields; use NewEstimator for one of their own.
func DefaultEstimator() Estimator { return defaultEstimator }

// Tokens estimates the Claude tokens of plain text.
func (e *TokenEstimator) Tokens(s string) int {
	return scaled(e.TextScale, bpeTokens(s))
}

// Memo returns Tokens with a memory: texts are counted line by line (a
// tokenizer piece never spans a line break followed by something else, so
// the sum is the whole's count) and each line's count is kept. Counting
// many texts that share most of their lines, as fitting a document to a
// budget does (each trial renders it again), then tokenizes each line
// once. It is for one caller's run, not safe for concurrent use.
func (e *TokenEstimator) Memo() func(string) int {
	memo := map[string]int{}
	return func(s string) int {
		n := 0
		for len(s) > 0 {
			chunk := s[:nextChunk(s)]
			s = s[len(chunk):]
			for len(chunk) > 0 {
				line := chunk[:lineEnd(chunk)]
				chunk = chunk[len(line):]
				c, ok := memo[line]
				if !ok {
					c = bpeTokens(line)
					memo[line] = c
				}
				n += c
			}
		}
		return scaled(e.TextScale, n)
	}
}

// DefaultMemo is the default estimator's Tokens with a memory (see Memo).
func DefaultMemo() func(string) int { return defaultEstimator.Memo() }

// lineEnd returns the end of s's first line: after its first run of line
// breaks that something else follows, or the end of s. The tokenizer's
// pieces never cross that point (see TestLineEndIsAPieceBoundary).
func lineEnd(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] != '\n' && s[i] != '\r' {
			continue
		}
		j := i + 1
		for j < len(s) && (s[j] == '\n' || s[j] == '\r') {
			j++
		}
		return j
	}
	return len(s)
}

// MessageTokens estimates the Claude tokens of a message: its blocks plus
// the message's own overhead (ResponseOverhead for an assistant message,
// MessageOverhead for the others).
func (e *TokenEstimator) MessageTokens(m Message) int {
	n := e.MessageOverhead
	if m.Role == RoleAssistant {
		n = e.ResponseOverhead
	}
	for _, b := range m.Blocks {
		n += e.BlockTokens(b)
	}
	return n
}

// BlockTokens estimates the Claude tokens of one content block.
func (e *TokenEstimator) BlockTokens(b Block) int {
	switch b.Kind {
	case BlockToolUse:
		return e.ToolCallOverhead + e.toolInputTokens(b.ToolName, b.Input)
	case BlockToolResult:
		return e.ToolResultOverhead + scaled(e.ToolResultScale, bpeTokens(b.Text))
	case BlockImage:
		return e.ImageTokens
	default: // text, thinking, and kinds this version does not know
		return scaled(e.TextScale, bpeTokens(b.Text))
	}
}

// toolInputTokens costs a tool call's name and input the way the model
// writes them: a JSON object's fields as parameters with raw string values;
// any other input (Codex's apply_patch takes a patch) as it is.
func (e *TokenEstimator) toolInputTokens(name, input string) int {
	tokens := bpeTokens(name)
	params := 0
	var fields map[string]json.RawMessage
	if strings.HasPrefix(strings.TrimSpace(input), "{") && json.Unmarshal([]byte(input), &fields) == nil {
		for k, v := range fields {
			params++
			tokens += bpeTokens(k)
			var s string
			if len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil {
				tokens += bpeTokens(s)
			} else {
				tokens += bpeTokens(string(v))
			}
		}
	} else {
		tokens += bpeTokens(input)
	}
	return scaled(e.ToolInputScale, tokens) + params*e.ToolParamOverhead
}

func scaled(scale float64, n int) int {
	return int(math.Round(scale * float64(n)))
}

// EstimateMessages estimates the tokens of a conversation, counting each
// API response's overhead once however many lines it spans (see
// MergeResponses).
func EstimateMessages(msgs []Message, est Estimator) int64 {
	if est == nil {
		est = DefaultEstimator()
	}
	var n int64
	for _, m := range MergeResponses(msgs) {
		n += int64(est.MessageTokens(m))
	}
	return n
}

// MergeResponses returns msgs with the lines of each API response (those
// sharing a ResponseID) merged into one message at the position of the
// first: blocks in order, the last line's Usage (the final one). Messages
// without a ResponseID are kept as they are. It is meant for counting: a
// tool result that arrived between two lines of a response ends up after
// the merged response. msgs is not modified.
func MergeResponses(msgs []Message) []Message {
	out := make([]Message, 0, len(msgs))
	at := make(map[string]int)
	for _, m := range msgs {
		if m.ResponseID == "" {
			out = append(out, m)
			continue
		}
		i, ok := at[m.ResponseID]
		if !ok {
			at[m.ResponseID] = len(out)
			out = append(out, m)
			continue
		}
		merged := &out[i]
		merged.Blocks = append(merged.Blocks[:len(merged.Blocks):len(merged.Blocks)], m.Blocks...)
		if m.Usage != nil {
			merged.Usage = m.Usage
		}
	}
	return out
}

// The tokenizer: cl100k_base as package bpe counts it, with a vocabulary
// precomputed into the binary's read-only data, so that no process pays
// to build one (tiktoken-go/tokenizer built a 100,000-entry map in 6-15
// ms; the better-known tiktoken-go with its loader took about 145 ms).
// Its counts are tiktoken-go/tokenizer's, which bpe's tests hold it to.
const (
	// chunkBytes and maxRun bound the text handed to the tokenizer at
	// once. Its byte-pair merge is quadratic in the length of a piece, so
	// long inputs go in chunks cut at line or word ends, and a run of more
	// than maxRun bytes without a space (or of spaces only) is cut: 1 MB of
	// one letter then takes a second, not hours. A cut changes the count by
	// a token or so.
	chunkBytes = 8 << 10
	maxRun     = 1 << 10
)

var (
	firstUse     sync.Once
	firstUseTime atomic.Int64 // nanoseconds; 0 until the first count
)

// TokenizerInitTime reports how long the first count of the process took
// (the tokenizer's tables paging in), or 0 before it.
func TokenizerInitTime() time.Duration {
	return time.Duration(firstUseTime.Load())
}

// bpeTokens counts the cl100k_base tokens of s, special-token text
// included as ordinary text.
func bpeTokens(s string) int {
	if s == "" {
		return 0
	}
	var start time.Time
	first := firstUseTime.Load() == 0
	if first {
		start = time.Now()
	}
	n := 0
	for len(s) > 0 {
		chunk := s[:nextChunk(s)]
		n += bpe.Count(chunk)
		s = s[len(chunk):]
	}
	if first {
		firstUse.Do(func() { firstUseTime.Store(max(int64(time.Since(start)), 1)) })
	}
	return n
}

// nextChunk returns the length of the next chunk of s to tokenize: at most
// chunkBytes (see cutPoint), and ending before any run longer than maxRun
// of spaces or of non-spaces.
func nextChunk(s string) int {
	n := len(s)
	if n > chunkBytes {
		n = cutPoint(s, chunkBytes)
	}
	// Runs alternate between spaces and other bytes: measure each whole.
	for i := 0; i < n; {
		space := chunkSpace[s[i]]
		j := i + 1
		for j < n && chunkSpace[s[j]] == space {
			j++
		}
		if j-i > maxRun {
			cut := i + maxRun
			for !utf8.RuneStart(s[cut]) {
				cut--
			}
			return cut
		}
		i = j
	}
	return n
}

// chunkSpace marks the bytes nextChunk counts as spaces.
var chunkSpace = [256]bool{' ': true, '\n': true, '\t': true, '\r': true}

// cutPoint returns where to end a chunk of s of at most limit bytes: after
// the last newline in its second half, else after the last space there,
// else at a rune boundary.
func cutPoint(s string, limit int) int {
	head := s[:limit]
	if i := strings.LastIndexByte(head, '\n'); i >= limit/2 {
		return i + 1
	}
	if i := strings.LastIndexByte(head, ' '); i >= limit/2 {
		return i + 1
	}
	for i := limit; i > limit-utf8.UTFMax && i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return i
		}
	}
	return limit
}
