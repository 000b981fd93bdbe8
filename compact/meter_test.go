package compact

import (
	"strings"
	"testing"
	"time"
)

func TestMeter(t *testing.T) {
	req := Request{
		SystemPrompt: strings.Repeat("p", 4800),
		Memory:       []string{strings.Repeat("m", 500), strings.Repeat("é", 300)},
		Tools:        []string{strings.Repeat("t", 1600)},
		Messages: []Message{
			{Role: RoleUser, Blocks: text(strings.Repeat("u", 8000))},
			{Role: RoleAssistant, Blocks: text(strings.Repeat("a", 12000))},
		},
	}
	m := NewMeter(req, 32_000, CharsEstimator{})
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"prompt", m.Prompt, Amount{Chars: 4800, Tokens: 1200}},
		{"memory counts characters, not bytes", m.Memory, Amount{Chars: 800, Tokens: 200}},
		{"tools", m.Tools, Amount{Chars: 1600, Tokens: 400}},
		{"attachments", m.Attachments, Amount{}},
		{"transcript", m.Transcript, Amount{Chars: 20000, Tokens: 5000}},
		{"chars", m.Chars(), int64(27200)},
		{"estimate", m.Estimate(), int64(6800)},
		{"used", m.Used(), int64(6800)},
		{"ratio", m.Ratio(), 6800.0 / 32000},
		{"summary", m.Summary(), "ctx 21% · prompt 1200 · memory 200 · tools 400 · attachments 0 · transcript 5000"},
		{"fits with reserve", m.ShouldCompact(25_200), false},
		{"does not fit with more reserve", m.ShouldCompact(25_201), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}

	exact := m.WithUsage(Usage{InputTokens: 10, CacheCreationInputTokens: 990, CacheReadInputTokens: 15_000, OutputTokens: 999})
	exactTests := []struct {
		name string
		got  any
		want any
	}{
		{"exact", exact.Exact, int64(16_000)},
		{"used prefers exact", exact.Used(), int64(16_000)},
		{"estimate unchanged", exact.Estimate(), int64(6800)},
		{"summary", exact.Summary(), "ctx 50% · prompt 1200 · memory 200 · tools 400 · attachments 0 · transcript 5000"},
		{"original untouched", m.Exact, int64(0)},
		{"no limit", Meter{Exact: 5}.Ratio(), 0.0},
	}
	for _, tt := range exactTests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
}

func TestMeterDefaultEstimator(t *testing.T) {
	req := Request{SystemPrompt: "You are a coding agent.", Messages: []Message{
		{Role: RoleUser, Blocks: text("Fix the failing test in store/session_test.go")},
		{Role: RoleAssistant, ResponseID: "r1", Blocks: text("Looking at it.")},
		{Role: RoleAssistant, ResponseID: "r1", Blocks: []Block{{Kind: BlockToolUse, ToolName: "Read", Input: `{"file_path":"store/session_test.go"}`}}},
	}}
	m := NewMeter(req, 200_000, nil)
	if m.Prompt.Tokens == 0 || m.Transcript.Tokens == 0 {
		t.Fatalf("meter = %+v, want tokens in prompt and transcript", m)
	}
	if got, want := m.Transcript.Tokens, EstimateMessages(req.Messages, DefaultEstimator()); got != want {
		t.Errorf("transcript tokens = %d, want %d (one response overhead for two lines)", got, want)
	}
}

func TestLastUsage(t *testing.T) {
	t0 := time.Date(2026, 2, 12, 14, 0, 0, 0, time.UTC)
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	u := func(n int64) *Usage { return &Usage{InputTokens: 1, CacheReadInputTokens: n} }
	tests := []struct {
		name   string
		msgs   []Message
		want   int64
		wantOK bool
	}{
		{"none", nil, 0, false},
		{"no usage", []Message{{Role: RoleUser}}, 0, false},
		{"last response", []Message{
			{Role: RoleAssistant, Usage: u(100)},
			{Role: RoleAssistant, Usage: u(200)},
			{Role: RoleUser},
		}, 201, true},
		{"sidechain passed over", []Message{
			{Role: RoleAssistant, Usage: u(100)},
			{Role: RoleAssistant, Usage: u(900), Sidechain: true},
		}, 101, true},
		{"only sidechain", []Message{
			{Role: RoleAssistant, Usage: u(100), Sidechain: true},
			{Role: RoleAssistant, Usage: u(300), Sidechain: true},
		}, 301, true},
		{"usage before the latest summary is stale", []Message{
			{Role: RoleAssistant, Usage: u(150_000), Time: at(1)},
			{Role: RoleUser, CompactSummary: true, Time: at(2)},
		}, 0, false},
		{"preserved zone after the summary is stale", []Message{
			{Role: RoleUser, CompactSummary: true, Time: at(5)},
			{Role: RoleAssistant, Usage: u(150_000), Time: at(1)},
		}, 0, false},
		{"a response after the summary is fresh", []Message{
			{Role: RoleUser, CompactSummary: true, Time: at(5)},
			{Role: RoleAssistant, Usage: u(150_000), Time: at(1)},
			{Role: RoleAssistant, Usage: u(30_000), Time: at(6)},
		}, 30_001, true},
		{"summary without a time: position decides", []Message{
			{Role: RoleAssistant, Usage: u(150_000)},
			{Role: RoleUser, CompactSummary: true},
			{Role: RoleAssistant, Usage: u(30_000)},
		}, 30_001, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := LastUsage(tt.msgs)
			if ok != tt.wantOK || got.ContextTokens() != tt.want {
				t.Errorf("LastUsage = %d, %v; want %d, %v", got.ContextTokens(), ok, tt.want, tt.wantOK)
			}
		})
	}
}

// TestLastUsageCorpus reads the exact context of real sessions: the
// manual compaction of spotter-ae4a77f8 is followed by new responses,
// whose usage is the current context.
func TestLastUsageCorpus(t *testing.T) {
	msgs := readClaude(t, corpusFile(t, "spotter-ae4a77f8"))
	u, ok := LastUsage(msgs)
	if !ok {
		t.Fatal("no usage found")
	}
	var want Usage
	for _, m := range msgs {
		if m.Role == RoleAssistant && m.Usage != nil && !m.Sidechain {
			want = *m.Usage
		}
	}
	if u != want {
		t.Errorf("LastUsage = %+v, want %+v", u, want)
	}
	if lim := ContextLimit(msgs[len(msgs)-1].Model, nil); u.ContextTokens() <= 0 || u.ContextTokens() > lim.Tokens {
		t.Errorf("context %d outside (0, %d]", u.ContextTokens(), lim.Tokens)
	}
	t.Logf("spotter-ae4a77f8: context in use %d tokens (%s)", u.ContextTokens(),
		NewMeter(Request{}, ContextLimit(msgs[len(msgs)-1].Model, nil).Tokens, nil).WithUsage(u).Summary())
}
