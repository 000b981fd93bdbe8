package compact

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
)

var update = flag.Bool("update", false, "rewrite golden files in ../testdata/compact")

// sampleConversation is a short coding session with every kind of block.
func sampleConversation() []Message {
	return []Message{
		{Role: RoleUser, Blocks: text("Make `ledger search` accept --since. Keep the FTS query quoted.")},
		{Role: RoleUser, Meta: true, Blocks: text("<system-reminder>CLAUDE.md: run go vet before committing</system-reminder>")},
		{Role: RoleAssistant, Blocks: []Block{
			{Kind: BlockThinking, Text: "private reasoning"},
			{Kind: BlockText, Text: "I'll look at the command first."},
			{Kind: BlockToolUse, ToolID: "t1", ToolName: "Read", Input: `{"file_path":"cmd/ledger/search.go"}`},
		}},
		{Role: RoleUser, Blocks: []Block{{Kind: BlockToolResult, ToolID: "t1", Text: strings.Repeat("package main // search.go\n", 200)}}},
		{Role: RoleAssistant, Blocks: []Block{{Kind: BlockToolUse, ToolID: "t2", ToolName: "Bash", Input: `{"command":"go test ./cmd/..."}`}}},
		{Role: RoleUser, Blocks: []Block{{Kind: BlockToolResult, ToolID: "t2", IsError: true, Text: "--- FAIL: TestSearchSince\n    search_test.go:41: got 0 hits, want 2"}}},
		{Role: RoleUser, Blocks: []Block{{Kind: BlockImage}}},
	}
}

func TestRenderTranscript(t *testing.T) {
	got := RenderTranscript(sampleConversation(), 300)
	golden := filepath.Join("..", "testdata", "compact", "render_transcript.golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("RenderTranscript differs from %s:\n%s", golden, got)
	}
	if strings.Contains(got, "private reasoning") {
		t.Error("thinking was rendered")
	}
}

