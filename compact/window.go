package compact

import (
	"strconv"
	"strings"
)

// Context windows, in tokens.
const (
	// DefaultContextLimit is the window of the Claude 4.x models before
	// Opus 4.7, and the one assumed for a model this package does not know.
	DefaultContextLimit = 200_000
	// Context1M is the window of the Claude 5 models, Opus 4.7 and later,
	// and of the 4.x models that take the Context1MBeta.
	Context1M = 1_000_000
	// Context1MBeta is the beta that opens the 1M-token window of the
	// Claude 4.x models that have one (the anthropic-beta header value).
	Context1MBeta = "context-1m-2025-08-07"
	// CodexGPT5Window is what Codex CLI reports as model_context_window for
	// its GPT-5 models (272,000 less the 5% Codex keeps in reserve; seen in
	// the corpus' gpt-5.3-codex rollouts and in Codex 0.169.0's). Used when
	// a rollout does not say.
	CodexGPT5Window = 258_400
	// GeminiWindow is the window Gemini CLI counts for every Gemini model
	// (tokenLimit in its source; 0.61.0), compressing at half of it.
	GeminiWindow = 1_048_576
)

// Window is a model's context window and where the figure comes from.
type Window struct {
	// Tokens is the window's size.
	Tokens int64 `json:"tokens"`
	// Known is false when the model is not one this package knows and
	// Tokens is DefaultContextLimit by default.
	Known bool `json:"known"`
	// FromAgent is set when the agent itself stated the window: the status
	// line's context_window_size, Codex's model_context_window, a "[1m]"
	// model name or the 1M beta in its requests. Otherwise Tokens comes
	// from this package's table, a guess: ledger never tells an agent to
	// hand off on a guess.
	FromAgent bool `json:"from_agent"`
	// Source says where Tokens comes from, for a human reader.
	Source string `json:"source"`
}

// ContextLimit returns the context window of model. betas are the
// anthropic-beta values the requests carry (each may be a comma-separated
// list). Model names are matched loosely: API ids with or without a date
// ("claude-sonnet-4-5-20250929"), Claude Code aliases ("sonnet",
// "opus[1m]"), Bedrock and Vertex ids
// ("us.anthropic.claude-opus-4-1-20250805-v1:0",
// "claude-sonnet-4@20250514"). A "[1m]" suffix, as Claude Code writes it,
// is the agent saying the window is 1M; so is the 1M beta, for a model
// that takes it. An unknown model gets DefaultContextLimit with Known
// false.
//
// The Claude windows are those of Claude Code 2.1.328's own model table
// (context.window, native_1m, supports_1m_beta): the 5.x models and Opus
// 4.7 and later have 1M natively, the 4.x models before them 200,000 (the
// Sonnet 4.x and Opus 4.6 take the 1M beta). It is a fallback: a window
// the agent states (Window.Reported) beats it.
func ContextLimit(model string, betas []string) Window {
	name := strings.ToLower(strings.TrimSpace(model))
	suffix1M := strings.HasSuffix(name, "[1m]")
	name = strings.TrimSuffix(name, "[1m]")
	beta1M := false
	for _, list := range betas {
		for _, b := range strings.Split(list, ",") {
			if strings.TrimSpace(b) == Context1MBeta {
				beta1M = true
			}
		}
	}
	c, isClaude := claudeModelOf(name)
	switch {
	case isClaude && suffix1M:
		return Window{Tokens: Context1M, Known: true, FromAgent: true, Source: "the [1m] model name: the agent runs " + c.label() + " with its 1M window"}
	case isClaude && beta1M && c.takes1MBeta():
		return Window{Tokens: Context1M, Known: true, FromAgent: true, Source: c.label() + " with " + Context1MBeta + " in its requests"}
	case isClaude && c.major == 0:
		return Window{Tokens: DefaultContextLimit, Source: "the alias " + strconv.Quote(c.family) +
			" names a model that depends on the agent's version: assumed " + strconv.Itoa(DefaultContextLimit)}
	case isClaude && c.native1M():
		return Window{Tokens: Context1M, Known: true, Source: c.label() + " (1M natively, as Claude Code's model table has it)"}
	case isClaude:
		src := c.label() + " (as Claude Code's model table has it)"
		if beta1M {
			src = c.label() + " (it does not take the 1M beta)"
		}
		return Window{Tokens: DefaultContextLimit, Known: true, Source: src}
	case strings.HasPrefix(name, "gpt-5"):
		return Window{Tokens: CodexGPT5Window, Known: true, Source: "Codex's window for GPT-5 models"}
	case strings.HasPrefix(name, "gemini-"):
		return Window{Tokens: GeminiWindow, Known: true, Source: "Gemini CLI's window for Gemini models"}
	case name == "":
		return Window{Tokens: DefaultContextLimit, Source: "no model named: assumed " + strconv.Itoa(DefaultContextLimit)}
	}
	return Window{Tokens: DefaultContextLimit, Source: "unknown model " + strconv.Quote(model) + ": assumed " + strconv.Itoa(DefaultContextLimit)}
}

