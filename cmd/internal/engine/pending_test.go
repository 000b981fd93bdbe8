package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/store"
)

// TestPendingHandoff follows a handoff a PreCompact hook could not store:
// kept pending beside the ledger, resume reads it, a later flush stores it
// once (a second draft of the same compaction is dropped with its file),
// and forget removes a session's pending drafts with the rest.
func TestPendingHandoff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st, sess, msgs := sampleSession(t)
	session := sess.ID
	req := HandoffRequest{Trigger: "auto", Budget: handoff.DefaultBudget, Source: "hook", Once: true, Note: "keep the zebra plan"}
	draft := func(out string) handoffDraft {
		req.Out = filepath.Join(t.TempDir(), out)
		d, err := e.draftHandoff(ctx, st, sess, msgs, req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := deferHandoff(st, &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	first, second := draft("a.md"), draft("b.md") // PreCompact fired twice
	if _, err := os.Stat(first.Path); err != nil {
		t.Fatalf("the Markdown file is not written at once: %v", err)
	}
	r, err := e.Resume(ctx, ResumeRequest{Session: session, Budget: handoff.DefaultResumeBudget})
	if err != nil || !strings.Contains(r.Markdown, "keep the zebra plan") {
		t.Errorf("resume does not read the pending handoff (%v):\n%.300s", err, r.Markdown)
	}
	if n, err := e.flushPending(ctx, st); n != 1 || err != nil {
		t.Errorf("flush stored %d (%v), want 1", n, err)
	}
	if hs, _ := st.Handoffs(ctx, session, 0); len(hs) != 1 || hs[0].Path != first.Path {
		t.Errorf("handoffs after the flush: %+v, want the first draft's", hs)
	}
	if _, err := os.Stat(second.Path); !os.IsNotExist(err) {
		t.Errorf("the second draft's file is left (%v)", err)
	}
	if left := pendingDrafts(st.Path(), ""); len(left) != 0 {
		t.Errorf("%d drafts left pending", len(left))
	}

	third := draft("c.md") // the next compaction's, not yet stored
	f, err := e.Forget(ctx, session, false, true)
	if err != nil {
		t.Fatal(err)
	}
	if left := pendingDrafts(st.Path(), session); len(left) != 0 || f.Handoffs != 2 {
		t.Errorf("forget left %d drafts, counted %d handoffs; want none left and 2 counted", len(left), f.Handoffs)
	}
	for _, p := range []string{first.Path, third.Path} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("forget --files left %s (%v)", p, err)
		}
	}
}

// TestPendingHandoffWhoseFileWasNotWritten: a PreCompact run cut off after
// it kept its draft and before it wrote the Markdown file (its budget spent
// on a busy machine) loses nothing: the flush writes the file and stores
// the row. A file another wrote at the name meanwhile is left as it is, the
// draft's going to a free name beside it.
func TestPendingHandoffWhoseFileWasNotWritten(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st, sess, msgs := sampleSession(t)
	session := sess.ID
	cut := func(note string) handoffDraft {
		req := HandoffRequest{Trigger: "auto", Budget: handoff.DefaultBudget, Source: "hook", Note: note}
		d, err := e.draftHandoff(ctx, st, sess, msgs, req)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Named {
			t.Fatalf("a hook's draft has a name ledger chose, got %+v", d.Path)
		}
		if _, err := deferHandoff(st, &d); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(d.Path); err != nil { // the file the cut run never wrote
			t.Fatal(err)
		}
		return d
	}
	first := cut("keep the zebra plan")
	if n, err := e.flushPending(ctx, st); n != 1 || err != nil {
		t.Fatalf("flush stored %d (%v), want 1", n, err)
	}
	hs, _ := st.Handoffs(ctx, session, 0)
	if b, err := os.ReadFile(first.Path); err != nil || len(hs) != 1 || hs[0].Path != first.Path || !strings.Contains(string(b), "keep the zebra plan") {
		t.Fatalf("after the flush: handoffs %+v, file %s: %.80q (%v); want the draft's row and its file", hs, first.Path, b, err)
	}

	second := cut("then the okapi plan")
	other := []byte("# notes someone else wrote here\n")
	if err := os.WriteFile(second.Path, other, 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := e.flushPending(ctx, st); n != 1 || err != nil {
		t.Fatalf("flush stored %d (%v), want 1", n, err)
	}
	if b, _ := os.ReadFile(second.Path); string(b) != string(other) {
		t.Errorf("the flush wrote over another's file at %s: %.80q", second.Path, b)
	}
	hs, _ = st.Handoffs(ctx, session, 0)
	var stored string
	for _, h := range hs {
		if h.Path != first.Path {
			stored = h.Path
		}
	}
	if b, err := os.ReadFile(stored); err != nil || stored == second.Path || !strings.Contains(string(b), "then the okapi plan") {
		t.Errorf("the second draft stored at %q (%v), want a free name beside %s with its text", stored, err, second.Path)
	}
	if left := pendingDrafts(st.Path(), ""); len(left) != 0 {
		t.Errorf("%d drafts left pending", len(left))
	}
}

// sampleSession is an engine on a ledger of the sample transcripts, and
// the sample's Claude Code session with its messages.
func sampleSession(t *testing.T) (*Engine, *store.Store, store.Session, []compact.Message) {
	t.Helper()
	ctx := context.Background()
	e, st := openEngine(t)
	if _, err := e.Ingest(ctx, []string{sampleDir(t)}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	sess, err := st.Session(ctx, "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57")
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := st.Messages(ctx, sess.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	return e, st, sess, msgs
}
