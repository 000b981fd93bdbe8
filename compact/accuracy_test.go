package compact

import (
	"math"
	"testing"
)

// perMessage is a test estimator: each message costs its text's length
// in bytes; plain text costs its length.
type perMessage struct{}

func (perMessage) Tokens(s string) int { return len(s) }
func (perMessage) MessageTokens(m Message) int {
	n := 0
	for _, b := range m.Blocks {
		n += len(b.Text)
	}
	return n
}

func text(s string) []Block { return []Block{{Kind: BlockText, Text: s}} }

func TestMeasureAccuracy(t *testing.T) {
	s := func(n int) string { // n bytes of text
		b := make([]byte, n)
		for i := range b {
			b[i] = 'a'
		}
		return string(b)
	}
	tests := []struct {
		name string
		msgs []Message
		want Accuracy
	}{
		{"empty", nil, Accuracy{}},
		{"exact", []Message{
			{Role: RoleAssistant, ResponseID: "r1", Usage: &Usage{OutputTokens: 100}, Blocks: text(s(100))},
		}, Accuracy{Messages: 1, BaselineMedianAbsError: 0.75, BaselineP90AbsError: 0.75}},
		{"lines of one response merged, last usage wins", []Message{
			{Role: RoleAssistant, ResponseID: "r1", Usage: &Usage{OutputTokens: 1}, Blocks: text(s(60))},
			{Role: RoleUser, Blocks: text("between")},
			{Role: RoleAssistant, ResponseID: "r1", Usage: &Usage{OutputTokens: 100}, Blocks: text(s(40))},
		}, Accuracy{Messages: 1, BaselineMedianAbsError: 0.75, BaselineP90AbsError: 0.75}},
		{"thinking skipped", []Message{
			{Role: RoleAssistant, ResponseID: "r1", Usage: &Usage{OutputTokens: 100}, Blocks: []Block{{Kind: BlockThinking}, {Kind: BlockText, Text: "x"}}},
		}, Accuracy{SkippedThinking: 1}},
		{"partial usage skipped", []Message{
			{Role: RoleAssistant, ResponseID: "r1", Usage: &Usage{OutputTokens: 25}, Blocks: []Block{{Kind: BlockToolUse, ToolName: "Bash", Input: `{}`}}},
			{Role: RoleAssistant, ResponseID: "r2", Usage: &Usage{OutputTokens: 1}, Blocks: text(s(100))},
			{Role: RoleAssistant, ResponseID: "r3", Usage: &Usage{OutputTokens: 0}, Blocks: text("")},
		}, Accuracy{SkippedPartial: 3}},
		{"no usage, user lines: not measured", []Message{
			{Role: RoleAssistant, ResponseID: "r1", Blocks: text(s(10))},
			{Role: RoleUser, Usage: &Usage{OutputTokens: 10}, Blocks: text(s(10))},
		}, Accuracy{}},
		{"lines without a response id stay apart", []Message{
			{Role: RoleAssistant, Usage: &Usage{OutputTokens: 100}, Blocks: text(s(50))},
			{Role: RoleAssistant, Usage: &Usage{OutputTokens: 100}, Blocks: text(s(150))},
		}, Accuracy{Messages: 2, MedianAbsError: 0.5, P90AbsError: 0.5, BaselineMedianAbsError: (0.87 + 0.62) / 2, BaselineP90AbsError: 0.87}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MeasureAccuracy(tt.msgs, perMessage{})
			if !accuracyEqual(got, tt.want) {
				t.Errorf("MeasureAccuracy = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func accuracyEqual(a, b Accuracy) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }
	return a.Messages == b.Messages && a.SkippedThinking == b.SkippedThinking && a.SkippedPartial == b.SkippedPartial &&
		near(a.MedianAbsError, b.MedianAbsError) && near(a.P90AbsError, b.P90AbsError) &&
		near(a.BaselineMedianAbsError, b.BaselineMedianAbsError) && near(a.BaselineP90AbsError, b.BaselineP90AbsError)
}

func TestPercentile(t *testing.T) {
	ten := []float64{10, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	tests := []struct {
		name string
		xs   []float64
		p    float64
		want float64
	}{
		{"none", nil, 50, 0},
		{"one", []float64{3}, 90, 3},
		{"median odd", []float64{5, 1, 3}, 50, 3},
		{"median even", []float64{4, 1, 3, 2}, 50, 2.5},
		{"p90 of ten", ten, 90, 9},
		{"p100", ten, 100, 10},
		{"p10", ten, 10, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.xs, tt.p); got != tt.want {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tt.xs, tt.p, got, tt.want)
			}
		})
	}
	if ten[0] != 10 {
		t.Error("Percentile sorted its input")
	}
}
