package transcript

import (
	"time"

	"github.com/agentledger/ledger/compact"
)

// Format names a transcript format. Its values are the `source` of a
// session in ledger's output.
type Format string

// The formats ledger reads.
const (
	FormatClaude Format = "claude"
	FormatCodex  Format = "codex"
	// FormatGemini is Gemini CLI's chat log (gemini.go).
	FormatGemini Format = "gemini"
	// FormatQwen is Qwen Code's chat log (qwen.go).
	FormatQwen Format = "qwen"
	// FormatCopilot is GitHub Copilot CLI's events.jsonl (copilot.go).
	FormatCopilot Format = "copilot"
)

// SessionInfo is what a line says about its session. Empty fields say
// nothing: a caller merges them into what it already knows.
type SessionInfo struct {
	ID        string
	Project   string // the working directory (cwd)
	GitBranch string
	Title     string
	Model     string
	// ContextWindow is the model's window when the transcript states it
	// (Codex model_context_window; Claude Code's requestedModel "[1m]" or
	// the 1M beta of its api-request records).
	ContextWindow int64
	// Usage is the latest token usage the transcript reports at session
	// level (Codex token_count last_token_usage).
	Usage *compact.Usage
	// UsageOf is the uuid of the message whose API response Usage is
	// (Codex: the model's last item before the token_count); "" when the
	// transcript does not say, or the usage repeats one already given.
	UsageOf string
	// Cost is the session's cost so far, when the transcript states it
	// (Claude Code's cost-state; the latest one holds).
	Cost *compact.Cost
	Time time.Time
}

// Record is what one transcript line yields. At most one of Message and
// Boundary is set; Session may accompany either or stand alone.
type Record struct {
	Line     int   // 1-based line number in the file
	Offset   int64 // byte offset of the line's start
	Message  *compact.Message
	Boundary *compact.Boundary
	Session  *SessionInfo
}

// Skip tells why a line was not used.
type Skip struct {
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

// State is carried from one incremental read of a file to the next: what
// earlier lines said that later lines rely on.
type State struct {
	Format Format
	// SessionID is the session of lines that do not name one (Codex lines
	// never do; Claude title lines do not).
	SessionID string
	// LastUUID is the uuid of the last message read (Codex messages are
	// chained to it, having no uuids of their own).
	LastUUID string
	// LastContextTokens is the context in use at the last usage seen, the
	// pre-compaction figure for a Codex compaction that follows.
	LastContextTokens int64
	// Answered is the uuid of the model's last item (a Codex message,
	// tool call or reasoning) since the last token_count that gave usage:
	// the item whose response the next token_count measures. Codex
	// repeats a token_count after the tool output or the next request;
	// by then it is "".
	Answered string `json:",omitempty"`
	// CustomTitle is set once a Claude Code session's user named it: its
	// own titles (ai-title, summary) then change nothing.
	CustomTitle bool `json:",omitempty"`
	// PiCompaction is the id of the latest Pi compaction entry read: one
	// right under it is the same compaction, run twice (see pi.go).
	PiCompaction string `json:",omitempty"`
	// Skim is a line too long to read in the time a read has, being
	// passed over across reads (see lineReader.passOver); nil when none.
	Skim *Skim `json:",omitempty"`

	c *carry // in-process only: see carry
}

// Skim is how far a line being passed over is known to have no newline:
// it starts at byte At (where the reads stop, and the next starts) and
// its first Past bytes hold none.
type Skim struct {
	At, Past int64
}

// Result sums up one read.
type Result struct {
	// End is the byte offset just after the last complete line read: where
	// the next read starts. A last line without its newline is not read.
	End int64
	// Lines is the number of complete lines read; NextLine the line number
	// the next read starts at.
	Lines    int
	NextLine int
	// Skipped counts malformed lines (not JSON, JSON that is not a record
	// of the format). Lines skipped on purpose (progress, snapshots) are not
	// counted: they are not bad input.
	Skipped int
	// Skips holds the first few skipped lines with their reasons.
	Skips []Skip
	// Repaired counts lines whose invalid UTF-8 or NUL bytes were repaired.
	Repaired int
}

// MaxSkipsListed is how many skipped lines a Result names.
const MaxSkipsListed = 5