// messagesRequest is the part of a Messages API request the tests check.
type messagesRequest struct {
	Model     string `json:"model"`
	MaxTokens int64  `json:"max_tokens"`
	System    []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"system"`
	Messages []struct {
		Role    string `json:"role"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"messages"`
}

// fakeAnthropic is a local server that speaks the Messages API: it records
// each request and answers with status and body.
func fakeAnthropic(t *testing.T, status int, body string) (*httptest.Server, *[]*http.Request, *[]messagesRequest) {
	t.Helper()
	var reqs []*http.Request
	var bodies []messagesRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var mr messagesRequest
		if err := json.Unmarshal(raw, &mr); err != nil {
			t.Errorf("request body is not JSON: %v\n%s", err, raw)
		}
		reqs = append(reqs, r)
		bodies = append(bodies, mr)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("request-id", "req_test")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &reqs, &bodies
}

const cannedResponse = `{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","model":"claude-haiku-4-5-20251001",
"content":[{"type":"text","text":"## Task\nAdd --since to ledger search."},{"type":"text","text":"\n## Pending\nFix TestSearchSince."}],
"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":812,"output_tokens":40}}`

func TestAnthropicSummarizer(t *testing.T) {
	all := []string{
		"Keep the FTS query quoted.",
		`[assistant calls tool Read]` + "\n" + `{"file_path":"cmd/ledger/search.go"}`,
		"[tool error]\n--- FAIL: TestSearchSince",
		"characters pruned",
	}
	tests := []struct {
		name         string
		opts         []AnthropicOption
		instructions string
		wantModel    string
		wantMax      int64
		wantInPrompt []string
		maxChars     int
	}{
		{"defaults", nil, "", DefaultSummaryModel, DefaultSummaryMaxTokens, all, 12_000},
		{"custom instructions", nil, "Focus on the failing test.", DefaultSummaryModel, DefaultSummaryMaxTokens, all, 12_000},
		{"own model and length", []AnthropicOption{WithModel("claude-sonnet-4-5"), WithMaxTokens(2000)}, "", "claude-sonnet-4-5", 2000, all, 12_000},
		{"long conversation: beginning and end kept", []AnthropicOption{WithMaxInputChars(1000)}, "", DefaultSummaryModel, DefaultSummaryMaxTokens,
			[]string{"Keep the FTS query quoted.", "[tool error]\n--- FAIL: TestSearchSince", "characters pruned"}, 1300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, reqs, bodies := fakeAnthropic(t, http.StatusOK, cannedResponse)
			s, err := NewAnthropicSummarizer("sk-ant-test", append([]AnthropicOption{WithBaseURL(srv.URL), WithHTTPClient(srv.Client())}, tt.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Summarize(context.Background(), sampleConversation(), tt.instructions)
			if err != nil {
				t.Fatalf("Summarize: %v", err)
			}
			if want := "## Task\nAdd --since to ledger search.\n## Pending\nFix TestSearchSince."; got != want {
				t.Errorf("summary = %q, want %q", got, want)
			}
			if len(*reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(*reqs))
			}
			r, body := (*reqs)[0], (*bodies)[0]
			if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
				t.Errorf("request %s %s, want POST /v1/messages", r.Method, r.URL.Path)
			}
			if got := r.Header.Get("X-Api-Key"); got != "sk-ant-test" {
				t.Errorf("x-api-key = %q", got)
			}
			if r.Header.Get("Anthropic-Version") == "" {
				t.Error("no anthropic-version header")
			}
			if body.Model != tt.wantModel || body.MaxTokens != tt.wantMax {
				t.Errorf("model, max_tokens = %q, %d; want %q, %d", body.Model, body.MaxTokens, tt.wantModel, tt.wantMax)
			}
			if len(body.System) != 1 {
				t.Fatalf("system = %+v, want one text block", body.System)
			}
			system := body.System[0].Text
			for _, item := range []string{"Decisions", "File paths", "Pending tasks", "Constraints", "Tool outputs that are still relevant"} {
				if !strings.Contains(system, item) {
					t.Errorf("system prompt lacks %q", item)
				}
			}
			if tt.instructions != "" && !strings.Contains(system, tt.instructions) {
				t.Errorf("system prompt lacks the custom instructions %q", tt.instructions)
			}
			if len(body.Messages) != 1 || body.Messages[0].Role != "user" || len(body.Messages[0].Content) != 1 {
				t.Fatalf("messages = %+v, want one user message with one block", body.Messages)
			}
			prompt := body.Messages[0].Content[0].Text
			for _, want := range tt.wantInPrompt {
				if !strings.Contains(prompt, want) {
					t.Errorf("prompt lacks %q", want)
				}
			}
			if strings.Contains(prompt, "private reasoning") {
				t.Error("prompt carries thinking")
			}
			if n := len([]rune(prompt)); n > tt.maxChars {
				t.Errorf("prompt is %d characters, want at most %d", n, tt.maxChars)
			}
		})
	}
}

func TestAnthropicSummarizerErrors(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		body    string
		wantErr string
	}{
		{"invalid request", http.StatusBadRequest,
			`{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 999999 > 64000"}}`, "max_tokens: 999999 > 64000"},
		{"overloaded", 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "Overloaded"},
		{"bad key", http.StatusUnauthorized,
			`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, "invalid x-api-key"},
		{"no text in the response", http.StatusOK,
			`{"id":"msg_1","type":"message","role":"assistant","model":"claude-haiku-4-5","content":[],"stop_reason":"max_tokens","usage":{"input_tokens":1,"output_tokens":0}}`, "holds no text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, reqs, _ := fakeAnthropic(t, tt.status, tt.body)
			s, err := NewAnthropicSummarizer("sk-ant-test", WithBaseURL(srv.URL), WithMaxRetries(0))
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Summarize(context.Background(), sampleConversation(), "")
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Summarize = %q, %v; want an error containing %q", got, err, tt.wantErr)
			}
			if len(*reqs) != 1 {
				t.Errorf("%d requests, want 1 (no retries)", len(*reqs))
			}
		})
	}
}

func TestNewAnthropicSummarizerNeedsKey(t *testing.T) {
	for _, key := range []string{"", "  "} {
		if _, err := NewAnthropicSummarizer(key); err == nil {
			t.Errorf("NewAnthropicSummarizer(%q): no error", key)
		}
	}
}

// TestCompactorWithFailingAnthropic falls back to dropping the oldest
// messages when the API fails.
func TestCompactorWithFailingAnthropic(t *testing.T) {
	srv, _, _ := fakeAnthropic(t, http.StatusInternalServerError, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`)
	s, err := NewAnthropicSummarizer("sk-ant-test", WithBaseURL(srv.URL), WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	var warned error
	c := &Compactor{Summarizer: s, Estimator: perMessage{}, ContextLimit: 1000,
		Warn: func(_ context.Context, err error) { warned = err }}
	out, b, err := c.Compact(context.Background(), conversation("s1", 10), TriggerAuto)
	if err != nil {
		t.Fatal(err)
	}
	var apiErr *anthropic.Error
	if !errors.As(warned, &apiErr) || apiErr.StatusCode != http.StatusInternalServerError {
		t.Errorf("warning = %v, want the API's 500 error", warned)
	}
	if len(out) != 5 || !strings.Contains(b.Summary, "dropped") {
		t.Errorf("got %d messages, summary %q; want summary + 4 and a note of the drop", len(out), b.Summary)
	}
}
