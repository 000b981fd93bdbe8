package compact

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// conversation returns n messages of 100 tokens each (by perMessage).
func conversation(session string, n int) []Message {
	msgs := make([]Message, n)
	for i := range msgs {
		role := RoleUser
		if i%2 == 1 {
			role = RoleAssistant
		}
		msgs[i] = Message{UUID: fmt.Sprintf("m%02d", i), SessionID: session, Role: role,
			Time: time.Date(2026, 2, 12, 14, i, 0, 0, time.UTC), Blocks: text(strings.Repeat("x", 100))}
	}
	return msgs
}

// recorder records what a compaction calls, in order.
type recorder struct {
	calls        []string
	instructions string
	older        []Message
	warnings     []error
	boundary     Boundary
}

func (r *recorder) hooks(instructions string, preErr error) Hooks {
	return Hooks{
		PreCompact: func(ctx context.Context, trigger string) (string, error) {
			r.calls = append(r.calls, "PreCompact:"+trigger)
			return instructions, preErr
		},
		SessionStart: func(ctx context.Context, source string) { r.calls = append(r.calls, "SessionStart:"+source) },
		PostCompact: func(ctx context.Context, b Boundary) {
			r.calls = append(r.calls, "PostCompact")
			r.boundary = b
		},
	}
}

func (r *recorder) summarizer(summary string, err error) Summarizer {
	return SummarizerFunc(func(ctx context.Context, msgs []Message, instructions string) (string, error) {
		r.calls = append(r.calls, "Summarize")
		r.instructions, r.older = instructions, msgs
		if err == nil && ctx.Err() != nil {
			return "", ctx.Err()
		}
		return summary, err
	})
}

