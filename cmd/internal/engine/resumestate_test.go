package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/transcript"
)

// docJSON is a handoff document as JSON: everything resume renders from.
func docJSON(t *testing.T, d handoff.Doc) string {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkResumeState checks that a session's stored resume state is current
// and is what extracting from its messages now gives.
func checkResumeState(t *testing.T, st *store.Store, id string) handoff.Doc {
	t.Helper()
	ctx := context.Background()
	sess, err := st.Session(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	key, err := st.ResumeKey(ctx, sess)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := st.LoadResumeState(ctx, id)
	if err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	if rs.Key != key {
		t.Fatalf("%s: stored resume state of key %s, the session's is %s", id, rs.Key, key)
	}
	want, err := extractForResume(ctx, st, sess)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := docJSON(t, rs.Doc), docJSON(t, want); got != want {
		t.Fatalf("%s: stored resume state\n%s\nextracted now\n%s", id, got, want)
	}
	return rs.Doc
}

// writeGenerated writes a generated Claude Code session to path.
func writeGenerated(t *testing.T, path string, o transcript.GenOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	o.Shape = transcript.GenReal
	if err := transcript.Generate(&buf, o); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestResumeStateAfterIngest ingests sessions of every kind (generated ones,
// one longer than what resume reads, one written in two files, the real
// corpus's with their subagent files) and checks that the latest session
// of each project, and those active when it began, have a stored resume
// state equal to what extracting now gives, and that every other session
// gets one at its first resume.
func TestResumeStateAfterIngest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st := openEngine(t)
	dir := t.TempDir()
	// Five sessions of one project, so four are superseded; the third is
	// longer than the resumeMessages resume reads, and each has
	// compactions.
	for i, n := range []int{120, 200, resumeMessages + 300, 160, 140} {
		writeGenerated(t, filepath.Join(dir, "p", fmt.Sprintf("s%d.jsonl", i)), transcript.GenOptions{Seed: uint64(i + 1), Messages: n,
			CompactEvery: 50, Project: "/home/dev/src/p"})
	}
	// One session in two files, as a subagent's lines are.
	shared := "11111111-2222-4333-8444-555555555555"
	writeGenerated(t, filepath.Join(dir, "p", "t1.jsonl"), transcript.GenOptions{Seed: 40, SessionID: shared, Messages: 100})
	writeGenerated(t, filepath.Join(dir, "p", "t2.jsonl"), transcript.GenOptions{Seed: 41, SessionID: shared, Messages: 100})
	paths := []string{dir}
	if c := os.Getenv("LEDGER_CORPUS"); c != "" {
		for _, agent := range []string{"claude", "codex"} {
			paths = append(paths, allButTheLargest(t, filepath.Join(c, agent))...)
		}
	}
	sum, err := e.Ingest(ctx, paths, IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := st.Sessions(ctx, store.SessionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) < 6 {
		t.Fatalf("%d sessions after ingesting %d files", len(sessions), sum.Files)
	}
	lazy := 0
	var seen []string // the projects of the sessions before (Sessions lists the latest first)
	latest := func(project string) bool {
		for _, p := range seen {
			if p == project || strings.HasPrefix(p, project+"/") {
				return false
			}
		}
		return true
	}
	for _, s := range sessions {
		if s.Messages == 0 {
			continue
		}
		old, err := superseded(ctx, st, s)
		if err != nil {
			t.Fatal(err)
		}
		if old && latest(s.Project) {
			t.Fatalf("%s: the latest session of %s, taken as superseded", s.ID, s.Project)
		}
		seen = append(seen, s.Project)
		key, err := st.ResumeKey(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if rs, err := st.LoadResumeState(ctx, s.ID); err != nil || rs.Key != key {
			if !old {
				t.Fatalf("%s: not superseded, and no current resume state after the ingest (%v)", s.ID, err)
			}
			// Left to its first resume, which stores it.
			lazy++
			if _, err := e.Resume(ctx, ResumeRequest{Session: s.ID, Budget: 2000}); err != nil {
				t.Fatal(err)
			}
		}
		checkResumeState(t, st, s.ID)
	}
	if lazy == 0 {
		t.Fatal("the ingest stored the resume state of every session, superseded ones too")
	}
}

// allButTheLargest lists the files of dir but its largest. Of the
// corpus's Claude Code sessions that leaves one with its subagent's file
// and one subagent's file whose session is not there; the largest of each
// agent is another of a kind already ingested, and half the test's time.
func allButTheLargest(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	largest, size := -1, int64(-1)
	for _, ent := range ents {
		fi, err := ent.Info()
		if err != nil {
			t.Fatal(err)
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		if fi.Size() > size {
			largest, size = len(paths), fi.Size()
		}
		paths = append(paths, filepath.Join(dir, ent.Name()))
	}
	if largest >= 0 {
		paths = append(paths[:largest], paths[largest+1:]...)
	}
	return paths
}

// TestResumeStateFollowsTheSession checks that new messages and notes make
// the stored state stale (resume then extracts, and says the same as with
// a current state), and that the Stop hook brings it up to date.
func TestResumeStateFollowsTheSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st := openEngine(t)
	dir := t.TempDir()
	id := "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57"
	path := filepath.Join(dir, "-home-dev-src-payments", id+".jsonl")
	full := writeGenerated(t, path, transcript.GenOptions{Seed: 7, SessionID: id, Messages: 300, CompactEvery: 80,
		Project: "/home/dev/src/payments"})
	head := full[:bytes.LastIndexByte(full[:len(full)*2/3], '\n')+1]
	if err := os.WriteFile(path, head, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Ingest(ctx, []string{dir}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	checkResumeState(t, st, id)

	resume := func() string {
		t.Helper()
		r, err := e.Resume(ctx, ResumeRequest{Session: id, Budget: 2000})
		if err != nil {
			t.Fatal(err)
		}
		return r.Markdown
	}
	// The resume context from a stored state is the one extracting now
	// gives.
	withState := resume()
	db := rawDB(t, st.Path())
	if _, err := db.Exec(`DELETE FROM resume_states`); err != nil {
		t.Fatal(err)
	}
	if extracted := resume(); extracted != withState {
		t.Fatalf("resume from the stored state:\n%s\nextracted now:\n%s", withState, extracted)
	}
	if err := e.RefreshResumeState(ctx, id); err != nil {
		t.Fatal(err)
	}
	checkResumeState(t, st, id)

	// New messages: the state is stale until the Stop hook.
	if err := os.WriteFile(path, full, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := e.IngestFile(ctx, path, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	sess, _ := st.Session(ctx, id)
	key, _ := st.ResumeKey(ctx, sess)
	if rs, err := st.LoadResumeState(ctx, id); err != nil || rs.Key == key {
		t.Fatalf("after new messages the stored state is current (%v)", err)
	}
	stale := resume()
	runHook(t, e, HookInput{Event: "Stop", SessionID: id, TranscriptPath: path})
	checkResumeState(t, st, id)
	if fresh := resume(); fresh != stale {
		t.Fatalf("resume extracting:\n%s\nresume from the state the Stop hook stored:\n%s", stale, fresh)
	}

	// A note: the state is stale, resume carries the note, and a refresh
	// stores it.
	if _, err := e.Note(ctx, NoteRequest{Session: id, Kind: handoff.NoteDecision, Text: "Keep the retry budget at three attempts"}); err != nil {
		t.Fatal(err)
	}
	sess, _ = st.Session(ctx, id)
	d, _, err := e.resumeDoc(ctx, st, sess)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Notes) != 1 || !strings.Contains(strings.Join(d.Decisions, "\n"), "Keep the retry budget at three attempts") {
		t.Fatalf("resume after a note: notes %+v, decisions %q", d.Notes, d.Decisions)
	}
	runHook(t, e, HookInput{Event: "SessionEnd", SessionID: id, TranscriptPath: path})
	d = checkResumeState(t, st, id)
	if len(d.Notes) != 1 || d.Notes[0].Text != "Keep the retry budget at three attempts" {
		t.Fatalf("stored state's notes = %+v", d.Notes)
	}
}

// runHook handles a hook's event as RunHook does, but with no budget:
// the event's work is under test here, not its deadlines (a -race build
// runs the extraction past a Stop hook's second; the budgets have tests
// of their own).
func runHook(t *testing.T, e *Engine, in HookInput) {
	t.Helper()
	far := time.Now().Add(time.Hour)
	r := e.hook(context.Background(), in, HookOptions{}, hookClocks{lockBy: far, readBy: far, handoffLockBy: far})
	if r.err != nil || r.warn != nil || r.outcome == store.OutcomeDeferred {
		t.Fatalf("%s hook: %v %v %s: %s", in.Event, r.err, r.warn, r.outcome, r.detail)
	}
}
