package compact

import "testing"

func TestContextLimit(t *testing.T) {
	tests := []struct {
		name      string
		model     string
		betas     []string
		want      int64
		wantKnown bool
	}{
		{"sonnet 4.5", "claude-sonnet-4-5-20250929", nil, 200_000, true},
		{"sonnet 4 with the 1M beta", "claude-sonnet-4-20250514", []string{Context1MBeta}, 1_000_000, true},
		{"1M beta among others", "claude-sonnet-4-5", []string{"interleaved-thinking-2025-05-14, context-1m-2025-08-07"}, 1_000_000, true},
		{"Claude Code [1m] suffix", "claude-sonnet-4-5[1m]", nil, 1_000_000, true},
		{"alias", "sonnet", nil, 200_000, true},
		{"alias with [1m]", "sonnet[1m]", nil, 1_000_000, true},
		{"opus ignores the 1M beta", "claude-opus-4-6", []string{Context1MBeta}, 200_000, true},
		{"haiku ignores the 1M beta", "claude-haiku-4-5-20251001", []string{Context1MBeta}, 200_000, true},
		{"opus alias", "opus", nil, 200_000, true},
		{"bedrock id", "us.anthropic.claude-opus-4-1-20250805-v1:0", nil, 200_000, true},
		{"vertex id", "claude-sonnet-4@20250514", []string{Context1MBeta}, 1_000_000, true},
		{"upper case", "Claude-Haiku-4-5", nil, 200_000, true},
		{"codex model without a reported window", "gpt-5.3-codex", nil, CodexGPT5Window, true},
		{"gemini model (Gemini CLI counts 1,048,576 for each)", "gemini-2.5-pro", nil, GeminiWindow, true},
		{"unknown model", "llama-3-70b", nil, 200_000, false},
		{"no model", "", nil, 200_000, false},
		{"sonnet-like name that is not Claude", "sonnetina-7b", nil, 200_000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ContextLimit(tt.model, tt.betas)
			if got.Tokens != tt.want || got.Known != tt.wantKnown {
				t.Errorf("ContextLimit(%q, %q) = %+v, want %d known=%v", tt.model, tt.betas, got, tt.want, tt.wantKnown)
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
		{"nothing stated", "gpt-4.1", 0, 200_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ContextLimit(tt.model, nil).Reported(tt.reported)
			if got.Tokens != tt.want {
				t.Errorf("Tokens = %d, want %d", got.Tokens, tt.want)
			}
			if tt.reported > 0 && !got.Known {
				t.Error("a reported window is not Known")
			}
		})
	}
}