func TestCompact(t *testing.T) {
	now := time.Date(2026, 2, 12, 15, 0, 0, 0, time.UTC)
	boom := errors.New("boom")
	tests := []struct {
		name         string
		msgs         []Message
		trigger      string
		summary      string
		sumErr       error
		noSummarizer bool
		hookInstr    string
		preErr       error
		cancel       bool
		wantErr      error
		wantCalls    []string
		wantSummary  string // "" when Compact fails
		wantWarnings int
		wantPre      int64
	}{
		{name: "summarized", msgs: conversation("s1", 10), trigger: TriggerAuto, summary: "S", hookInstr: "keep the test names",
			wantCalls:   []string{"PreCompact:auto", "Summarize", "SessionStart:compact", "PostCompact"},
			wantSummary: "S", wantPre: 1000},
		{name: "manual", msgs: conversation("s1", 10), trigger: TriggerManual, summary: "S",
			wantCalls:   []string{"PreCompact:manual", "Summarize", "SessionStart:compact", "PostCompact"},
			wantSummary: "S", wantPre: 1000},
		{name: "summarizer fails: oldest dropped", msgs: conversation("s1", 10), trigger: TriggerAuto, sumErr: boom,
			wantCalls:    []string{"PreCompact:auto", "Summarize", "SessionStart:compact", "PostCompact"},
			wantSummary:  "The 6 earliest messages of this conversation were dropped to fit the context window; no summary of them is available.",
			wantWarnings: 1, wantPre: 1000},
		{name: "summarizer returns nothing", msgs: conversation("s1", 10), trigger: TriggerAuto, summary: "",
			wantCalls:    []string{"PreCompact:auto", "Summarize", "SessionStart:compact", "PostCompact"},
			wantSummary:  "The 6 earliest messages of this conversation were dropped to fit the context window; no summary of them is available.",
			wantWarnings: 1, wantPre: 1000},
		{name: "no summarizer: dropped without a warning", msgs: conversation("s1", 10), trigger: TriggerAuto, noSummarizer: true,
			wantCalls:   []string{"PreCompact:auto", "SessionStart:compact", "PostCompact"},
			wantSummary: "The 6 earliest messages of this conversation were dropped to fit the context window; no summary of them is available.",
			wantPre:     1000},
		{name: "pre tokens from the last usage", trigger: TriggerAuto, summary: "S",
			msgs: func() []Message {
				m := conversation("s1", 10)
				m[9].Usage = &Usage{InputTokens: 5, CacheReadInputTokens: 150_000}
				return m
			}(),
			wantCalls:   []string{"PreCompact:auto", "Summarize", "SessionStart:compact", "PostCompact"},
			wantSummary: "S", wantPre: 150_005},
		{name: "PreCompact hook fails", msgs: conversation("s1", 10), trigger: TriggerAuto, summary: "S", preErr: boom,
			wantErr: boom, wantCalls: []string{"PreCompact:auto"}},
		{name: "context canceled", msgs: conversation("s1", 10), trigger: TriggerAuto, summary: "S", cancel: true,
			wantErr: context.Canceled, wantCalls: []string{"PreCompact:auto", "Summarize"}},
		{name: "nothing to compact", msgs: conversation("s1", 4), trigger: TriggerAuto, summary: "S",
			wantErr: ErrNothingToCompact},
		{name: "bad trigger", msgs: conversation("s1", 10), trigger: "sometimes", summary: "S"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r recorder
			c := &Compactor{
				Estimator:    perMessage{},
				ContextLimit: 1000, // 40% = 400 tokens: the last 4 messages
				Instructions: "always",
				Hooks:        r.hooks(tt.hookInstr, tt.preErr),
				Warn:         func(ctx context.Context, err error) { r.warnings = append(r.warnings, err) },
				Now:          func() time.Time { return now },
			}
			if !tt.noSummarizer {
				c.Summarizer = r.summarizer(tt.summary, tt.sumErr)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				cancel()
			}
			before := clone(tt.msgs)

			got, b, err := c.Compact(ctx, tt.msgs, tt.trigger)

			if !reflect.DeepEqual(r.calls, tt.wantCalls) {
				t.Errorf("calls = %q, want %q", r.calls, tt.wantCalls)
			}
			if !reflect.DeepEqual(tt.msgs, before) {
				t.Error("Compact modified its input")
			}
			if len(r.warnings) != tt.wantWarnings {
				t.Errorf("warnings = %v, want %d", r.warnings, tt.wantWarnings)
			}
			if tt.wantSummary == "" {
				if err == nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if !reflect.DeepEqual(got, tt.msgs) {
					t.Error("on error, the messages are not returned unchanged")
				}
				return
			}
			if err != nil {
				t.Fatalf("Compact: %v", err)
			}
			if !tt.noSummarizer {
				if want := "always\n\n" + tt.hookInstr; tt.hookInstr != "" && r.instructions != want {
					t.Errorf("instructions = %q, want %q", r.instructions, want)
				}
				if !reflect.DeepEqual(r.older, tt.msgs[:6]) {
					t.Errorf("summarized %d messages, want the 6 oldest", len(r.older))
				}
			}

			// [summary] + the preserved zone, untouched.
			if len(got) != 5 {
				t.Fatalf("len = %d, want 5", len(got))
			}
			if !reflect.DeepEqual(got[1:], tt.msgs[6:]) {
				t.Error("the preserved zone was changed")
			}
			s := got[0]
			if !s.CompactSummary || s.Role != RoleUser || s.ParentUUID != b.UUID || s.SessionID != "s1" || !s.Time.Equal(now) || !uuidV4.MatchString(s.UUID) {
				t.Errorf("summary message = %+v", s)
			}
			if want := SummaryPreamble + tt.wantSummary; s.Text() != want {
				t.Errorf("summary text = %q, want %q", s.Text(), want)
			}

			wantB := Boundary{Type: "system", Subtype: "compact_boundary", UUID: b.UUID, SessionID: "s1", Time: now,
				Trigger: tt.trigger, PreTokens: tt.wantPre, PostTokens: EstimateMessages(got, perMessage{}),
				LogicalParentUUID: "m05", Summary: tt.wantSummary}
			if b != wantB {
				t.Errorf("boundary = %+v\nwant       %+v", b, wantB)
			}
			if !uuidV4.MatchString(b.UUID) || b.UUID == s.UUID {
				t.Errorf("boundary uuid %q (summary's %q)", b.UUID, s.UUID)
			}
			if r.boundary != b {
				t.Errorf("PostCompact got %+v, want %+v", r.boundary, b)
			}
		})
	}
}

func TestCompactOverhead(t *testing.T) {
	c := &Compactor{Estimator: perMessage{}, ContextLimit: 1000, Overhead: 5000,
		Summarizer: SummarizerFunc(func(context.Context, []Message, string) (string, error) { return "S", nil })}
	out, b, err := c.Compact(context.Background(), conversation("s1", 10), TriggerAuto)
	if err != nil {
		t.Fatal(err)
	}
	if b.PreTokens != 6000 || b.PostTokens != 5000+EstimateMessages(out, perMessage{}) {
		t.Errorf("pre, post = %d, %d; want 6000, %d", b.PreTokens, b.PostTokens, 5000+EstimateMessages(out, perMessage{}))
	}
}

