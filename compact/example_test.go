package compact_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentledger/ledger/compact"
)

// The compactor inside an agent loop: keep a running count of the context,
// prefer the usage the API reports, and compact when the budget says so.
func Example() {
	ctx := context.Background()
	// This agent keeps its requests small: it compacts at 40,000 tokens
	// (or the model's window, were that smaller).
	limit := min(compact.ContextLimit("claude-sonnet-4-5", nil).Tokens, 40_000)
	est := compact.DefaultEstimator()

	// A real agent uses anthropic.New(apiKey) (package compact/anthropic) or handoff's
	// extractive summarizer; any Summarizer will do.
	summarize := compact.SummarizerFunc(func(ctx context.Context, older []compact.Message, instructions string) (string, error) {
		return fmt.Sprintf("Earlier: %d messages of work on the parser. %s", len(older), instructions), nil
	})
	c := &compact.Compactor{
		Summarizer:   summarize,
		ContextLimit: limit,
		Overhead:     3000, // system prompt and tool schemas
		Hooks: compact.Hooks{
			PreCompact: func(ctx context.Context, trigger string) (string, error) {
				return "Keep the failing test names.", nil
			},
			PostCompact: func(ctx context.Context, b compact.Boundary) {
				fmt.Printf("compacted (%s): %d -> %d tokens\n", b.Trigger, b.PreTokens/100*100, b.PostTokens/100*100)
			},
		},
	}

	var msgs []compact.Message
	used := c.Overhead
	for turn := range 60 {
		// The user (or a tool result) speaks; the model answers, and its
		// response reports the context the request used. Messages carry
		// their time: LastUsage tells by it that a usage recorded before a
		// compaction no longer holds.
		result := compact.Message{Role: compact.RoleUser, Time: time.Now(), Blocks: []compact.Block{{
			Kind: compact.BlockToolResult, ToolID: fmt.Sprint("call", turn-1),
			Text: strings.Repeat(fmt.Sprintf("parser.go:%d: token %d parsed\n", turn, turn), 60)}}}
		msgs = append(msgs, result)
		used += int64(est.MessageTokens(result))
		reply := compact.Message{Role: compact.RoleAssistant, Time: time.Now(), Usage: &compact.Usage{InputTokens: used},
			Blocks: []compact.Block{{Kind: compact.BlockToolUse, ToolID: fmt.Sprint("call", turn), ToolName: "Bash",
				Input: `{"command":"go test ./parser/..."}`}}}
		msgs = append(msgs, reply)
		if u, ok := compact.LastUsage(msgs); ok {
			used = u.ContextTokens() + int64(est.MessageTokens(reply))
		}

		budget := compact.Budget{ContextLimit: limit, MaxOutputTokens: 4096, MessageTokens: used}
		if !budget.ShouldCompact() {
			continue
		}
		out, b, err := c.Compact(ctx, msgs, compact.TriggerAuto)
		if err != nil {
			fmt.Println("compact:", err)
			return
		}
		msgs, used = out, b.PostTokens
	}
	meter := compact.NewMeter(compact.Request{SystemPrompt: "You are a careful coding agent.", Messages: msgs}, limit, est)
	fmt.Println(meter.Summary())
	// Output:
	// compacted (auto): 29100 -> 18500 tokens
	// compacted (auto): 29300 -> 18500 tokens
	// ctx 62% · prompt 9 · memory 0 · tools 0 · attachments 0 · transcript 24836
}
