package engine

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/store"
)

// agentFixture is a file of testdata/agents.
func agentFixture(parts ...string) string {
	return filepath.Join(append([]string{"..", "..", "..", "testdata", "agents"}, parts...)...)
}

// copyAgentDB copies a fixture database to dir/name, as the agent's own.
func copyAgentDB(t *testing.T, src, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// agentWriter opens an agent's database as the agent does (WAL).
func agentWriter(t *testing.T, path string) *sql.DB {
	t.Helper()
	u := url.URL{Scheme: "file", Opaque: (&url.URL{Path: path}).EscapedPath()}
	db, err := sql.Open("sqlite", u.String()+"?_pragma=busy_timeout(0)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// TestIngestOpenCodeDB ingests OpenCode's and Kilo's real databases: the
// session with its messages, tool calls, usage, model, project and the
// compaction with its summary; a second ingest reads nothing (the database
// is not even opened); rows the agent adds are read once, by a whole
// ingest or by the hook's read of that session.
func TestIngestOpenCodeDB(t *testing.T) {
	t.Parallel()
	for _, fx := range []struct{ name, file, db, session, project string }{
		{"opencode", agentFixture("opencode-1.18.33", "opencode.db"), "opencode.db", "ses_de942ed70ffeMnYg4uqeokH7Or", "/work/agents-cache/proj-oc"},
		{"kilo", agentFixture("kilo-7.7.7", "kilo.db"), "kilo.db", "ses_de93d91f3ffet4VlhKFvCobcPA", "/work/agents-cache/proj-kilo"},
	} {
		t.Run(fx.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e, st := openEngine(t)
			dir := filepath.Join(t.TempDir(), "data", fx.name)
			path := copyAgentDB(t, fx.file, dir, fx.db)
			sum, err := e.Ingest(ctx, []string{filepath.Dir(dir)}, IngestOptions{})
			if err != nil {
				t.Fatal(err)
			}
			wantMsgs := map[string]int{"opencode": 16, "kilo": 17}[fx.name]
			if sum.Files != 1 || sum.Sessions != 1 || sum.Messages != wantMsgs || sum.Compactions != 1 || sum.SkippedLines != 0 || len(sum.Failed) != 0 {
				t.Fatalf("summary %+v", sum)
			}
			sess, err := st.Session(ctx, fx.session)
			if err != nil {
				t.Fatal(err)
			}
			if sess.Source != fx.name || sess.Project != fx.project || sess.Title != "Fake title" || sess.Model != "m" ||
				sess.ToolCalls != 4 || sess.Compactions != 1 || sess.ContextTokens != 1209 && sess.ContextTokens != 1208 {
				t.Errorf("session %+v", sess)
			}
			cs, err := st.Compactions(ctx, store.CompactionFilter{SessionID: fx.session})
			if err != nil || len(cs) != 1 {
				t.Fatalf("compactions %+v %v", cs, err)
			}
			if c := cs[0]; c.Trigger != "auto" || !strings.HasPrefix(c.Summary, "## Goal\nWrite notes files") ||
				orZero(c.PreTokens) != 15500 || c.Source != "transcript" || c.ToolCalls != 2 {
				t.Errorf("compaction %+v", c)
			}
			again, err := e.Ingest(ctx, []string{path}, IngestOptions{})
			if err != nil || again.Files != 0 || again.Messages != 0 || again.Unchanged() != 1 {
				t.Fatalf("second ingest %+v %v", again, err)
			}

			// The agent goes on: a new prompt and a completed reply.
			addOpenCodeTurn(t, path, fx.session)
			// The hook's read of the session (the database path and the session id).
			fs, err := e.IngestFile(ctx, path, IngestOptions{Session: fx.session})
			if err != nil || !fs.Read || fs.Counts.Messages != 2 || fs.Session != fx.session {
				t.Fatalf("hook read %+v %v", fs, err)
			}
			// The whole ingest after it finds the session read already.
			third, err := e.Ingest(ctx, []string{path}, IngestOptions{})
			if err != nil || third.Messages != 0 {
				t.Fatalf("third ingest %+v %v", third, err)
			}
			if sess, _ = st.Session(ctx, fx.session); sess.ContextTokens != 2000 || sess.Messages != int64(wantMsgs+2) {
				t.Errorf("session after the new rows %+v", sess)
			}
			msgs, err := st.Messages(ctx, fx.session, 0)
			if err != nil {
				t.Fatal(err)
			}
			if last := msgs[len(msgs)-1]; last.Text() != "done too" || last.ParentUUID != "prt_zz1" {
				t.Errorf("last message %+v", last)
			}
		})
	}
}

// TestHandoffOfPluginAgents: a handoff of an OpenCode, Kilo or Pi session
// names the files its write tool wrote (OpenCode's {filePath}, Pi's
// relative {path}) and its task.
func TestHandoffOfPluginAgents(t *testing.T) {
	t.Parallel()
	for _, fx := range []struct{ name, path, session, want string }{
		{"opencode", agentFixture("opencode-1.18.33", "opencode.db"), "ses_de942ed70ffeMnYg4uqeokH7Or", "/work/agents-cache/proj-oc/notes-2.txt"},
		{"pi", agentFixture("pi-0.73.1"), "01a216c2-8921-7397-bbc1-38fa2acd5419", "/work/agents-cache/proj-pi/notes-1.txt"},
	} {
		t.Run(fx.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e, _ := openEngine(t)
			path := fx.path
			if fx.name == "opencode" {
				path = copyAgentDB(t, fx.path, t.TempDir(), "opencode.db")
			}
			if _, err := e.Ingest(ctx, []string{path}, IngestOptions{}); err != nil {
				t.Fatal(err)
			}
			h, err := e.WriteHandoff(ctx, fx.session, HandoffRequest{Trigger: "manual", Budget: 2000, Out: filepath.Join(t.TempDir(), "h.md"), Source: "cli"})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, f := range h.FilesModified {
				found = found || f == fx.want
			}
			if !found || !strings.Contains(h.Task, "Write notes-1.txt with the word alpha") {
				t.Errorf("files modified %v, task %q", h.FilesModified, h.Task)
			}
		})
	}
}

// TestUnreadDBMessages: what a PreCompact's handoff adds to the ledger's
// messages when the ingest could not write: the session's messages in the
// agent's database past its cursor, and only those.
func TestUnreadDBMessages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st := openEngine(t)
	path := copyAgentDB(t, agentFixture("opencode-1.18.33", "opencode.db"), t.TempDir(), "opencode.db")
	const sid = "ses_de942ed70ffeMnYg4uqeokH7Or"
	all, info, err := unreadMessages(ctx, st, path, sid)
	if err != nil || len(all) != 16 || info.project != "/work/agents-cache/proj-oc" {
		t.Fatalf("before any ingest: %d messages, %+v, %v", len(all), info, err)
	}
	if _, err := e.Ingest(ctx, []string{path}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	if none, _, err := unreadMessages(ctx, st, path, sid); err != nil || len(none) != 0 {
		t.Fatalf("after the ingest: %d messages, %v", len(none), err)
	}
	w := agentWriter(t, path)
	for _, q := range []string{
		`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_u1', '` + sid + `', 1795679999000, 1795679999000, '{"role":"user","time":{"created":1795679999000}}')`,
		`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_u1', 'msg_u1', '` + sid + `', 1795679999001, 1795679999001, '{"type":"text","text":"unread prompt"}')`,
	} {
		if _, err := w.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	tail, _, err := unreadMessages(ctx, st, path, sid)
	if err != nil || len(tail) != 1 || tail[0].Text() != "unread prompt" {
		t.Fatalf("the new prompt: %+v, %v", tail, err)
	}
	if n, err := st.Messages(ctx, sid, 0); err != nil || len(n) != 16 {
		t.Errorf("reading the tail wrote to the ledger: %d messages, %v", len(n), err)
	}
}

// addOpenCodeTurn adds, as OpenCode does, a prompt and its completed
// reply to session in the database at path.
func addOpenCodeTurn(t *testing.T, path, session string) {
	t.Helper()
	w := agentWriter(t, path)
	for _, q := range []string{
		`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_zz1', '` + session + `', 1795679999000, 1795679999000, '{"role":"user","time":{"created":1795679999000}}')`,
		`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_zz1', 'msg_zz1', '` + session + `', 1795679999001, 1795679999001, '{"type":"text","text":"one more thing"}')`,
		`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_zz2', '` + session + `', 1795679999100, 1795679999200, '{"role":"assistant","modelID":"m","time":{"created":1795679999100,"completed":1795679999200},"tokens":{"input":2000,"output":10,"reasoning":0,"cache":{"read":0,"write":0}}}')`,
		`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_zz2', 'msg_zz2', '` + session + `', 1795679999101, 1795679999101, '{"type":"text","text":"done too"}')`,
		`UPDATE event_sequence SET seq = seq + 1 WHERE aggregate_id = '` + session + `'`,
	} {
		if _, err := w.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

// TestIngestSessionOfADatabase: `ledger compact` of an OpenCode session
// first reads what the agent added to that session in its database (the
// session's cursor row names the database and the session); a transcript
// file whose path holds a '#' is read as the file it is.
func TestIngestSessionOfADatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const session = "ses_de942ed70ffeMnYg4uqeokH7Or"
	e, st := openEngine(t)
	dir := t.TempDir()
	path := copyAgentDB(t, agentFixture("opencode-1.18.33", "opencode.db"), filepath.Join(dir, "opencode"), "opencode.db")
	if _, err := e.Ingest(ctx, []string{path}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	addOpenCodeTurn(t, path, session)
	h, err := e.Compact(ctx, session, HandoffRequest{Trigger: "manual", Budget: 2000, Source: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := st.Messages(ctx, session, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n, last := len(msgs), msgs[len(msgs)-1]; n != 18 || last.Text() != "done too" {
		t.Errorf("after compact: %d messages, the last %q; want 18, the agent's new reply last", n, last.Text())
	}
	if !strings.Contains(h.Markdown, "one more thing") {
		t.Errorf("the handoff does not hold the new prompt:\n%s", h.Markdown)
	}

	// A Claude Code transcript in a folder named with a '#'.
	tr, lines := sampleTranscript(t, t.TempDir())
	hashed := filepath.Join(dir, "notes #2", filepath.Base(tr))
	putFile(t, hashed, string(bytes.Join(lines[:10], nil)))
	if _, err := e.Ingest(ctx, []string{hashed}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	putFile(t, hashed, string(bytes.Join(lines, nil)))
	if err := e.IngestSession(ctx, sampleID); err != nil {
		t.Fatalf("ingest of a session read from %s: %v", hashed, err)
	}
	if sess, err := st.Session(ctx, sampleID); err != nil || sess.Messages != 28 {
		t.Errorf("session read from a path with '#': %+v, %v; want its 28 messages", sess, err)
	}
}

// TestPausedProjectOfADatabase: the sessions of a paused project held in
// an OpenCode database are read past and not stored, as a transcript
// file's are.
func TestPausedProjectOfADatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st := openEngine(t)
	if _, err := e.Pause(ctx, "/work/agents-cache/proj-oc"); err != nil {
		t.Fatal(err)
	}
	path := copyAgentDB(t, agentFixture("opencode-1.18.33", "opencode.db"), filepath.Join(t.TempDir(), "opencode"), "opencode.db")
	sum, err := e.Ingest(ctx, []string{path}, IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Messages != 0 || sum.Compactions != 0 || len(sum.Failed) != 0 {
		t.Errorf("ingest of a paused project's database: %+v", sum)
	}
	if ss, err := st.Sessions(ctx, store.SessionFilter{}); err != nil || len(ss) != 0 {
		t.Errorf("sessions: %+v, %v; want none", ss, err)
	}
}

// TestIngestDatabaseThatIsNot: a file named as an agent's database that
// is not one is a warning in a folder (the transcripts beside it are
// read) and an error naming it when named; a path that is not there
// fails before anything is read (the summary has not Started).
func TestIngestDatabaseThatIsNot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, st := openEngine(t)
	dir := t.TempDir()
	fake := filepath.Join(dir, "opencode.db")
	putFile(t, fake, "my notes on the opencode database\n")
	sampleTranscript(t, dir)

	sum, err := e.Ingest(ctx, []string{dir}, IngestOptions{})
	if err != nil {
		t.Fatalf("ingest of the folder: %v", err)
	}
	if len(sum.Unrecognized) != 1 || sum.Unrecognized[0] != fake || sum.Sessions != 1 {
		t.Errorf("ingest of the folder: %+v, want %s unrecognized and the transcript beside it read", sum, fake)
	}
	if _, err := st.Session(ctx, sampleID); err != nil {
		t.Errorf("the transcript beside it: %v", err)
	}
	sum, err = e.Ingest(ctx, []string{fake}, IngestOptions{})
	if err == nil || !strings.Contains(err.Error(), fake) || !sum.Started() {
		t.Errorf("ingest of %s named: %v (started %v), want an error naming it", fake, err, sum.Started())
	}
	if b, _ := os.ReadFile(fake); string(b) != "my notes on the opencode database\n" {
		t.Errorf("the file became %q", b)
	}
	sum, err = e.Ingest(ctx, []string{filepath.Join(dir, "none")}, IngestOptions{})
	if err == nil || sum.Started() {
		t.Errorf("ingest of a missing path: %v (started %v), want an error before reading", err, sum.Started())
	}
}

// TestHookReadOfALongDatabaseSessionProgresses: a hook reading an OpenCode
// session whose unread messages it cannot all read within its budget (a
// long session when ledger is installed, or a database grown by a
// runaway tool) commits what it read by the time it had, and the next
// read goes on from there, never from the start again; the session's
// change mark is stored only once all of it is read, so that no unread
// message is taken as read.
func TestHookReadOfALongDatabaseSessionProgresses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const session = "ses_de942ed70ffeMnYg4uqeokH7Or"
	e, st := openEngine(t)
	path := copyAgentDB(t, agentFixture("opencode-1.18.33", "opencode.db"), filepath.Join(t.TempDir(), "opencode"), "opencode.db")
	const turns = 300
	w := agentWriter(t, path)
	tx, err := w.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := range turns {
		at := 1795679000000 + int64(i)*10
		m, p := fmt.Sprintf("msg_zl%05d", i), fmt.Sprintf("prt_zl%05d", i)
		if _, err := tx.Exec(`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)`,
			m, session, at, at, fmt.Sprintf(`{"role":"assistant","modelID":"m","time":{"created":%d,"completed":%d}}`, at, at+1)); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)`,
			p, m, session, at, at, fmt.Sprintf(`{"type":"text","text":"step %d"}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tx.Exec(`UPDATE event_sequence SET seq = seq + 1 WHERE aggregate_id = ?`, session); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	const fixtureMsgs = 16
	count := func() int {
		t.Helper()
		msgs, err := st.Messages(ctx, session, 0)
		if err != nil && !notFound(err) {
			t.Fatal(err)
		}
		return len(msgs)
	}
	// Each read has its budget spent before it starts: the worst a hook
	// meets. It still reads some, and never all.
	last := 0
	for run := 1; run <= 3; run++ {
		fs, err := e.IngestFile(ctx, path, IngestOptions{StopAt: time.Now(), Session: session})
		if err != nil {
			t.Fatalf("read %d: %v", run, err)
		}
		n := count()
		if n <= last || n >= fixtureMsgs+turns || fs.Left == 0 {
			t.Fatalf("read %d with its budget spent: %d messages in the ledger (before it %d, in all %d), left %d: want some more and not all",
				run, n, last, fixtureMsgs+turns, fs.Left)
		}
		last = n
	}
	if _, err := e.IngestFile(ctx, path, IngestOptions{Session: session}); err != nil {
		t.Fatal(err)
	}
	msgs, err := st.Messages(ctx, session, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != fixtureMsgs+turns || msgs[len(msgs)-1].Text() != fmt.Sprintf("step %d", turns-1) {
		t.Fatalf("after reads to the end: %d messages, want %d, the last one's text %q", len(msgs), fixtureMsgs+turns, msgs[len(msgs)-1].Text())
	}
	// The messages the reads added form one chain, whichever read each
	// came in.
	for i := fixtureMsgs + 1; i < len(msgs); i++ {
		if msgs[i].ParentUUID != msgs[i-1].UUID {
			t.Fatalf("message %d (%s) follows %s, its parent is %s", i, msgs[i].UUID, msgs[i-1].UUID, msgs[i].ParentUUID)
		}
	}
	if fs, err := e.IngestFile(ctx, path, IngestOptions{Session: session}); err == nil && fs.Read {
		t.Errorf("a read after the whole session was read found more: %+v", fs)
	}
}
