package opencode

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/transcript"
)

// The fixtures are real databases (testdata/agents/*/README.md says how
// they were made): one session each, with a write tool call, an auto
// compaction and a resumed run.
const (
	openCodeFixture = "../../testdata/agents/opencode-1.18.33/opencode.db"
	kiloFixture     = "../../testdata/agents/kilo-7.7.7/kilo.db"
)

// copyFixture copies a fixture database into a temporary folder.
func copyFixture(t *testing.T, src string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// writer opens the database as the agent does: WAL, and here no busy
// timeout at all, so that any lock the reader held would fail it at once.
func writer(t *testing.T, path string) *sql.DB {
	t.Helper()
	u := url.URL{Scheme: "file", Opaque: (&url.URL{Path: path}).EscapedPath()}
	db, err := sql.Open("sqlite", u.String()+"?_pragma=busy_timeout(0)&_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`PRAGMA journal_mode = WAL`); err != nil {
		t.Fatal(err)
	}
	return db
}

// readAll reads every session of the database at path from cur (by id;
// missing: from the start), and returns the records and the new cursors.
func readAll(t *testing.T, d *DB, curs map[string]Cursor) ([]transcript.Record, map[string]Cursor, []string) {
	t.Helper()
	ctx := context.Background()
	sessions, err := d.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	parents := map[string]string{}
	for _, s := range sessions {
		parents[s.ID] = s.ParentID
	}
	next := map[string]Cursor{}
	var recs []transcript.Record
	var skips []string
	for _, s := range sessions {
		cur := curs[s.ID]
		if cur.Mark == s.Mark && cur.After != "" {
			next[s.ID] = cur
			continue
		}
		c, sk, err := d.Read(ctx, s, Root(s.ID, parents), cur, func(r transcript.Record) error {
			recs = append(recs, r)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// As the engine stores it.
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var back Cursor
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		next[s.ID] = back
		skips = append(skips, sk...)
	}
	return recs, next, skips
}

func openDB(t *testing.T, path string, f transcript.Format) *DB {
	t.Helper()
	d, err := Open(context.Background(), path, f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestFixtures(t *testing.T) {
	t.Parallel()
	for _, fx := range []struct {
		name, file       string
		format           transcript.Format
		session, project string
		messages         int
	}{
		{"opencode", openCodeFixture, transcript.FormatOpenCode, "ses_de942ed70ffeMnYg4uqeokH7Or", "/work/agents-cache/proj-oc", 16},
		{"kilo", kiloFixture, transcript.FormatKilo, "ses_de93d91f3ffet4VlhKFvCobcPA", "/work/agents-cache/proj-kilo", 17},
	} {
		t.Run(fx.name, func(t *testing.T) {
			t.Parallel()
			d := openDB(t, copyFixture(t, fx.file), fx.format)
			recs, curs, skips := readAll(t, d, nil)
			if len(skips) != 0 || len(curs) != 1 {
				t.Fatalf("skips %v, cursors %v", skips, curs)
			}
			var msgs []*compact.Message
			var bounds []*compact.Boundary
			var infos []*transcript.SessionInfo
			for _, r := range recs {
				if r.Message != nil {
					msgs = append(msgs, r.Message)
				}
				if r.Boundary != nil {
					bounds = append(bounds, r.Boundary)
				}
				if r.Session != nil {
					infos = append(infos, r.Session)
				}
			}
			if infos[0].ID != fx.session || infos[0].Project != fx.project || infos[0].Title != "Fake title" || infos[0].Time.IsZero() {
				t.Errorf("session %+v", infos[0])
			}
			if len(msgs) != fx.messages || len(bounds) != 1 {
				t.Fatalf("%d messages, %d boundaries", len(msgs), len(bounds))
			}
			b := bounds[0]
			if b.SessionID != fx.session || b.Trigger != "auto" || b.PreTokens != 15500 || b.LogicalParentUUID == "" || b.Time.IsZero() {
				t.Errorf("boundary %+v", b)
			}
			var calls, results, summaries, meta, usage int
			prev := ""
			for _, m := range msgs {
				if m.SessionID != fx.session || m.Time.IsZero() || m.ParentUUID == m.UUID {
					t.Errorf("message %+v", m)
				}
				if prev != "" && m.ParentUUID != prev && m.ParentUUID != b.UUID {
					t.Errorf("message %s: parent %s, want %s", m.UUID, m.ParentUUID, prev)
				}
				prev = m.UUID
				switch {
				case m.Kind() == compact.BlockToolUse:
					calls++
					blk := m.Blocks[0]
					if blk.ToolName != "write" || !strings.Contains(blk.Input, `"filePath"`) || m.Model != "m" || m.Usage == nil || m.ResponseID == "" {
						t.Errorf("tool call %+v", m)
					}
				case m.Kind() == compact.BlockToolResult:
					results++
					if m.Blocks[0].Text != "Wrote file successfully." || m.UUID != m.ParentUUID+"/result" {
						t.Errorf("tool result %+v", m)
					}
				case m.CompactSummary:
					summaries++
					if m.ParentUUID != b.UUID || !strings.HasPrefix(m.Text(), "## Goal\nWrite notes files") || m.Usage != nil {
						t.Errorf("summary %+v (boundary %s)", m, b.UUID)
					}
				case m.Meta:
					meta++
				}
				if m.Usage != nil {
					usage++
				}
			}
			if calls != 4 || results != 4 || summaries != 1 || meta < 1 {
				t.Errorf("calls %d results %d summaries %d meta %d", calls, results, summaries, meta)
			}
			// Nothing new: nothing read.
			again, _, _ := readAll(t, d, curs)
			if len(again) != 0 {
				t.Errorf("a second read gave %d records", len(again))
			}
		})
	}
}

// TestIncremental grows a copy of the fixture as OpenCode does (a user
// message, then an assistant message that streams before it completes)
// and reads between the writes: each message is read once, when settled.
func TestIncremental(t *testing.T) {
	t.Parallel()
	path := copyFixture(t, openCodeFixture)
	w := writer(t, path)
	d := openDB(t, path, transcript.FormatOpenCode)
	_, curs, _ := readAll(t, d, nil)
	const sid = "ses_de942ed70ffeMnYg4uqeokH7Or"
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := w.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
	bump := func() { exec(`UPDATE event_sequence SET seq = seq + 1 WHERE aggregate_id = ?`, sid) }
	// A user message, its part not written yet: pending.
	exec(`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_z1', ?, 1795677999000, 1795677999000, '{"role":"user","time":{"created":1795677999000}}')`, sid)
	bump()
	recs, curs, _ := readAll(t, d, curs)
	if n := countMessages(recs); n != 0 || len(curs[sid].Pending) != 1 {
		t.Fatalf("user message without parts: %d messages, cursor %+v", n, curs[sid])
	}
	exec(`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_z1', 'msg_z1', ?, 1795677999001, 1795677999001, '{"type":"text","text":"next task"}')`, sid)
	// The assistant starts: a text part streaming, not complete.
	exec(`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_z2', ?, 1795677999100, 1795677999100, '{"role":"assistant","modelID":"m","time":{"created":1795677999100}}')`, sid)
	exec(`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_z2', 'msg_z2', ?, 1795677999101, 1795677999101, '{"type":"text","text":"Wor"}')`, sid)
	bump()
	recs, curs, _ = readAll(t, d, curs)
	if n := countMessages(recs); n != 1 || recs[len(recs)-1].Message.Text() != "next task" || len(curs[sid].Pending) != 1 || curs[sid].Pending[0] != "msg_z2" {
		t.Fatalf("the prompt, the reply pending: %d messages, cursor %+v", n, curs[sid])
	}
	prompt := recs[len(recs)-1].Message
	exec(`UPDATE part SET data = '{"type":"text","text":"Working on it."}' WHERE id = 'prt_z2'`)
	exec(`UPDATE message SET data = '{"role":"assistant","modelID":"m","time":{"created":1795677999100,"completed":1795677999200},"tokens":{"input":100,"output":10,"reasoning":5,"cache":{"read":1000,"write":50}}}' WHERE id = 'msg_z2'`)
	bump()
	recs, curs, _ = readAll(t, d, curs)
	if n := countMessages(recs); n != 1 || len(curs[sid].Pending) != 0 {
		t.Fatalf("the completed reply: %d messages, cursor %+v", n, curs[sid])
	}
	reply := recs[len(recs)-1].Message
	if reply.Text() != "Working on it." || reply.ParentUUID != prompt.UUID || reply.Usage == nil || reply.Usage.ContextTokens() != 1150 ||
		reply.Usage.OutputTokens != 15 || reply.ResponseID != "msg_z2" {
		t.Errorf("reply %+v usage %+v", reply, reply.Usage)
	}
	if curs[sid].Context != 1150 {
		t.Errorf("cursor %+v", curs[sid])
	}
}

func countMessages(recs []transcript.Record) int {
	n := 0
	for _, r := range recs {
		if r.Message != nil {
			n++
		}
	}
	return n
}

// TestReadOnlyNoLock: the reader never writes the database, and the
// agent's writer, which here waits for no lock at all, commits while a
// read transaction is open and while the reader reads.
func TestReadOnlyNoLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := copyFixture(t, openCodeFixture)
	w := writer(t, path)
	d := openDB(t, path, transcript.FormatOpenCode)
	sessions, err := d.Sessions(ctx)
	if err != nil || len(sessions) != 1 {
		t.Fatal(sessions, err)
	}
	// The reader holds a snapshot open...
	tx, err := d.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRow(`SELECT count(*) FROM part`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	// ...and the agent writes and commits all the same.
	for i := range 50 {
		if _, err := w.Exec(`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, 'msg_x', 's', 1, 1, '{}')`,
			"prt_lock"+string(rune('a'+i%26))+string(rune('a'+i/26))); err != nil {
			t.Fatalf("the writer was blocked by the reader: %v", err)
		}
	}
	if err := tx.QueryRow(`SELECT count(*) FROM part`).Scan(&n); err != nil || n != 29 {
		t.Errorf("the open read sees %d parts, its snapshot's 29 (%v)", n, err)
	}
	tx.Rollback()
	// A write transaction open in the agent does not stop a read either.
	wtx, err := w.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wtx.Exec(`DELETE FROM part WHERE id LIKE 'prt_lock%'`); err != nil {
		t.Fatal(err)
	}
	recs, _, _ := readAll(t, d, nil)
	if countMessages(recs) != 16 {
		t.Errorf("read during the agent's write: %d messages", countMessages(recs))
	}
	if err := wtx.Commit(); err != nil {
		t.Fatalf("the agent's commit after the read: %v", err)
	}
	// The reader cannot write, even if asked.
	if _, err := d.db.Exec(`DELETE FROM part`); err == nil {
		t.Error("a write through the reader's connection succeeded")
	}
}

// TestNotDatabase: files that are not an agent's database are told apart.
func TestNotDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	text := filepath.Join(dir, "opencode.db")
	if err := os.WriteFile(text, []byte("not sqlite at all, just text long enough to be read as a header........"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), text, transcript.FormatOpenCode); !errors.Is(err, ErrNotDatabase) {
		t.Errorf("text file: %v", err)
	}
	other := filepath.Join(dir, "kilo.db")
	db, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE session (id TEXT)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(context.Background(), other, transcript.FormatKilo); !errors.Is(err, ErrNotDatabase) {
		t.Errorf("another SQLite database: %v", err)
	}
}

// TestWALClosed reads a WAL-mode database whose writer has closed (SQLite
// then removes the WAL and its index): the read-only reader opens it as is.
func TestWALClosed(t *testing.T) {
	t.Parallel()
	path := copyFixture(t, kiloFixture)
	w := writer(t, path)
	if _, err := w.Exec(`UPDATE session SET title = 'Renamed'`); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the WAL is still there: %v", err)
	}
	d := openDB(t, path, transcript.FormatKilo)
	recs, _, _ := readAll(t, d, nil)
	if len(recs) == 0 || recs[0].Session == nil || recs[0].Session.Title != "Renamed" {
		t.Fatalf("records %d, first %+v", len(recs), recs[0])
	}
}

// TestSubagentSession: a session a task tool started (parent_id set) is
// read into the session that started it, as sidechain messages naming the
// subagent's session; it states no facts of a session of its own.
func TestSubagentSession(t *testing.T) {
	t.Parallel()
	path := copyFixture(t, openCodeFixture)
	w := writer(t, path)
	const root, child = "ses_de942ed70ffeMnYg4uqeokH7Or", "ses_child1"
	for _, q := range []string{
		`INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, time_updated)
			SELECT 'ses_child1', project_id, '` + root + `', 'child', directory, 'Child session - 2026-11-26T07:25:00.000Z', version, 1795677950000, 1795677950000 FROM session WHERE id = '` + root + `'`,
		`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_c1', 'ses_child1', 1795677950001, 1795677950001, '{"role":"user","time":{"created":1795677950001}}')`,
		`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_c1', 'msg_c1', 'ses_child1', 1795677950002, 1795677950002, '{"type":"text","text":"look for the config"}')`,
		`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_c2', 'ses_child1', 1795677950010, 1795677950020, '{"role":"assistant","modelID":"m","time":{"created":1795677950010,"completed":1795677950020},"tokens":{"input":300,"output":5,"reasoning":0,"cache":{"read":0,"write":0}}}')`,
		`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_c2', 'msg_c2', 'ses_child1', 1795677950011, 1795677950011, '{"type":"text","text":"found it in opencode.json"}')`,
	} {
		if _, err := w.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	d := openDB(t, path, transcript.FormatOpenCode)
	recs, curs, _ := readAll(t, d, nil)
	if len(curs) != 2 {
		t.Fatalf("cursors %v", curs)
	}
	var side []*compact.Message
	for _, r := range recs {
		if s := r.Session; s != nil && s.ID != root {
			t.Errorf("session facts of %+v", s)
		}
		if m := r.Message; m != nil && m.Sidechain {
			side = append(side, m)
		}
	}
	if len(side) != 2 || side[0].SessionID != root || side[0].AgentID != child || side[1].Text() != "found it in opencode.json" ||
		side[1].Usage == nil || side[0].Role != compact.RoleUser {
		t.Fatalf("sidechain %+v", side)
	}
}

// TestReadEndsOnRowsOutOfOrder: a database whose time_created holds blobs
// (SQLite orders a blob after every number, whatever number it reads as)
// returns the same rows past any cursor; reading it page by page still
// ends, each message read once.
func TestReadEndsOnRowsOutOfOrder(t *testing.T) {
	t.Parallel()
	path := copyFixture(t, openCodeFixture)
	w := writer(t, path)
	const sid = "ses_de942ed70ffeMnYg4uqeokH7Or"
	const n = 2*pageRows + 3
	for i := range n {
		m := fmt.Sprintf("msg_zt%04d", i)
		if _, err := w.Exec(`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, CAST(? AS BLOB), 1, '{"role":"user"}')`,
			m, sid, fmt.Sprint(1000+n-i)); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Exec(`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, 1, 1, ?)`,
			"prt_"+m, m, sid, fmt.Sprintf(`{"type":"text","text":"row %d"}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	d := openDB(t, path, transcript.FormatOpenCode)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sessions, err := d.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	if _, _, err := d.Read(ctx, sessions[0], sid, Cursor{}, func(r transcript.Record) error {
		if r.Message != nil {
			seen[r.Message.UUID]++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("message %s read %d times", id, k)
		}
	}
}

// TestComputedTablesRefused: a database whose tables compute what they
// return (a generated column, a virtual table) is no OpenCode database,
// and is not read: a 28 KB file whose part.data is printf of 200 MB
// per row held ledger ingest for minutes, in gigabytes of memory.
func TestComputedTablesRefused(t *testing.T) {
	t.Parallel()
	for name, part := range map[string]string{
		"generated": `CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL, time_created integer NOT NULL,
			time_updated integer NOT NULL, n integer, data text GENERATED ALWAYS AS (printf('%.*c', n, 'x')) VIRTUAL)`,
		"virtual": `CREATE VIRTUAL TABLE part USING fts5(id, message_id, session_id, time_created, time_updated, data)`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "opencode.db")
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{
				`CREATE TABLE session (id text PRIMARY KEY, parent_id text, directory text NOT NULL, title text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL)`,
				`CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL)`,
				part,
			} {
				if _, err := db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			db.Close()
			if _, err := Open(context.Background(), path, transcript.FormatOpenCode); !errors.Is(err, ErrNotDatabase) {
				t.Errorf("opened: %v, want ErrNotDatabase", err)
			}
		})
	}
}

// TestHugeValuesPassedOver: a message or a part whose data is over
// maxValue (13 MB here: a hostile database's, a tool output gone wild) is
// passed over with a skip that says so, never read into memory, and the
// messages after it are read.
func TestHugeValuesPassedOver(t *testing.T) {
	t.Parallel()
	path := copyFixture(t, openCodeFixture)
	w := writer(t, path)
	const sid = "ses_de942ed70ffeMnYg4uqeokH7Or"
	pad := strings.Repeat("a", 13<<20)
	for _, m := range []struct{ id, data, part string }{
		{"msg_zz0001", `{"role":"user","pad":"` + pad + `"}`, `{"type":"text","text":"the huge message's part"}`},
		{"msg_zz0002", `{"role":"user"}`, `{"type":"text","text":"` + pad + `"}`},
		{"msg_zz0003", `{"role":"user"}`, `{"type":"text","text":"zebrafinch comes after them"}`},
	} {
		if _, err := w.Exec(`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, 9000000000000, 1, ?)`, m.id, sid, m.data); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Exec(`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, 1, 1, ?)`, "prt_"+m.id, m.id, sid, m.part); err != nil {
			t.Fatal(err)
		}
	}
	pad = ""
	d := openDB(t, path, transcript.FormatOpenCode)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	recs, _, skips := readAll(t, d, nil)
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 12<<20 {
		t.Errorf("reading allocated %d MB: a huge value was read", grew>>20)
	}
	for _, want := range []string{"message msg_zz0001: over 12 MB", "part prt_msg_zz0002: over 12 MB"} {
		if !strings.Contains(strings.Join(skips, "\n"), want) {
			t.Errorf("skips %q, want one that says %q", skips, want)
		}
	}
	found := false
	for _, r := range recs {
		if r.Message != nil {
			for _, b := range r.Message.Blocks {
				found = found || strings.Contains(b.Text, "zebrafinch")
			}
		}
	}
	if !found {
		t.Error("the message after the huge ones was not read")
	}
}
