package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/agentledger/ledger/compact"
)

// Summarizer defaults.
const (
	// DefaultModel is the model Summarizer uses: a cheap,
	// fast one, since a summary is mostly extraction.
	DefaultModel = "claude-haiku-4-5"
	// DefaultMaxTokens bounds the summary's length.
	DefaultMaxTokens = 8192
	// ToolResultChars is how much of each tool output the
	// summarizer is shown (beginning and end).
	ToolResultChars = 2000
	// DefaultInputChars bounds the conversation shown to the
	// summarizer (about 120,000 tokens, well inside Haiku's window): past
	// it, the beginning (where the task is stated) and the most recent
	// part are kept.
	DefaultInputChars = 400_000
)

// PreservationPrompt is the system prompt of Summarizer: what a
// summary must keep for the agent to carry on.
const PreservationPrompt = `You compact the conversation of an AI coding agent so that it can carry on after its older messages are removed from its context. Write a summary that replaces them. The agent will see only your summary and the most recent messages.

Preserve, precisely and without loss:
1. Decisions: what was decided and why, including approaches tried and rejected.
2. File paths: every file read, created or modified, with what changed and why.
3. Pending tasks: what the user asked for that is not done yet, and the next step.
4. Constraints: the user's requirements, preferences and corrections; rules of the project.
5. Tool outputs that are still relevant: errors not yet fixed, test results, command output the work depends on (quote the exact lines that matter).

Also keep the user's own words where they state intent. Leave out pleasantries, superseded plans and output that no longer matters. Use short sections with bullet points; be concrete (names, paths, commands, numbers) and do not invent anything.`

// Summarizer is a compact.Summarizer over Anthropic's Messages API. It is
// used only when a caller builds one with an API key.
type Summarizer struct {
	client        sdk.Client
	model         string
	maxTokens     int64
	maxInputChars int
}

type config struct {
	model         string
	baseURL       string
	maxTokens     int64
	maxInputChars int
	maxRetries    int
	httpClient    *http.Client
}

// Option configures New.
type Option func(*config)

// WithModel sets the model (default DefaultModel).
func WithModel(model string) Option {
	return func(c *config) { c.model = model }
}

// WithBaseURL sets the API's base URL (default Anthropic's), for a proxy or
// a test server.
func WithBaseURL(url string) Option {
	return func(c *config) { c.baseURL = url }
}

// WithMaxTokens bounds the summary's length (default
// DefaultMaxTokens).
func WithMaxTokens(n int64) Option {
	return func(c *config) { c.maxTokens = n }
}

// WithMaxInputChars bounds the conversation shown to the model (default
// DefaultInputChars).
func WithMaxInputChars(n int) Option {
	return func(c *config) { c.maxInputChars = n }
}

// WithMaxRetries sets how many times a failed request is retried (default
// 2, with backoff, for rate limits, overload and server errors).
func WithMaxRetries(n int) Option {
	return func(c *config) { c.maxRetries = n }
}

// WithHTTPClient sets the HTTP client (default: one with no timeout of its
// own; the context passed to Summarize bounds each call).
func WithHTTPClient(hc *http.Client) Option {
	return func(c *config) { c.httpClient = hc }
}

// New returns a summarizer that calls the Messages API
// with apiKey. It reads no environment variables or configuration files:
// everything it uses is passed in.
func New(apiKey string, opts ...Option) (*Summarizer, error) {
	if strings.TrimSpace(apiKey) == "" {
		return nil, errors.New("anthropic summarizer: no API key")
	}
	cfg := config{model: DefaultModel, maxTokens: DefaultMaxTokens, maxInputChars: DefaultInputChars,
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
	return &Summarizer{client: sdk.NewClient(ropts...), model: cfg.model, maxTokens: cfg.maxTokens,
		maxInputChars: cfg.maxInputChars}, nil
}

// Summarize asks the model for a summary of msgs, shown to it as a
// transcript (tool outputs shortened to ToolResultChars, the whole to
// the summarizer's input bound), under PreservationPrompt plus
// instructions.
func (s *Summarizer) Summarize(ctx context.Context, msgs []compact.Message, instructions string) (string, error) {
	system := PreservationPrompt
	if strings.TrimSpace(instructions) != "" {
		system += "\n\nAdditional instructions for this summary:\n" + instructions
	}
	conversation := compact.RenderTranscript(msgs, ToolResultChars)
	if s.maxInputChars > 0 {
		conversation = compact.Clip(conversation, s.maxInputChars/5, s.maxInputChars*4/5)
	}
	prompt := "Here is the conversation to summarize:\n\n<conversation>\n" + conversation +
		"</conversation>\n\nWrite the summary now."
	resp, err := s.client.Messages.New(ctx, sdk.MessageNewParams{
		Model:     sdk.Model(s.model),
		MaxTokens: s.maxTokens,
		System:    []sdk.TextBlockParam{{Text: system}},
		Messages:  []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock(prompt))},
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