// claudeModel is a Claude model's family and version (0.0 for a bare
// alias).
type claudeModel struct {
	family       string
	major, minor int
}

// claudeFamilies are the Claude model families, as their ids spell them.
var claudeFamilies = []string{"sonnet", "opus", "haiku", "fable"}

// claudeModelOf reads a Claude model name (an API, Bedrock or Vertex id,
// or a bare Claude Code alias): its family and version. ok is false for a
// name that is not a Claude model's.
func claudeModelOf(name string) (c claudeModel, ok bool) {
	for _, f := range claudeFamilies {
		if name == f {
			return claudeModel{family: f}, true
		}
	}
	i := strings.Index(name, "claude-")
	if i < 0 {
		return c, false
	}
	// claude-opus-4-1-20250805-v1:0, claude-sonnet-4@20250514,
	// claude-3-5-sonnet-20241022: the family is one part, the version the
	// one- or two-digit parts after it (or before it, in 3.x names).
	parts := strings.Split(name[i+len("claude-"):], "-")
	fam := -1
	for j, p := range parts {
		for _, f := range claudeFamilies {
			if p == f {
				fam, c.family = j, f
			}
		}
		if fam >= 0 {
			break
		}
	}
	if fam < 0 {
		return c, false
	}
	var nums []int
	version := func(p string) bool {
		p, _, _ = strings.Cut(p, "@")
		n, err := strconv.Atoi(p)
		if err != nil || len(p) > 2 {
			return false
		}
		nums = append(nums, n)
		return true
	}
	if fam > 0 {
		for _, p := range parts[:fam] {
			if !version(p) {
				break
			}
		}
	} else {
		for _, p := range parts[1:] {
			if len(nums) == 2 || !version(p) {
				break
			}
		}
	}
	if len(nums) > 0 {
		c.major = nums[0]
	}
	if len(nums) > 1 {
		c.minor = nums[1]
	}
	return c, true
}

// native1M reports whether the model's window is 1M without a beta: the
// 5.x models, and Opus from 4.7.
func (c claudeModel) native1M() bool {
	return c.major >= 5 || c.family == "opus" && c.major == 4 && c.minor >= 7
}

// takes1MBeta reports whether the 1M beta opens the model's 1M window:
// the Sonnet 4.x, Opus 4.6, and the models that have 1M anyway.
func (c claudeModel) takes1MBeta() bool {
	return c.native1M() || c.family == "sonnet" && c.major == 4 || c.family == "opus" && c.major == 4 && c.minor == 6
}

// label names the model for a Window's Source: "Claude Opus 5.5".
func (c claudeModel) label() string {
	s := "Claude " + strings.ToUpper(c.family[:1]) + c.family[1:]
	if c.major > 0 {
		s += " " + strconv.Itoa(c.major)
		if c.minor > 0 {
			s += "." + strconv.Itoa(c.minor)
		}
	}
	return s
}

// Reported returns the window the agent states (Codex rollouts carry
// model_context_window; Claude Code's status line context_window_size) in
// place of w, or w when tokens is not positive.
func (w Window) Reported(tokens int64) Window {
	if tokens <= 0 {
		return w
	}
	return Window{Tokens: tokens, Known: true, FromAgent: true, Source: "stated by the agent"}
}
