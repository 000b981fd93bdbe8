package compact

import "context"

// Summarizer condenses the older zone of a conversation into a summary the
// agent can carry on from. Two implementations exist: the deterministic
// extractive one in package handoff, and an LLM one over Anthropic's
// Messages API in package compact/anthropic.
type Summarizer interface {
	// Summarize returns the summary text of msgs. instructions are custom
	// instructions added by a PreCompact hook or the user; they may be empty.
	Summarize(ctx context.Context, msgs []Message, instructions string) (string, error)
}
