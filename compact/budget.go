package compact

import "math"

// Budget defaults.
const (
	// DefaultMaxOutputTokens is the output a request keeps room for.
	DefaultMaxOutputTokens = 16384
	// DefaultShouldCompactAt is the utilization above which compacting is
	// advised.
	DefaultShouldCompactAt = 0.80
	// DefaultMustCompactAt is the utilization above which the next request
	// risks not fitting.
	DefaultMustCompactAt = 0.95
)

// Budget is a request's token budget. A request must leave room for its
// output, so the input can use at most ContextLimit - MaxOutputTokens (the
// input window); utilization, overflow and what is available are all
// measured against that. Zero fields take their defaults, so
// Budget{ContextLimit: 200000, MessageTokens: n} is ready to use.
type Budget struct {
	// ContextLimit is the model's window (see ContextLimit).
	ContextLimit int64 `json:"context_limit"`
	// SystemPromptTokens counts what precedes the messages: system prompt,
	// memory docs, tool schemas.
	SystemPromptTokens int64 `json:"system_prompt_tokens"`
	// MaxOutputTokens is the room kept for the output; 0 means
	// DefaultMaxOutputTokens.
	MaxOutputTokens int64 `json:"max_output_tokens"`
	// MessageTokens counts the conversation.
	MessageTokens int64 `json:"message_tokens"`
	// ShouldCompactAt and MustCompactAt are utilization thresholds; 0 means
	// DefaultShouldCompactAt and DefaultMustCompactAt.
	ShouldCompactAt float64 `json:"should_compact_at"`
	MustCompactAt   float64 `json:"must_compact_at"`
}

// Used is the input in use: system prompt and messages.
func (b Budget) Used() int64 { return b.SystemPromptTokens + b.MessageTokens }

// InputWindow is how much input fits: the context limit less the room kept
// for output. It is never negative.
func (b Budget) InputWindow() int64 {
	out := b.MaxOutputTokens
	if out == 0 {
		out = DefaultMaxOutputTokens
	}
	return max(b.ContextLimit-out, 0)
}

// Available is the input that still fits (0 when none does).
func (b Budget) Available() int64 { return max(b.InputWindow()-b.Used(), 0) }

// Overflow is by how much the input exceeds the input window (0 when it
// fits).
func (b Budget) Overflow() int64 { return max(b.Used()-b.InputWindow(), 0) }

// Utilization is the input in use as a fraction of the input window: above
// 1 when it overflows, +Inf when there is input but no window.
func (b Budget) Utilization() float64 {
	w := b.InputWindow()
	if w == 0 {
		if b.Used() > 0 {
			return math.Inf(1)
		}
		return 0
	}
	return float64(b.Used()) / float64(w)
}

// ShouldCompact reports whether utilization is above ShouldCompactAt.
func (b Budget) ShouldCompact() bool {
	return b.Utilization() > orDefault(b.ShouldCompactAt, DefaultShouldCompactAt)
}

// MustCompact reports whether utilization is above MustCompactAt.
func (b Budget) MustCompact() bool {
	return b.Utilization() > orDefault(b.MustCompactAt, DefaultMustCompactAt)
}

func orDefault(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}
