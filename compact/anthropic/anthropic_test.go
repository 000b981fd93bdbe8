package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/agentledger/ledger/compact"
)

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

// sampleConversation is a short coding session with every kind of block.
func sampleConversation() []compact.Message {
	return []compact.Message{
		{Role: compact.RoleUser, Blocks: textBlocks("Make `ledger search` accept --since. Keep the FTS query quoted.")},
		{Role: compact.RoleUser, Meta: true, Blocks: textBlocks("<system-reminder>CLAUDE.md: run go vet before committing</system-reminder>")},
		{Role: compact.RoleAssistant, Blocks: []compact.Block{
			{Kind: compact.BlockThinking, Text: "private reasoning"},
			{Kind: compact.BlockText, Text: "I'll look at the command first."},
			{Kind: compact.BlockToolUse, ToolID: "t1", ToolName: "Read", Input: `{"file_path":"cmd/ledger/search.go"}`},
		}},
		{Role: compact.RoleUser, Blocks: []compact.Block{{Kind: compact.BlockToolResult, ToolID: "t1", Text: strings.Repeat("package main // search.go\n", 200)}}},
		{Role: compact.RoleAssistant, Blocks: []compact.Block{{Kind: compact.BlockToolUse, ToolID: "t2", ToolName: "Bash", Input: `{"command":"go test ./cmd/..."}`}}},
		{Role: compact.RoleUser, Blocks: []compact.Block{{Kind: compact.BlockToolResult, ToolID: "t2", IsError: true, Text: "--- FAIL: TestSearchSince\n    search_test.go:41: got 0 hits, want 2"}}},
		{Role: compact.RoleUser, Blocks: []compact.Block{{Kind: compact.BlockImage}}},
	}
}

func textBlocks(s string) []compact.Block { return []compact.Block{{Kind: compact.BlockText, Text: s}} }

// byteCount is a test estimator: a message costs its text's length in
// bytes.
type byteCount struct{}

func (byteCount) Tokens(s string) int { return len(s) }
func (byteCount) MessageTokens(m compact.Message) int {
	n := 0
	for _, b := range m.Blocks {
		n += len(b.Text)
	}
	return n
}

// conversation returns n messages of 100 tokens each (by byteCount).
func conversation(session string, n int) []compact.Message {
	msgs := make([]compact.Message, n)
	for i := range msgs {
		role := compact.RoleUser
		if i%2 == 1 {
			role = compact.RoleAssistant
		}
		msgs[i] = compact.Message{UUID: fmt.Sprintf("m%02d", i), SessionID: session, Role: role,
			Time: time.Date(2026, 2, 12, 14, i, 0, 0, time.UTC), Blocks: textBlocks(strings.Repeat("x", 100))}
	}
	return msgs
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

func TestSummarizer(t *testing.T) {
	all := []string{
		"Keep the FTS query quoted.",
		`[assistant calls tool Read]` + "\n" + `{"file_path":"cmd/ledger/search.go"}`,
		"[tool error]\n--- FAIL: TestSearchSince",
		"characters pruned",
	}
	tests := []struct {
		name         string
		opts         []Option
		instructions string
		wantModel    string
		wantMax      int64
		wantInPrompt []string
		maxChars     int
	}{
		{"defaults", nil, "", DefaultModel, DefaultMaxTokens, all, 12_000},
		{"custom instructions", nil, "Focus on the failing test.", DefaultModel, DefaultMaxTokens, all, 12_000},
		{"own model and length", []Option{WithModel("claude-sonnet-4-5"), WithMaxTokens(2000)}, "", "claude-sonnet-4-5", 2000, all, 12_000},
		{"long conversation: beginning and end kept", []Option{WithMaxInputChars(1000)}, "", DefaultModel, DefaultMaxTokens,
			[]string{"Keep the FTS query quoted.", "[tool error]\n--- FAIL: TestSearchSince", "characters pruned"}, 1300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, reqs, bodies := fakeAnthropic(t, http.StatusOK, cannedResponse)
			s, err := New("sk-ant-test", append([]Option{WithBaseURL(srv.URL), WithHTTPClient(srv.Client())}, tt.opts...)...)
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

func TestSummarizerErrors(t *testing.T) {
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
			s, err := New("sk-ant-test", WithBaseURL(srv.URL), WithMaxRetries(0))
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

func TestNewNeedsKey(t *testing.T) {
	for _, key := range []string{"", "  "} {
		if _, err := New(key); err == nil {
			t.Errorf("New(%q): no error", key)
		}
	}
}

// TestCompactorFallsBackWhenTheAPIFails falls back to dropping the oldest
// messages when the API fails.
func TestCompactorFallsBackWhenTheAPIFails(t *testing.T) {
	srv, _, _ := fakeAnthropic(t, http.StatusInternalServerError, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`)
	s, err := New("sk-ant-test", WithBaseURL(srv.URL), WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	var warned error
	c := &compact.Compactor{Summarizer: s, Estimator: byteCount{}, ContextLimit: 1000,
		Warn: func(_ context.Context, err error) { warned = err }}
	out, b, err := c.Compact(context.Background(), conversation("s1", 10), compact.TriggerAuto)
	if err != nil {
		t.Fatal(err)
	}
	var apiErr *sdk.Error
	if !errors.As(warned, &apiErr) || apiErr.StatusCode != http.StatusInternalServerError {
		t.Errorf("warning = %v, want the API's 500 error", warned)
	}
	if len(out) != 5 || !strings.Contains(b.Summary, "dropped") {
		t.Errorf("got %d messages, summary %q; want summary + 4 and a note of the drop", len(out), b.Summary)
	}
}
