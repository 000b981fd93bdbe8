package handoff

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentledger/ledger/compact"
)

func TestSummarizer(t *testing.T) {
	gc := loadCase(t, "claude-session")
	var s compact.Summarizer = Summarizer{Options: gc.opts, Budget: 300}
	got, err := s.Summarize(context.Background(), gc.msgs, "")
	if err != nil {
		t.Fatal(err)
	}
	if got != Render(Extract(gc.msgs, gc.opts), 300, ApproxTokens) {
		t.Error("summary is not the rendered handoff")
	}

	note := "Keep the rate-limit numbers.\n## Not a heading"
	withNote, err := s.Summarize(context.Background(), gc.msgs, note)
	if err != nil {
		t.Fatal(err)
	}
	if n := ApproxTokens(withNote); n > 300 {
		t.Errorf("summary with instructions is %d tokens, budget 300", n)
	}
	if !strings.HasSuffix(withNote, "\n## Instructions\nKeep the rate-limit numbers.\n\\## Not a heading\n") {
		t.Errorf("instructions note missing or unescaped:\n%s", withNote)
	}
	d, err := Parse(withNote)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(d.Context, "Keep the rate-limit numbers") {
		t.Errorf("instructions leaked into the context: %q", d.Context)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Summarize(ctx, gc.msgs, ""); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled context: err = %v", err)
	}

	// The zero value works: default budget and counter.
	zero, err := Summarizer{}.Summarize(context.Background(), gc.msgs, "")
	if err != nil || ApproxTokens(zero) > DefaultBudget || !strings.Contains(zero, "## Task\nAdd per-client rate limiting") {
		t.Errorf("zero Summarizer: %v\n%s", err, zero)
	}
}

// manyMessages repeats a golden session n times, with fresh tool ids.
func manyMessages(b *testing.B, n int) []compact.Message {
	b.Helper()
	gc := loadCase(b, "claude-session")
	var msgs []compact.Message
	for i := range n {
		for _, m := range gc.msgs {
			blocks := make([]compact.Block, len(m.Blocks))
			copy(blocks, m.Blocks)
			for j := range blocks {
				if blocks[j].ToolID != "" {
					blocks[j].ToolID = blocks[j].ToolID + "-" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
				}
			}
			m.Blocks = blocks
			msgs = append(msgs, m)
		}
	}
	return msgs
}

func BenchmarkExtract(b *testing.B) {
	msgs := manyMessages(b, 100) // ~6,000 messages
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Extract(msgs, ExtractOptions{Project: "/home/dev/src/acme-api"})
	}
	b.ReportMetric(float64(len(msgs)), "msgs/op")
}

func BenchmarkRender(b *testing.B) {
	d := bigDoc()
	b.ReportAllocs()
	for b.Loop() {
		Render(d, DefaultBudget, ApproxTokens)
	}
}
