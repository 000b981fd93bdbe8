package engine

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentledger/ledger/store"
)

// TestGeminiPreCompressOncePerPoint: Gemini CLI fires PreCompress before
// every turn, and again when a compression did not shrink the context.
// A point of the conversation gets one handoff, however long after
// (past the PreCompact debounce) the event fires again there, and after
// the compression made there was read; once the conversation has moved
// on, the next PreCompress that is due writes one.
func TestGeminiPreCompressOncePerPoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const session = "43a4cd49-8852-46d6-9a9b-e46d6b0404f9"
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "agents", "gemini-0.61.0", "session-2026-11-26T07-33-43a4cd49.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	dir := t.TempDir()
	path := filepath.Join(dir, "session-2026-11-26T07-33-43a4cd49.jsonl")
	putFile(t, path, string(bytes.Join(lines[:11], nil))) // the first run: one turn

	var mu sync.Mutex
	now := time.Date(2026, 11, 26, 7, 34, 0, 0, time.UTC)
	_, s := openEngine(t)
	e := newEngine(Config{DB: s.Path(), Mode: Write, Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }},
		func(context.Context) (*store.Store, error) { return s, nil })
	later := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	preCompress := func(trigger string) hookResult {
		t.Helper()
		in := HookInput{SessionID: session, TranscriptPath: path, Cwd: dir, Event: "PreCompact", Trigger: trigger}
		r := e.hook(ctx, in, HookOptions{Agent: "gemini"}, clocksAt(time.Now().Add(time.Hour)))
		if r.err != nil {
			t.Fatalf("PreCompress: %v", r.err)
		}
		return r
	}
	records := func() []store.Compaction {
		t.Helper()
		cs, err := s.Compactions(ctx, store.CompactionFilter{SessionID: session})
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}

	if r := preCompress("manual"); r.outcome != store.OutcomeOK {
		t.Fatalf("a manual /compress: %s %s, want a handoff", r.outcome, r.detail)
	}
	if cs := records(); len(cs) != 1 || cs[0].Source != "hook" || cs[0].HandoffID == nil {
		t.Fatalf("compaction records %+v, want one of the hook with its handoff", cs)
	}
	later(time.Hour)
	r := preCompress("manual")
	if r.outcome != store.OutcomeNothing || !strings.Contains(r.detail, "a handoff was written at this point of the conversation already") {
		t.Errorf("PreCompress an hour later at the same point: %s %q, want nothing written", r.outcome, r.detail)
	}
	if cs := records(); len(cs) != 1 {
		t.Errorf("%d compaction records after a second PreCompress at one point, want 1", len(cs))
	}

	// The next run's turn, at 900,000 tokens: an auto compression is due.
	putFile(t, path, string(bytes.Join(lines[:20], nil)))
	later(time.Hour)
	if r := preCompress("auto"); r.outcome != store.OutcomeOK {
		t.Errorf("PreCompress at a new point: %s %q, want a handoff", r.outcome, r.detail)
	}
	if cs := records(); len(cs) != 2 {
		t.Errorf("%d compaction records after PreCompress at a new point, want 2", len(cs))
	}
	// Its compression is read (the record completed with the snapshot),
	// and it did not shrink the context: Gemini CLI fires PreCompress
	// again before the next turn, at the same point.
	putFile(t, path, string(bytes.Join(lines[:22], nil)))
	later(time.Minute)
	r = preCompress("auto")
	if r.outcome != store.OutcomeNothing || !strings.Contains(r.detail, "at this point of the conversation already") {
		t.Errorf("PreCompress after a compression that did not shrink the context: %s %q, want nothing written", r.outcome, r.detail)
	}
	if cs := records(); len(cs) != 2 || cs[1].Summary == "" {
		t.Errorf("compaction records %+v, want 2, the second completed by the compression", cs)
	}
}
