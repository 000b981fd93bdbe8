package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/store"
)

// The work of each hook event, in-process and without its budget (RunHook's
// clocks are given far off, or where a test wants them): what a hook does,
// whatever the load of the machine the tests run on. RunHook's budget is
// the binary's tests' (cmd/ledger: a hook as the agent runs it).

const sampleID = "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57"

// sampleTranscript copies the sample Claude Code session into dir and
// returns its path and lines.
func sampleTranscript(t *testing.T, dir string) (string, [][]byte) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sampleDir(t), "claude", "-home-dev-src-payments", sampleID+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, sampleID+".jsonl")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, bytes.SplitAfter(b, []byte("\n"))
}

// clocksAt are a hook run's clocks all at by.
func clocksAt(by time.Time) hookClocks { return hookClocks{lockBy: by, readBy: by, handoffLockBy: by} }

// event runs the work of one hook event with its clocks an hour off.
func event(t *testing.T, e *Engine, o HookOptions, fields map[string]any) hookResult {
	t.Helper()
	return eventBy(t, e, o, clocksAt(time.Now().Add(time.Hour)), fields)
}

// eventBy runs the work of one hook event with clocks c.
func eventBy(t *testing.T, e *Engine, o HookOptions, c hookClocks, fields map[string]any) hookResult {
	t.Helper()
	b, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	in, err := DecodeHookInput(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return e.hook(context.Background(), in, o, c)
}

// holdLock holds the ledger's write lock from another connection, as
// another process would, until release is called (or the test ends).
func holdLock(t *testing.T, s *store.Store) (release func()) {
	t.Helper()
	tx, err := rawDB(t, s.Path()).Beginx() // immediate: the DSN's _txlock
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO sessions (id, source) VALUES ('lock-holder', 'claude')`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback() })
	return func() { tx.Rollback() }
}

// TestHookPreCompactWhileLocked: while another process holds the write
// lock, PreCompact still writes the handoff, from what the ledger holds
// and the transcript's lines it does not (read, not ingested): its
// Markdown file at once, its row pending; SessionStart meanwhile injects
// it; the next Stop that can write stores it, and the new lines, once.
func TestHookPreCompactWhileLocked(t *testing.T) {
	t.Parallel()
	e, s, home := hookEngine(t)
	path, lines := sampleTranscript(t, home)
	if err := os.WriteFile(path, bytes.Join(lines[:20], nil), 0o600); err != nil {
		t.Fatal(err)
	}
	in := map[string]any{"session_id": sampleID, "transcript_path": path, "cwd": "/home/dev/src/payments"}
	with := func(extra map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range in {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	if r := event(t, e, HookOptions{}, with(map[string]any{"hook_event_name": "Stop"})); r.err != nil || r.outcome != store.OutcomeOK {
		t.Fatalf("Stop: %+v", r)
	}
	if err := os.WriteFile(path, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}

	release := holdLock(t, s)
	soon := clocksAt(time.Now().Add(100 * time.Millisecond))
	r := eventBy(t, e, HookOptions{}, soon, with(map[string]any{"hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": "keep the zebra plan"}))
	if r.err != nil || r.outcome != store.OutcomeDeferred || !strings.Contains(r.detail, "write lock was held") || !strings.Contains(r.detail, "wait for the write lock") {
		t.Fatalf("PreCompact while locked: %+v", r)
	}
	files, _ := filepath.Glob(filepath.Join(HandoffsDir(s.Path(), "/home/dev/src/payments"), sampleID, "*.md"))
	if len(files) != 1 {
		t.Fatalf("handoff files %v, want one written at once", files)
	}
	md, _ := os.ReadFile(files[0])
	// The integration suite is asked about in a line the ledger has not
	// read: the handoff is about the latest work all the same.
	if !strings.Contains(string(md), "keep the zebra plan") || !strings.Contains(string(md), "integration") {
		t.Errorf("the handoff lacks the compaction's instructions or the unread lines:\n%s", md)
	}
	if hs, _ := s.Handoffs(context.Background(), sampleID, 0); len(hs) != 0 {
		t.Errorf("a handoff row while locked: %+v", hs)
	}
	// SessionStart reads: it injects the pending handoff.
	r = eventBy(t, e, HookOptions{}, soon, with(map[string]any{"hook_event_name": "SessionStart", "source": "compact"}))
	if out, ok := r.out.(SessionStartOutput); !ok || !strings.Contains(out.HookSpecificOutput.AdditionalContext, "keep the zebra plan") {
		t.Errorf("SessionStart while locked: %+v", r)
	}

	release()
	r = event(t, e, HookOptions{}, with(map[string]any{"hook_event_name": "Stop"}))
	if r.err != nil || r.outcome != store.OutcomeOK || !strings.Contains(r.detail, "stored 1 handoff(s) left pending") {
		t.Fatalf("Stop after the lock: %+v", r)
	}
	sess, err := s.Session(context.Background(), sampleID)
	if err != nil || sess.Messages != 28 {
		t.Errorf("session after the lock: %+v, %v; want its 28 messages", sess.Messages, err)
	}
	hs, _ := s.Handoffs(context.Background(), sampleID, 0)
	cs, _ := s.Compactions(context.Background(), store.CompactionFilter{SessionID: sampleID})
	hookRecords := 0
	for _, c := range cs {
		if c.Source == "hook" {
			hookRecords++
		}
	}
	if len(hs) != 1 || hookRecords != 1 || hs[0].Path != files[0] {
		t.Errorf("after the lock: %d handoffs, %d hook records; want the pending one stored once, its file kept", len(hs), hookRecords)
	}
	if left := pendingDrafts(s.Path(), ""); len(left) != 0 {
		t.Errorf("drafts left pending: %+v", left)
	}
}

// TestHookUnreadTailBounded: a PreCompact of a session the ledger has
// never seen, the ledger locked, reads the transcript's newest 16 MB, from
// the first whole line in them: a line cut by the bound is left out.
func TestHookUnreadTailBounded(t *testing.T) {
	t.Parallel()
	e, s, home := hookEngine(t)
	path, lines := sampleTranscript(t, home)
	// A first message of 17 MB (a pasted log), then the session.
	big, _ := json.Marshal(map[string]any{"type": "user", "uuid": "big", "sessionId": sampleID, "cwd": "/home/dev/src/payments",
		"timestamp": "2026-03-02T08:59:00Z", "message": map[string]any{"role": "user", "content": "zebrabig " + strings.Repeat("x", 17<<20)}})
	if err := os.WriteFile(path, append(append(big, '\n'), bytes.Join(lines, nil)...), 0o600); err != nil {
		t.Fatal(err)
	}
	holdLock(t, s)
	r := eventBy(t, e, HookOptions{}, clocksAt(time.Now().Add(100*time.Millisecond)),
		map[string]any{"hook_event_name": "PreCompact", "session_id": sampleID, "transcript_path": path, "cwd": "/home/dev/src/payments", "trigger": "manual"})
	if r.err != nil || r.outcome != store.OutcomeDeferred {
		t.Fatalf("PreCompact: %+v", r)
	}
	drafts := pendingDrafts(s.Path(), sampleID)
	if len(drafts) != 1 {
		t.Fatalf("drafts %+v, want one", drafts)
	}
	md := drafts[0].Doc.Markdown
	if !strings.Contains(md, "integration") || strings.Contains(md, "zebrabig") || drafts[0].Record.Trigger != "manual" {
		t.Errorf("the handoff of the newest 16 MB: trigger %q\n%.600s", drafts[0].Record.Trigger, md)
	}
}

// TestHookPostToolUseContextFull: past 80% of the window, PostToolUse
// suggests a handoff once, saying how full the context is; a session the
// ledger has not seen (its lines left for later) gets nothing.
func TestHookPostToolUseContextFull(t *testing.T) {
	t.Parallel()
	e, _, home := hookEngine(t)
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "codex-hooks", "rollout-turn1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	const id = "019e5a10-7c2b-7d41-9a8e-3f6b2c1d0e9a"
	path := filepath.Join(home, "rollout-"+id+".jsonl")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	in := map[string]any{"hook_event_name": "PostToolUse", "session_id": id, "transcript_path": path, "cwd": "/home/dev/src/shop", "tool_name": "Bash"}
	r := event(t, e, HookOptions{}, in)
	out, ok := r.out.(PostToolUseOutput)
	if !ok || !strings.Contains(out.SystemMessage, "the context is 83% full (225000 of 272000 tokens)") || !strings.Contains(out.SystemMessage, "`ledger compact 019e5a10`") ||
		!strings.Contains(out.HookSpecificOutput.AdditionalContext, "`ledger compact "+id+"`") {
		t.Fatalf("PostToolUse past 80%%: %+v", r)
	}
	if r := event(t, e, HookOptions{}, in); r.out != nil || r.err != nil {
		t.Errorf("second PostToolUse: %+v, want silence", r)
	}
	// Nothing read in the time given: the session is in the lines left.
	other := filepath.Join(home, "other.jsonl")
	os.WriteFile(other, bytes.ReplaceAll(b, []byte(id), []byte("019e5a10-0000-7000-8000-000000000001")), 0o600)
	in["transcript_path"], in["session_id"] = other, "019e5a10-0000-7000-8000-000000000001"
	r = eventBy(t, e, HookOptions{}, clocksAt(time.Now().Add(-time.Second)), in)
	if r.out != nil || r.err != nil || r.outcome != store.OutcomeDeferred || !strings.Contains(r.detail, "left for the next event") {
		t.Errorf("PostToolUse with no time to read: %+v", r)
	}
}

// TestHookSessionStartSources: what each SessionStart source injects when
// there is nothing to inject, and a transcript the ingest cannot read is
// a warning that still injects what the ledger holds.
func TestHookSessionStartSources(t *testing.T) {
	t.Parallel()
	e, _, home := hookEngine(t)
	path, _ := sampleTranscript(t, home)
	if _, err := e.IngestFile(context.Background(), path, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		fields  map[string]any
		outcome string
		detail  string
		out     bool
	}{
		{"no session id", map[string]any{"source": "compact"}, store.OutcomeNothing, "no session_id", false},
		{"unknown session", map[string]any{"source": "resume", "session_id": "ffffffff-0000-4000-8000-000000000000"}, store.OutcomeNothing, "nothing to inject", false},
		{"another source", map[string]any{"source": "somewhere", "session_id": sampleID}, store.OutcomeNothing, `source "somewhere": nothing to inject`, false},
		{"clear, a project never seen", map[string]any{"source": "clear", "session_id": "eeeeeeee-0000-4000-8000-000000000000", "cwd": t.TempDir()}, store.OutcomeNothing, "nothing to inject", false},
		{"compact, transcript gone", map[string]any{"source": "compact", "session_id": sampleID, "transcript_path": filepath.Join(home, "gone.jsonl")}, store.OutcomeOK, "injected", true},
		{"clear, the project's latest", map[string]any{"source": "clear", "session_id": "dddddddd-0000-4000-8000-000000000000", "cwd": "/home/dev/src/payments"}, store.OutcomeOK, "injected", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.fields["hook_event_name"] = "SessionStart"
			r := event(t, e, HookOptions{}, tc.fields)
			if r.outcome != tc.outcome || !strings.Contains(r.detail, tc.detail) || (r.out != nil) != tc.out || r.err != nil {
				t.Errorf("%+v, want outcome %s, detail with %q, output %v", r, tc.outcome, tc.detail, tc.out)
			}
			if tc.name == "compact, transcript gone" && (r.warn == nil || !errors.Is(r.warn, os.ErrNotExist)) {
				t.Errorf("warning %v, want the transcript's", r.warn)
			}
			if tc.name == "clear, the project's latest" {
				ctx := r.out.(SessionStartOutput).HookSpecificOutput.AdditionalContext
				if !strings.HasPrefix(ctx, "ledger: this project's latest work is a Claude Code session (7c1d9e42, last active ") {
					t.Errorf("context:\n%.300s", ctx)
				}
			}
		})
	}
}

// TestHookPreCompactNothingReadInTime: a PreCompact whose budget for
// reading ran out before it read a line of a session the ledger has not
// seen (a loaded machine, a slow disk) still writes the handoff, from the
// transcript's lines it drafts from: its file at once, its row pending
// until the session is ingested. Inserting it at once failed on the
// missing session row (FOREIGN KEY), and the handoff was lost.
func TestHookPreCompactNothingReadInTime(t *testing.T) {
	t.Parallel()
	e, s, home := hookEngine(t)
	path, _ := sampleTranscript(t, home)
	in := map[string]any{"session_id": sampleID, "transcript_path": path, "cwd": "/home/dev/src/payments",
		"hook_event_name": "PreCompact", "trigger": "auto"}
	r := eventBy(t, e, HookOptions{}, clocksAt(time.Now().Add(-time.Second)), in)
	if r.err != nil || r.outcome != store.OutcomeDeferred || !strings.Contains(r.detail, "wait for the write lock") {
		t.Fatalf("PreCompact with nothing read: %+v", r)
	}
	if files, _ := filepath.Glob(filepath.Join(HandoffsDir(s.Path(), "/home/dev/src/payments"), sampleID, "*.md")); len(files) != 1 {
		t.Fatalf("handoff files %v, want one", files)
	}
	// The next event reads the transcript, and stores the handoff.
	delete(in, "trigger")
	in["hook_event_name"] = "Stop"
	if r := event(t, e, HookOptions{}, in); r.err != nil {
		t.Fatalf("Stop: %+v", r)
	}
	if hs, err := s.Handoffs(context.Background(), sampleID, 0); err != nil || len(hs) != 1 {
		t.Errorf("handoffs %+v (%v), want the deferred one stored", hs, err)
	}
}

// TestHookOutOfTimeBlamesNoLock: a hook whose time runs out before the
// transcript's new lines are stored says so in its receipt, and does not
// blame a write lock no other process held.
func TestHookOutOfTimeBlamesNoLock(t *testing.T) {
	t.Parallel()
	e, _, home := hookEngine(t)
	path, _ := sampleTranscript(t, home)
	b, err := json.Marshal(map[string]any{"session_id": sampleID, "transcript_path": path, "cwd": "/home/dev/src/payments", "hook_event_name": "Stop"})
	if err != nil {
		t.Fatal(err)
	}
	in, err := DecodeHookInput(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the budget spent
	r := e.hook(ctx, in, HookOptions{}, clocksAt(time.Now().Add(time.Hour)))
	if r.outcome != store.OutcomeDeferred || strings.Contains(r.detail, "lock") || !strings.Contains(r.detail, "time ran out") || !strings.Contains(r.detail, "new lines are left") {
		t.Fatalf("out of time, no lock held: %+v", r)
	}
}
