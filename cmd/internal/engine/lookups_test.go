package engine

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/transcript"
)

// TestMessageInContext: a search hit's message with its neighbours, in
// conversation order, the hit marked; an id the ledger does not hold is
// not found. CountSessions counts a project's sessions, below it too.
func TestMessageInContext(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _, home := hookEngine(t)
	ingestSample(t, e, home)
	res, err := e.Search(ctx, SearchRequest{Text: "clock", Session: sampleID, SearchOptions: store.SearchOptions{Limit: 1}})
	if err != nil || len(res.Hits) == 0 {
		t.Fatalf("search: %+v, %v", res, err)
	}
	hit := res.Hits[0]
	c, err := e.MessageInContext(ctx, hit.ID, 2)
	if err != nil {
		t.Fatal(err)
	}
	if c.Session != sampleID || c.ID != hit.ID || len(c.Messages) < 2 || len(c.Messages) > 5 {
		t.Fatalf("in context: session %s, id %d, %d messages; want the hit's session, its id, 2 to 5 messages", c.Session, c.ID, len(c.Messages))
	}
	hits := 0
	for i, m := range c.Messages {
		if i > 0 && m.Seq <= c.Messages[i-1].Seq {
			t.Errorf("messages out of order: seq %d after %d", m.Seq, c.Messages[i-1].Seq)
		}
		if m.Hit {
			hits++
			if m.Seq != c.Seq || !strings.Contains(strings.ToLower(m.Text), "clock") {
				t.Errorf("the hit: seq %d (want %d), %.100q", m.Seq, c.Seq, m.Text)
			}
		}
		if m.Seq < c.Seq-2 || m.Seq > c.Seq+2 {
			t.Errorf("seq %d is more than 2 from the hit's %d", m.Seq, c.Seq)
		}
	}
	if hits != 1 {
		t.Errorf("%d messages marked as the hit, want 1", hits)
	}
	if _, err := e.MessageInContext(ctx, 1<<40, 2); !notFound(err) {
		t.Errorf("an id not held: %v, want not found", err)
	}
	sess, err := e.Opened().Session(ctx, sampleID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		project string
		want    int
	}{{"", 1}, {sess.Project, 1}, {filepath.Dir(sess.Project), 1}, {filepath.Join(sess.Project, "elsewhere"), 0}} {
		if n, err := e.CountSessions(ctx, tc.project); n != tc.want || err != nil {
			t.Errorf("CountSessions(%q) = %d, %v; want %d", tc.project, n, err, tc.want)
		}
	}
}

// TestHookLogBySession: the receipts of one session by a prefix of its id;
// an id the ledger does not hold (a hook ran before any ingest) taken as
// it is; every receipt, newest first, without one.
func TestHookLogBySession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, s, home := hookEngine(t)
	ingestSample(t, e, home)
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for i, id := range []string{sampleID, "not-ingested-yet", sampleID} {
		r := store.HookReceipt{SessionID: id, Event: "Stop", At: at.Add(time.Duration(i) * time.Minute), Outcome: store.OutcomeOK}
		if err := s.AddHookReceipt(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		id   string
		want int
	}{{sampleID[:8], 2}, {"not-ingested-yet", 1}, {"", 3}, {"nothing-here", 0}} {
		got, err := e.HookLog(ctx, store.ReceiptFilter{SessionID: tc.id})
		if err != nil || len(got) != tc.want {
			t.Errorf("HookLog(%q) = %d receipts, %v; want %d", tc.id, len(got), err, tc.want)
			continue
		}
		for i := 1; i < len(got); i++ {
			if got[i].At.After(got[i-1].At) {
				t.Errorf("HookLog(%q): not newest first", tc.id)
			}
		}
	}
}

// TestHandoffKeptOutOfGit: a handoff the user asks for inside a git
// checkout is kept out of git status through .git/info/exclude, once: the
// .ledger folder for a file under it, else the file itself; a file
// outside any checkout adds nothing.
func TestHandoffKeptOutOfGit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _, home := hookEngine(t)
	ingestSample(t, e, home)
	repo := filepath.Join(t.TempDir(), "repo")
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	exclude := filepath.Join(repo, ".git", "info", "exclude")
	os.Remove(exclude) // a fresh one: made by the first handoff
	write := func(out string) Handoff {
		t.Helper()
		h, err := e.WriteHandoff(ctx, sampleID, HandoffRequest{Trigger: "manual", Source: "cli", Out: out})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	h := write(filepath.Join(repo, ".ledger", "handoffs", "a.md"))
	if h.Excluded != "/.ledger/" || h.ExcludeFile != exclude {
		t.Errorf("first handoff in .ledger: excluded %q in %q; want /.ledger/ in %s", h.Excluded, h.ExcludeFile, exclude)
	}
	if h := write(filepath.Join(repo, ".ledger", "handoffs", "b.md")); h.Excluded != "" {
		t.Errorf("second handoff in .ledger: excluded %q again", h.Excluded)
	}
	if h := write(filepath.Join(repo, "notes", "handoff.md")); h.Excluded != "/notes/handoff.md" {
		t.Errorf("handoff elsewhere in the checkout: excluded %q, want the file", h.Excluded)
	}
	if h := write(filepath.Join(t.TempDir(), "handoff.md")); h.Excluded != "" || h.ExcludeFile != "" {
		t.Errorf("handoff outside a checkout: excluded %q in %q", h.Excluded, h.ExcludeFile)
	}
	b, err := os.ReadFile(exclude)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); strings.Count(got, "/.ledger/\n") != 1 || strings.Count(got, "/notes/handoff.md\n") != 1 {
		t.Errorf("%s:\n%s\nwant each pattern once", exclude, got)
	}
	st, _ := exec.Command("git", "-C", repo, "status", "--porcelain").Output()
	if len(strings.TrimSpace(string(st))) != 0 {
		t.Errorf("git status shows the handoffs:\n%s", st)
	}
}