// TestCompactRepeatedly runs an agent-like loop that compacts whenever the
// conversation outgrows its budget, several times in one session.
func TestCompactRepeatedly(t *testing.T) {
	clock := time.Date(2026, 2, 12, 14, 0, 0, 0, time.UTC)
	tick := func() time.Time { clock = clock.Add(time.Minute); return clock }
	var summarized [][]Message
	var posts []Boundary
	c := &Compactor{
		Estimator:    perMessage{},
		ContextLimit: 2000,
		Now:          tick,
		Summarizer: SummarizerFunc(func(_ context.Context, msgs []Message, _ string) (string, error) {
			summarized = append(summarized, msgs)
			return fmt.Sprintf("summary %d of %d messages", len(summarized), len(msgs)), nil
		}),
		Hooks: Hooks{PostCompact: func(_ context.Context, b Boundary) { posts = append(posts, b) }},
	}
	var msgs []Message
	var boundaries []Boundary
	for turn := range 30 {
		user := Message{UUID: fmt.Sprintf("u%02d", turn), SessionID: "s1", Role: RoleUser, Time: tick(), Blocks: text(strings.Repeat("u", 100))}
		msgs = append(msgs, user)
		// The response reports the context its request read.
		reply := Message{UUID: fmt.Sprintf("a%02d", turn), SessionID: "s1", Role: RoleAssistant, Time: tick(), Blocks: text(strings.Repeat("a", 100)),
			Usage: &Usage{InputTokens: EstimateMessages(msgs, perMessage{})}}
		msgs = append(msgs, reply)
		b := Budget{ContextLimit: 2000, MaxOutputTokens: 500, MessageTokens: EstimateMessages(msgs, perMessage{})}
		if !b.ShouldCompact() {
			continue
		}
		out, bd, err := c.Compact(context.Background(), msgs, TriggerAuto)
		if err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		msgs = out
		boundaries = append(boundaries, bd)
	}
	if len(boundaries) < 3 {
		t.Fatalf("%d compactions, want at least 3", len(boundaries))
	}
	seen := map[string]bool{}
	for i, b := range boundaries {
		if seen[b.UUID] {
			t.Errorf("compaction %d reuses uuid %s", i, b.UUID)
		}
		seen[b.UUID] = true
		if b.PostTokens >= b.PreTokens {
			t.Errorf("compaction %d: post %d >= pre %d", i, b.PostTokens, b.PreTokens)
		}
		if i > 0 {
			// The previous summary is the first message summarized next.
			if first := summarized[i][0]; !first.CompactSummary || first.ParentUUID != boundaries[i-1].UUID {
				t.Errorf("compaction %d did not summarize the previous summary first: %+v", i, first)
			}
		}
	}
	if len(posts) != len(boundaries) {
		t.Errorf("PostCompact fired %d times for %d compactions", len(posts), len(boundaries))
	}
	if n := countSummaries(msgs); n != 1 {
		t.Errorf("%d summary messages in the conversation, want 1", n)
	}
}

func countSummaries(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		if m.CompactSummary {
			n++
		}
	}
	return n
}

// TestCompactCorpus compacts a real session with the default estimator:
// the preserved zone keeps every tool call with its result.
func TestCompactCorpus(t *testing.T) {
	msgs := readClaude(t, corpusFile(t, "ccviewer-fe5e1c67"))
	var gotOlder int
	c := &Compactor{ContextLimit: 20_000, Summarizer: SummarizerFunc(func(_ context.Context, older []Message, _ string) (string, error) {
		gotOlder = len(older)
		return "summary", nil
	})}
	out, b, err := c.Compact(context.Background(), msgs, TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	if id := separatedTool(append(msgs[:gotOlder:gotOlder], out[1:]...), gotOlder); id != "" {
		t.Errorf("tool call %s separated from its result", id)
	}
	if est := EstimateMessages(out[1:], nil); est > 8_000 {
		t.Errorf("preserved zone of %d tokens, more than 40%% of 20,000", est)
	}
	t.Logf("ccviewer-fe5e1c67: %d messages -> summary + %d; pre %d tokens (last usage), post %d (estimate)", len(msgs), len(out)-1, b.PreTokens, b.PostTokens)
}

func TestNewUUID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		u := newUUID()
		if !uuidV4.MatchString(u) {
			t.Fatalf("newUUID() = %q, not a v4 uuid", u)
		}
		if seen[u] {
			t.Fatalf("newUUID() repeated %q", u)
		}
		seen[u] = true
	}
}

// TestCompactAgainIgnoresStaleUsage compacts twice in a row: the usage in
// the preserved zone measured the context before the first compaction, so
// the second takes its pre-compaction figure from an estimate.
func TestCompactAgainIgnoresStaleUsage(t *testing.T) {
	msgs := conversation("s1", 10)
	msgs[9].Usage = &Usage{InputTokens: 150_000}
	c := &Compactor{Estimator: perMessage{}, ContextLimit: 1000, Now: func() time.Time { return time.Date(2026, 2, 12, 16, 0, 0, 0, time.UTC) },
		Summarizer: SummarizerFunc(func(context.Context, []Message, string) (string, error) { return "S", nil })}
	once, b1, err := c.Compact(context.Background(), msgs, TriggerAuto)
	if err != nil {
		t.Fatal(err)
	}
	twice, b2, err := c.Compact(context.Background(), once, TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	if b1.PreTokens != 150_000 {
		t.Errorf("first pre = %d, want 150000 (the usage)", b1.PreTokens)
	}
	if want := EstimateMessages(once, perMessage{}); b2.PreTokens != want {
		t.Errorf("second pre = %d, want %d (an estimate)", b2.PreTokens, want)
	}
	if !reflect.DeepEqual(twice[1:], msgs[6:]) || countSummaries(twice) != 1 {
		t.Errorf("second compaction: %d messages, %d summaries", len(twice), countSummaries(twice))
	}
}
