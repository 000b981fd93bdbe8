package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/transcript"
)

// TestPlanRead walks planRead's table: where a file is read from, given
// what its cursor says.
func TestPlanRead(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(filepath.Join(sampleDir(t), "claude", "-home-dev-src-payments", "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, src, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	half := int64(len(src) / 2)
	_, hash, _ := headHash(f, 1024)
	state, _ := json.Marshal(transcript.State{Format: transcript.FormatClaude, SessionID: "x"})
	grew := store.Cursor{Size: half, ModTime: 1, Offset: half, Line: 9, HeadLen: 1024, HeadHash: hash, State: string(state)}
	tests := []struct {
		name      string
		cur       store.Cursor
		seen      bool
		unchanged bool
		start     int64
	}{
		{"a new file", store.Cursor{}, false, false, 0},
		{"same size and time", store.Cursor{Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}, true, true, 0},
		{"grew", grew, true, false, half},
		{"read to its end", func() store.Cursor { c := grew; c.Offset = fi.Size(); return c }(), true, true, fi.Size()},
		{"shrank", func() store.Cursor { c := grew; c.Offset = fi.Size() + 1; return c }(), true, false, 0},
		{"rewritten", func() store.Cursor { c := grew; c.HeadHash = "0000"; return c }(), true, false, 0},
		{"bad state", func() store.Cursor { c := grew; c.State = "{"; return c }(), true, false, 0},
		{"state without a format", func() store.Cursor { c := grew; c.State = "{}"; return c }(), true, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := planRead(context.Background(), f, fi, tc.cur, tc.seen)
			if err != nil {
				t.Fatal(err)
			}
			if p.unchanged != tc.unchanged || (!p.unchanged && p.start != tc.start) {
				t.Errorf("plan = %+v, want unchanged %v from %d", p, tc.unchanged, tc.start)
			}
			if !p.unchanged && p.start == 0 && (p.line != 1 || p.state.Format != transcript.FormatClaude) {
				t.Errorf("from the start: line %d, format %q; want 1 and the detected claude", p.line, p.state.Format)
			}
		})
	}
}

// TestWriteHandoffOnce: a second PreCompact handoff at the same point of
// the transcript writes nothing and returns the first one's id.
func TestWriteHandoffOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, s := openEngine(t)
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	e.now = func() time.Time { return now }
	if _, err := e.Ingest(ctx, []string{sampleDir(t)}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	const session = "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57"
	out := filepath.Join(t.TempDir(), "h.md")
	req := HandoffRequest{Trigger: "auto", Budget: handoff.DefaultBudget, Source: "hook", Once: true, Out: out}
	first, err := e.WriteHandoff(ctx, session, req)
	if err != nil || !first.Written {
		t.Fatalf("first: %+v, %v", first.Written, err)
	}
	now = now.Add(30 * time.Second)
	req.Out = out + ".2"
	second, err := e.WriteHandoff(ctx, session, req)
	if err != nil || second.Written || second.ID != first.ID {
		t.Fatalf("second within a minute: written %v, id %d (first %d), %v", second.Written, second.ID, first.ID, err)
	}
	if _, err := os.Stat(req.Out); !os.IsNotExist(err) {
		t.Errorf("the second handoff's file was written (%v)", err)
	}
	// A compaction is a point of the transcript, not a time window: at the
	// same point two minutes later, it is still that compaction
	// (TestPreCompactOncePerTranscriptPoint has a later point's).
	now = now.Add(2 * time.Minute)
	third, err := e.WriteHandoff(ctx, session, req)
	if err != nil || third.Written || third.ID != first.ID {
		t.Fatalf("at the same point later: written %v, id %d (first %d), %v", third.Written, third.ID, first.ID, err)
	}
	hs, err := s.Handoffs(ctx, session, 0)
	if err != nil || len(hs) != 1 {
		t.Errorf("handoffs: %d (%v), want 1", len(hs), err)
	}
}

// TestHookEvents: every event has a budget well inside its settings
// timeout (the README's budgets), and only those events are handled.
func TestHookEvents(t *testing.T) {
	t.Parallel()
	want := map[string]time.Duration{"SessionStart": 2 * time.Second, "PostToolUse": time.Second, "Stop": time.Second,
		"SessionEnd": time.Second, "PreCompact": 10 * time.Second}
	for _, ev := range HookEvents() {
		d, ok := HookBudget(ev.Name)
		if !ok || d != want[ev.Name] || 2*d > time.Duration(ev.Timeout)*time.Second {
			t.Errorf("%s: budget %v, timeout %ds; want %v, at most half the timeout", ev.Name, d, ev.Timeout, want[ev.Name])
		}
	}
	if _, ok := HookBudget("Notification"); ok {
		t.Error("Notification has a budget")
	}
}

func TestParseTime(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"": {}, "36h": now.Add(-36 * time.Hour), "7d": now.AddDate(0, 0, -7), "2w": now.AddDate(0, 0, -14),
		"2026-01-31T10:00:00Z": time.Date(2026, 1, 31, 10, 0, 0, 0, time.UTC),
	} {
		if got, err := ParseTime(in, now); err != nil || !got.Equal(want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"yesterday", "-3d", "7x"} {
		if _, err := ParseTime(bad, now); err == nil {
			t.Errorf("ParseTime(%q): no error", bad)
		}
	}
}
