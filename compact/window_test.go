package compact

import "testing"

// TestContextLimit: the table (Claude Code 2.1.328's own model table for
// the Claude models) is a fallback and never FromAgent; a "[1m]" name or
// the 1M beta is the agent stating its window.
func TestContextLimit(t *testing.T) {
	tests := []struct {
		name      string
		model     string
		betas     []string
		want      int64
		wantKnown bool
		fromAgent bool
	}{
		{"sonnet 4.5", "claude-sonnet-4-5-20250929", nil, 200_000, true, false},
		{"sonnet 4 with the 1M beta", "claude-sonnet-4-20250514", []string{Context1MBeta}, 1_000_000, true, true},
		{"1M beta among others", "claude-sonnet-4-5", []string{"interleaved-thinking-2025-05-14, context-1m-2025-08-07"}, 1_000_000, true, true},
		{"Claude Code [1m] suffix", "claude-sonnet-4-5[1m]", nil, 1_000_000, true, true},
		{"alias", "sonnet", nil, 200_000, false, false},
		{"alias with [1m]", "sonnet[1m]", nil, 1_000_000, true, true},
		{"opus 4.6 takes the 1M beta", "claude-opus-4-6", []string{Context1MBeta}, 1_000_000, true, true},
		{"opus 4.5 does not", "claude-opus-4-5-20251101", []string{Context1MBeta}, 200_000, true, false},
		{"haiku ignores the 1M beta", "claude-haiku-4-5-20251001", []string{Context1MBeta}, 200_000, true, false},
		{"opus alias", "opus", nil, 200_000, false, false},
		{"bedrock id", "us.anthropic.claude-opus-4-1-20250805-v1:0", nil, 200_000, true, false},
		{"vertex id", "claude-sonnet-4@20250514", []string{Context1MBeta}, 1_000_000, true, true},
		{"upper case", "Claude-Haiku-4-5", nil, 200_000, true, false},
		{"3.x name", "claude-3-5-sonnet-20241022", nil, 200_000, true, false},
		{"Claude Code 2.1.328's default model", "claude-opus-5-5", nil, 1_000_000, true, false},
		{"opus 4.7 has 1M natively", "claude-opus-4-7", nil, 1_000_000, true, false},
		{"sonnet 5", "claude-sonnet-5", nil, 1_000_000, true, false},
		{"haiku 5.5 on bedrock", "us.anthropic.claude-haiku-5-5", nil, 1_000_000, true, false},
		{"codex model without a reported window", "gpt-5.3-codex", nil, CodexGPT5Window, true, false},
		{"gemini model (Gemini CLI counts 1,048,576 for each)", "gemini-2.5-pro", nil, GeminiWindow, true, false},
		{"unknown model", "llama-3-70b", nil, 200_000, false, false},
		{"no model", "", nil, 200_000, false, false},
		{"sonnet-like name that is not Claude", "sonnetina-7b", nil, 200_000, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ContextLimit(tt.model, tt.betas)
			if got.Tokens != tt.want || got.Known != tt.wantKnown || got.FromAgent != tt.fromAgent {
				t.Errorf("ContextLimit(%q, %q) = %+v, want %d known=%v from agent=%v", tt.model, tt.betas, got, tt.want, tt.wantKnown, tt.fromAgent)
			}
			if got.Source == "" {
				t.Error("Source is empty")
			}
		})
	}
}

func TestWindowReported(t *testing.T) {
	tests := []struct {
		name     string
		model    string
		reported int64
		want     int64
	}{
		{"codex rollout states its window", "gpt-5.3-codex", 258_400, 258_400},
		{"stated window beats the table", "claude-sonnet-4-5", 123_000, 123_000},
		{"the status line's 1M for Claude Code's default model", "claude-opus-5-5", 1_000_000, 1_000_000},
		{"nothing stated", "gpt-4.1", 0, 200_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ContextLimit(tt.model, nil).Reported(tt.reported)
			if got.Tokens != tt.want {
				t.Errorf("Tokens = %d, want %d", got.Tokens, tt.want)
			}
			if tt.reported > 0 && (!got.Known || !got.FromAgent) {
				t.Errorf("a reported window is %+v, want Known and FromAgent", got)
			}
			if tt.reported == 0 && got.FromAgent {
				t.Errorf("nothing reported, yet %+v is FromAgent", got)
			}
		})
	}
}
