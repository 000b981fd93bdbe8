package compact

import (
	"strconv"
	"strings"
)

// Context windows, in tokens.
const (
	// DefaultContextLimit is the window of the Claude 4.x models, and the
	// one assumed for a model this package does not know.
	DefaultContextLimit = 200_000
	// Context1M is the window of Claude Sonnet 4.x with the Context1MBeta.
	Context1M = 1_000_000
	// Context1MBeta is the beta that opens Sonnet's 1M-token window (the
	// anthropic-beta header value).
	Context1MBeta = "context-1m-2025-08-07"
	// CodexGPT5Window is what Codex CLI reports as model_context_window for
	// its GPT-5 models (272,000 less the 5% Codex keeps in reserve; seen in
	// the corpus' gpt-5.3-codex rollouts). Used when a rollout does not say.
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
	// Source says where Tokens comes from, for a human reader.
	Source string `json:"source"`
}

// ContextLimit returns the context window of model. betas are the
// anthropic-beta values the requests carry (each may be a comma-separated
// list). Model names are matched loosely: API ids with or without a date
// ("claude-sonnet-4-5-20250929"), Claude Code aliases ("sonnet", "opus[1m]"),
// Bedrock and Vertex ids ("us.anthropic.claude-opus-4-1-20250805-v1:0",
// "claude-sonnet-4@20250514"). A "[1m]" suffix, as Claude Code writes it,
// counts as the 1M beta. An unknown model gets DefaultContextLimit with
// Known false.
//
// A window the transcript states (Codex's model_context_window) beats any
// of this: see Window.Reported.
func ContextLimit(model string, betas []string) Window {
	name := strings.ToLower(strings.TrimSpace(model))
	oneM := strings.HasSuffix(name, "[1m]")
	name = strings.TrimSuffix(name, "[1m]")
	for _, list := range betas {
		for _, b := range strings.Split(list, ",") {
			if strings.TrimSpace(b) == Context1MBeta {
				oneM = true
			}
		}
	}
	family := claudeFamily(name)
	switch {
	case family == "sonnet" && oneM:
		return Window{Tokens: Context1M, Known: true, Source: "Claude Sonnet with " + Context1MBeta}
	case family != "":
		src := "Claude " + strings.ToUpper(family[:1]) + family[1:]
		if oneM {
			src += " (the 1M beta is Sonnet's only)"
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

// claudeFamily returns "sonnet", "opus" or "haiku" for a Claude model name
// (or a bare Claude Code alias), else "".
func claudeFamily(name string) string {
	for _, f := range []string{"sonnet", "opus", "haiku"} {
		if name == f || strings.Contains(name, "claude") && strings.Contains(name, f) {
			return f
		}
	}
	return ""
}

// Reported returns the window a transcript states (Codex rollouts carry
// model_context_window) in place of w, or w when tokens is not positive.
func (w Window) Reported(tokens int64) Window {
	if tokens <= 0 {
		return w
	}
	return Window{Tokens: tokens, Known: true, Source: "reported by the transcript"}
}
