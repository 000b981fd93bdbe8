package handoff

import (
	"context"
	"strings"

	"github.com/agentledger/ledger/compact"
)

// Summarizer is the extractive compact.Summarizer: it summarizes messages
// as a handoff document's Markdown, with no model and no network, so that
// the compactor works offline and its output is reproducible.
type Summarizer struct {
	// Options fills in what the messages do not say (project, branch,
	// trigger, context line).
	Options ExtractOptions
	// Budget is the summary's size in tokens (<= 0: DefaultBudget).
	Budget int
	// Count counts tokens (nil: ApproxTokens).
	Count func(string) int
}

var _ compact.Summarizer = Summarizer{}

// Summarize extracts a handoff from msgs and renders it within the budget.
// Non-empty instructions (from a PreCompact hook or the user) follow as an
// "## Instructions" note; the note's size comes out of the budget, down to
// MinBudget for the document itself.
func (s Summarizer) Summarize(ctx context.Context, msgs []compact.Message, instructions string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	count := s.Count
	if count == nil {
		count = ApproxTokens
	}
	budget := s.Budget
	if budget <= 0 {
		budget = DefaultBudget
	}
	var note string
	if instructions = clean(instructions); instructions != "" {
		var b strings.Builder
		b.WriteString("\n## Instructions\n")
		writeText(&b, instructions)
		note = b.String()
		budget = max(budget-count(note), MinBudget)
	}
	doc := Extract(msgs, s.Options)
	return Render(doc, budget, count) + note, nil
}
