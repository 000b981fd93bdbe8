package compact

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// Anthropic summarizer defaults.
const (
	// DefaultSummaryModel is the model AnthropicSummarizer uses: a cheap,
	// fast one, since a summary is mostly extraction.
	DefaultSummaryModel = "claude-haiku-4-5"
	// DefaultSummaryMaxTokens bounds the summary's length.
	DefaultSummaryMaxTokens = 8192
	// SummaryToolResultChars is how much of each tool output the
	// summarizer is shown (beginning and end).
	SummaryToolResultChars = 2000
	// DefaultSummaryInputChars bounds the conversation shown to the
	// summarizer (about 120,000 tokens, well inside Haiku's window): past
	// it, the beginning (where the task is stated) and the most recent
	// part are kept.
	DefaultSummaryInputChars = 400_000
)

// PreservationPrompt is the system prompt of AnthropicSummarizer: what a
// summary must keep for the agent to carry on.
const PreservationPrompt = `You compact the conversation of an AI coding agent so that it can carry on after its older messages are removed from its context. Write a summary that replaces them. The agent will see only your summary and the most recent messages.

Preserve, precisely and without loss:
1. Decisions: what was decided and why, including approaches tried and rejected.
2. File paths: every file read, created or modified, with what changed and why.
3. Pending tasks: what the user asked for that is not done yet, and the next step.
4. Constraints: the user's requirements, preferences and corrections; rules of the project.
5. Tool outputs that are still relevant: errors not yet fixed, test results, command output the work depends on (quote the exact lines that matter).

Also keep the user's own words where they state intent. Leave out pleasantries, superseded plans and output that no longer matters. Use short sections with bullet points; be concrete (names, paths, commands, numbers) and do not invent anything.`

// AnthropicSummarizer is a Summarizer over Anthropic's Messages API. It is
// used only when a caller builds one with an API key.
type AnthropicSummarizer struct {
	client        anthropic.Client
	model         string
	maxTokens     int64
	maxInputChars int
}

type anthropicConfig struct {
	model         string
	baseURL       string
	maxTokens     int64
	maxInputChars int
	maxRetries    int
	httpClient    *http.Client
}

// AnthropicOption configures NewAnthropicSummarizer.
type AnthropicOption func(*anthropicConfig)

// WithModel sets the model (default DefaultSummaryModel).
func WithModel(model string) AnthropicOption {
	return func(c *anthropicConfig) { c.model = model }
}

// WithBaseURL sets the API's base URL (default Anthropic's), for a proxy or
// a test server.
func WithBaseURL(url string) AnthropicOption {
	return func(c *anthropicConfig) { c.baseURL = url }
}

// WithMaxTokens bounds the summary's length (default
// DefaultSummaryMaxTokens).
func WithMaxTokens(n int64) AnthropicOption {
	return func(c *anthropicConfig) { c.maxTokens = n }
}

// WithMaxInputChars bounds the conversation shown to the model (default
// DefaultSummaryInputChars).
func WithMaxInputChars(n int) AnthropicOption {
	return func(c *anthropicConfig) { c.maxInputChars = n }
}

// WithMaxRetries sets how many times a failed request is retried (default
// 2, with backoff, for rate limits, overload and server errors).
func WithMaxRetries(n int) AnthropicOption {
	return func(c *anthropicConfig) { c.maxRetries = n }
}

// WithHTTPClient sets the HTTP client (default: one with no timeout of its
// own; the context passed to Summarize bounds each call).
func WithHTTPClient(hc *http.Client) AnthropicOption {
	return func(c *anthropicConfig) { c.httpClient = hc }
}

// NewAnthropicSummarizer returns a summarizer that calls the Messages API
// with apiKey. It reads no environment variables or configuration files:
// everything it uses is passed in.
func NewAnthropicSummarizer(apiKey string, opts ...AnthropicOption) (*AnthropicSummarizer, error) {
	if strings.TrimSpace(apiKey) == "" {
		return nil, errors.New("anthropic summarizer: no API key")
	}
	cfg := anthropicConfig{model: DefaultSummaryModel, maxTokens: DefaultSummaryMaxTokens, maxInputChars: DefaultSummaryInputChars,
		maxRetries: 2, httpClient: &http.Client{}}
	for _, o := range opts {
		o(&cfg)
	}
	ropts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(apiKey),
		option.WithHTTPClient(cfg.httpClient),
		option.WithMaxRetries(cfg.maxRetries),
	}
	if cfg.baseURL != "" {
		ropts = append(ropts, option.WithBaseURL(cfg.baseURL))
	}
	return &AnthropicSummarizer{client: anthropic.NewClient(ropts...), model: cfg.model, maxTokens: cfg.maxTokens,
		maxInputChars: cfg.maxInputChars}, nil
}

// Summarize asks the model for a summary of msgs, shown to it as a
// transcript (tool outputs shortened to SummaryToolResultChars, the whole to
// the summarizer's input bound), under PreservationPrompt plus
// instructions.
func (s *AnthropicSummarizer) Summarize(ctx context.Context, msgs []Message, instructions string) (string, error) {
	system := PreservationPrompt
	if strings.TrimSpace(instructions) != "" {
		system += "\n\nAdditional instructions for this summary:\n" + instructions
	}
	conversation := RenderTranscript(msgs, SummaryToolResultChars)
	if s.maxInputChars > 0 {
		conversation = clip(conversation, s.maxInputChars/5, s.maxInputChars*4/5)
	}
	prompt := "Here is the conversation to summarize:\n\n<conversation>\n" + conversation +
		"</conversation>\n\nWrite the summary now."
	resp, err := s.client.Messages.New(ctx, anthropic.MessageNewParams{
		Model:     anthropic.Model(s.model),
		MaxTokens: s.maxTokens,
		System:    []anthropic.TextBlockParam{{Text: system}},
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(prompt))},
	})
	if err != nil {
		return "", fmt.Errorf("anthropic summarize: %w", err)
	}
	var b strings.Builder
	for _, block := range resp.Content {
		if block.Type == "text" {
			b.WriteString(block.Text)
		}
	}
	summary := strings.TrimSpace(b.String())
	if summary == "" {
		return "", fmt.Errorf("anthropic summarize: the response (stop reason %q) holds no text", resp.StopReason)
	}
	return summary, nil
}

// RenderTranscript writes msgs as a plain-text transcript for a model to
// read: one paragraph per block, tagged with who wrote it; tool calls with
// their input, tool outputs shortened to about toolResultChars characters
// (0: not shortened). Thinking is left out.
func RenderTranscript(msgs []Message, toolResultChars int) string {
	var b strings.Builder
	for _, m := range msgs {
		who := string(m.Role)
		if m.Meta {
			who += " (injected)"
		}
		if m.CompactSummary {
			who = "summary of an earlier compaction"
		}
		for _, blk := range m.Blocks {
			switch blk.Kind {
			case BlockText:
				if strings.TrimSpace(blk.Text) == "" {
					continue
				}
				fmt.Fprintf(&b, "[%s]\n%s\n\n", who, blk.Text)
			case BlockToolUse:
				fmt.Fprintf(&b, "[%s calls tool %s]\n%s\n\n", who, blk.ToolName, blk.Input)
			case BlockToolResult:
				text := blk.Text
				if toolResultChars > 0 {
					text = shorten(text, toolResultChars)
				}
				tag := "tool result"
				if blk.IsError {
					tag = "tool error"
				}
				fmt.Fprintf(&b, "[%s]\n%s\n\n", tag, text)
			case BlockImage:
				fmt.Fprintf(&b, "[%s attaches an image]\n\n", who)
			}
		}
	}
	return b.String()
}
