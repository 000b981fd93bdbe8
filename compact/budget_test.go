package compact

import (
	"math"
	"testing"
)

func TestBudget(t *testing.T) {
	tests := []struct {
		name         string
		b            Budget
		wantWindow   int64
		wantAvail    int64
		wantOverflow int64
		wantUtil     float64
		wantShould   bool
		wantMust     bool
	}{
		{"empty conversation", Budget{ContextLimit: 200_000, SystemPromptTokens: 20_000},
			183_616, 163_616, 0, 20_000.0 / 183_616, false, false},
		{"just below 80%", Budget{ContextLimit: 116_384, MessageTokens: 80_000},
			100_000, 20_000, 0, 0.80, false, false},
		{"above 80%", Budget{ContextLimit: 116_384, SystemPromptTokens: 1, MessageTokens: 80_000},
			100_000, 19_999, 0, 0.80001, true, false},
		{"above 95%", Budget{ContextLimit: 116_384, MessageTokens: 96_000},
			100_000, 4_000, 0, 0.96, true, true},
		{"overflow", Budget{ContextLimit: 116_384, MessageTokens: 110_000},
			100_000, 0, 10_000, 1.10, true, true},
		{"own max output", Budget{ContextLimit: 200_000, MaxOutputTokens: 100_000, MessageTokens: 50_000},
			100_000, 50_000, 0, 0.5, false, false},
		{"own thresholds", Budget{ContextLimit: 116_384, MessageTokens: 60_000, ShouldCompactAt: 0.5, MustCompactAt: 0.59},
			100_000, 40_000, 0, 0.6, true, true},
		{"no window", Budget{ContextLimit: 1000, MessageTokens: 1},
			0, 0, 1, math.Inf(1), true, true},
		{"nothing at all", Budget{},
			0, 0, 0, 0, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.b
			if got := b.InputWindow(); got != tt.wantWindow {
				t.Errorf("InputWindow = %d, want %d", got, tt.wantWindow)
			}
			if got := b.Available(); got != tt.wantAvail {
				t.Errorf("Available = %d, want %d", got, tt.wantAvail)
			}
			if got := b.Overflow(); got != tt.wantOverflow {
				t.Errorf("Overflow = %d, want %d", got, tt.wantOverflow)
			}
			if got := b.Utilization(); math.Abs(got-tt.wantUtil) > 1e-9 && got != tt.wantUtil {
				t.Errorf("Utilization = %v, want %v", got, tt.wantUtil)
			}
			if got := b.ShouldCompact(); got != tt.wantShould {
				t.Errorf("ShouldCompact = %v, want %v", got, tt.wantShould)
			}
			if got := b.MustCompact(); got != tt.wantMust {
				t.Errorf("MustCompact = %v, want %v", got, tt.wantMust)
			}
		})
	}
}