// TestIngestProgress: an ingest with a progress bar is told what it will
// read, by the cursors (all of a new file, none of one read, what was
// appended), and told of each chunk up to that.
func TestIngestProgress(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _, _ := hookEngine(t)
	dir := t.TempDir()
	path, _ := sampleTranscript(t, dir)
	other := filepath.Join(dir, "not-there.jsonl")
	run := func() (total, read int64) {
		t.Helper()
		o := IngestOptions{Progress: func(n int64) func(int64) {
			total = n
			return func(k int64) { read += k }
		}}
		if _, err := e.Ingest(ctx, []string{dir}, o); err != nil {
			t.Fatal(err)
		}
		return total, read
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if total, read := run(); total != fi.Size() || read != total {
		t.Errorf("first ingest: total %d, read %d; want the file's %d", total, read, fi.Size())
	}
	if total, _ := run(); total != 0 {
		t.Errorf("ingest of nothing new: total %d, want 0", total)
	}
	line := `{"type":"user","sessionId":"` + sampleID + `","uuid":"u-progress","timestamp":"2026-03-02T09:30:00Z","cwd":"/home/dev/src/payments","message":{"role":"user","content":"one more"}}` + "\n"
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(line)
	f.Close()
	if total, read := run(); total != int64(len(line)) || read != total {
		t.Errorf("after an append: total %d, read %d; want the line's %d", total, read, len(line))
	}
	if n := pendingBytes([]string{other}, nil); n != 0 {
		t.Errorf("pendingBytes of a file not there = %d", n)
	}
}

// TestCopilotSessionEndFindsItsTranscript: Copilot CLI's sessionEnd names
// no transcript. Before the ledger read the session it has nothing to
// read, and says so; once it has, the hook reads the file the ledger
// recorded for that session (never a path made from the id).
func TestCopilotSessionEndFindsItsTranscript(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, s, home := hookEngine(t)
	e.hookScale = 60
	const session = "66fcbb38-f834-48de-bcfa-712cc7192b3c"
	src := filepath.Join("..", "..", "..", "testdata", "agents", "copilot-1.0.102", "session-state", session)
	dir := filepath.Join(home, ".copilot", "session-state", session)
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	input := `{"sessionId":"` + session + `","timestamp":1795678436979,"cwd":"/tmp/ledger-fixtures/copilot/proj","reason":"complete"}`
	o := HookOptions{Agent: "copilot", Event: "sessionEnd", StateDir: filepath.Join(home, "state")}
	run := e.RunHook(ctx, strings.NewReader(input), o)
	if run.Receipt.Outcome != store.OutcomeNothing || !strings.Contains(run.Receipt.Detail, "no transcript known") {
		t.Fatalf("sessionEnd before any ingest: %+v", run.Receipt)
	}
	events := filepath.Join(dir, "events.jsonl")
	if _, err := e.Ingest(ctx, []string{events}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	run = e.RunHook(ctx, strings.NewReader(input), o)
	if !strings.Contains(run.Receipt.Detail, "nothing new in the transcript") {
		t.Fatalf("sessionEnd once the session is held: %+v (warning %q), want its transcript read", run.Receipt, run.Warning)
	}
	if _, err := s.Session(ctx, session); err != nil {
		t.Fatal(err)
	}
}

// TestIngestWhatIsNotATranscript: a file in a folder that is no agent's
// transcript is listed and passed over; the same file named is an error
// (the files read before it are kept); bad lines are skipped, the first
// few of each file listed and the rest counted; a cancelled ingest stops.
func TestIngestWhatIsNotATranscript(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _, _ := hookEngine(t)
	dir := t.TempDir()
	_, lines := sampleTranscript(t, dir)
	notes := filepath.Join(dir, "notes.jsonl")
	if err := os.WriteFile(notes, []byte("{\"hello\":\"world\"}\n{\"hello\":\"again\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad", sampleID[:8]+"-bad.jsonl")
	var b []byte
	b = append(b, lines[0]...)
	for range transcript.MaxSkipsListed + 3 {
		b = append(b, "{not json\n"...)
	}
	for _, l := range lines[1:] {
		b = append(b, l...)
	}
	copyBytes(t, bad, b)

	sum, err := e.Ingest(ctx, []string{dir}, IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sum.Unrecognized, []string{notes}) || sum.Sessions == 0 {
		t.Errorf("folder: unrecognized %v, %d sessions; want notes.jsonl passed over and the sample read", sum.Unrecognized, sum.Sessions)
	}
	if sum.SkippedLines != transcript.MaxSkipsListed+3 || len(sum.Skips) != transcript.MaxSkipsListed ||
		sum.SkipsNotListed != 3 || sum.NotListed(bad) != 3 {
		t.Errorf("bad lines: %d skipped, %d listed, %d not listed (%d of %s); want %d, %d, 3",
			sum.SkippedLines, len(sum.Skips), sum.SkipsNotListed, sum.NotListed(bad), bad, transcript.MaxSkipsListed+3, transcript.MaxSkipsListed)
	}
	if n := sum.Unchanged(); n != 0 {
		t.Errorf("first ingest: %d unchanged files", n)
	}
	if _, err := e.Ingest(ctx, []string{notes}, IngestOptions{}); err == nil || !strings.Contains(err.Error(), "not a transcript of an agent ledger reads") {
		t.Errorf("a named file that is no transcript: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.Ingest(cancelled, []string{dir}, IngestOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled ingest: %v, want context.Canceled", err)
	}
}

// copyBytes writes b to dst, making its folder.
func copyBytes(t *testing.T, dst string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestAgentHookEvents: the hooks ledger installs for each agent that
// takes hook commands, each under the agent's own event name and mapped
// to an event ledger has a budget for; an agent that takes none has none.
func TestAgentHookEvents(t *testing.T) {
	t.Parallel()
	for _, agent := range []string{"", "claude", "codex", "gemini", "qwen", "copilot"} {
		evs, ok := AgentHookEvents(agent)
		if !ok || len(evs) < 4 {
			t.Errorf("%q: %d events, ok %v", agent, len(evs), ok)
		}
		for _, ev := range evs {
			if _, handled := HookBudget(ev.Event); !handled || ev.Timeout <= 0 || hookEventOf(agent, ev.Name) != ev.Event {
				t.Errorf("%q %s: event %q, timeout %d, maps to %q", agent, ev.Name, ev.Event, ev.Timeout, hookEventOf(agent, ev.Name))
			}
		}
	}
	if evs, ok := AgentHookEvents("pi"); ok || evs != nil {
		t.Errorf("pi (a plugin agent): %v, %v; want none", evs, ok)
	}
	for _, tc := range [][3]string{{"gemini", "AfterTool", "PostToolUse"}, {"copilot", "postToolUse", "PostToolUse"}, {"claude", "PostToolUse", "PostToolUse"}} {
		if got := hookEventOf(tc[0], tc[1]); got != tc[2] {
			t.Errorf("%s's %s maps to %q, want %q", tc[0], tc[1], got, tc[2])
		}
	}
}

// TestRestorePathCodex: a Codex session goes back where Codex looks for
// it: its day's folder under sessions, named by its start and its id.
func TestRestorePathCodex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, s, _ := hookEngine(t)
	if _, err := e.Ingest(ctx, []string{filepath.Join(sampleDir(t), "codex")}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	const id = "0199f3a2-7d4e-7c10-b2a9-5e8f1d3c6a20"
	sess, err := s.Session(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	codexHome := filepath.Join(t.TempDir(), ".codex")
	p := RestorePath(sess, "/unused/claude", codexHome)
	day := filepath.Join(codexHome, "sessions") + string(filepath.Separator)
	if !strings.HasPrefix(p, day) || !strings.HasSuffix(p, "-"+id+".jsonl") || !strings.Contains(filepath.Base(p), "rollout-") {
		t.Fatalf("RestorePath = %s, want %s<YYYY>/<MM>/<DD>/rollout-<start>-%s.jsonl", p, day, id)
	}
	if strings.Count(strings.TrimPrefix(p, day), string(filepath.Separator)) != 3 {
		t.Errorf("RestorePath = %s: want the year, month and day folders", p)
	}
	x, err := e.Export(ctx, ExportRequest{Session: id[:8], Format: "jsonl", Restore: true, CodexHome: codexHome}, nil)
	if err != nil || x.Path != p {
		t.Fatalf("export --restore: %+v, %v; want %s", x, err, p)
	}
	if _, err := os.Stat(p); err != nil {
		t.Error(err)
	}
}
