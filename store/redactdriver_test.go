package store

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/store/secrets/secretstest"
)

// allRows is every row of every table of s, as text: what a backend keeps
// (on SQLite the file and its WAL are read too, by the caller).
func allRows(t *testing.T, s *Store) string {
	t.Helper()
	ctx := context.Background()
	var tables []string
	q := `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '%fts%' AND name NOT LIKE 'sqlite_%'`
	if s.Shared() {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`
	}
	if err := s.db.SelectContext(ctx, &tables, q); err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for _, tbl := range tables {
		rows, err := s.db.QueryxContext(ctx, `SELECT * FROM "`+tbl+`"`)
		if err != nil {
			t.Fatalf("%s: %v", tbl, err)
		}
		for rows.Next() {
			vals, err := rows.SliceScan()
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				switch v := v.(type) {
				case string:
					sb.WriteString(v)
				case []byte:
					sb.Write(v)
				}
				sb.WriteByte('\t')
			}
			sb.WriteByte('\n')
		}
		rows.Close()
	}
	return sb.String()
}

// TestEveryWriteRedacted writes a secret into every string the store's
// methods take (session id, project, branch, title, model, message ids,
// tool name, compaction summary and trigger, cursor path and reader state,
// handoff sections and path, note, hook receipt, mark, paused project,
// resume state), on SQLite and PostgreSQL: no row holds it, and every
// lookup by the key as an agent gives it (id, path) still finds its row.
func TestEveryWriteRedacted(t *testing.T) {
	t.Parallel()
	kinds := secretstest.Kinds()
	gh, aws, slack, npm := kinds[4].Value, kinds[3].Value, kinds[8].Value, kinds[11].Value
	secretList := []string{gh, aws, slack, npm}
	id := "sess-" + gh
	project := "/home/dev/" + aws + "/shop"
	path := "/home/dev/.claude/projects/-home-dev-" + aws + "/" + id + ".jsonl"
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t)
			ctx := context.Background()
			at := time.Date(2026, 6, 2, 9, 0, 0, 0, time.UTC)
			w, err := s.NewWriter(ctx, "claude")
			if err != nil {
				t.Fatal(err)
			}
			if err := w.PatchSession(ctx, SessionPatch{ID: id, Project: project, GitBranch: "fix/" + gh, Title: "rotate " + slack,
				Model: "model-" + npm, Time: at}); err != nil {
				t.Fatal(err)
			}
			msg := compact.Message{UUID: "u-" + slack, ParentUUID: "p-" + slack, SessionID: id, Role: compact.RoleAssistant, Time: at,
				Model: "model-" + npm, ResponseID: "msg-" + npm, AgentID: "agent-" + aws, Blocks: []compact.Block{
					{Kind: compact.BlockText, Text: "plain words"},
					secretstest.ToolUse("deploy-"+gh, map[string]string{"command": "ls"}),
				}}
			if _, err := w.AddMessage(ctx, msg); err != nil {
				t.Fatal(err)
			}
			if _, err := w.AddBoundary(ctx, compact.Boundary{UUID: "b-" + slack, SessionID: id, Time: at.Add(time.Minute), Trigger: "manual " + gh,
				LogicalParentUUID: "u-" + slack, Summary: "the key was " + aws}); err != nil {
				t.Fatal(err)
			}
			state := `{"Format":"claude","SessionID":"` + id + `","queued":["also run mysql -uroot -pZq8vLw2pXr0Tm2Kc shop"],"links":[["x","u-` + slack + `"]]}`
			if err := w.Commit(ctx, &Cursor{Path: path, SessionID: id, Format: "claude", Size: 1, HeadLen: 1,
				HeadHash: "4b1d" + strings.Repeat("a1", 19), State: state}); err != nil {
				t.Fatal(err)
			}
			doc := handoff.Doc{Session: id, Project: project, Branch: "fix/" + gh, Trigger: "manual", Task: "rotate " + aws, CreatedAt: at,
				Requests: []string{"use " + slack}, Markdown: "# handoff\nthe key " + npm}
			if _, _, err := s.AddHandoff(ctx, NewHandoff{Doc: doc, Path: "/h/" + aws + "/x.md",
				Record: &CompactionRecord{Source: "cli", Trigger: "manual", At: at, LogicalParent: "u-" + slack}}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.AddNote(ctx, Note{SessionID: id, Kind: handoff.NoteDecision, Text: "rotate " + gh, CreatedAt: at}); err != nil {
				t.Fatal(err)
			}
			if err := s.AddHookReceipt(ctx, HookReceipt{SessionID: id, Event: "PreCompact", At: at, Outcome: OutcomeOK,
				Detail: "handoff written to /h/" + aws + "/x.md"}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Mark(ctx, id, "suggested-"+slack); err != nil {
				t.Fatal(err)
			}
			if _, err := s.PauseProject(ctx, project, at); err != nil {
				t.Fatal(err)
			}
			if err := s.SaveResumeStates(ctx, []ResumeState{{SessionID: id, Key: "k", Doc: doc}}); err != nil {
				t.Fatal(err)
			}

			rows := allRows(t, s)
			for _, sec := range secretList {
				if strings.Contains(rows, sec) {
					t.Errorf("a row holds %.12s...:\n%s", sec, rows)
				}
			}
			if !s.Shared() {
				for _, p := range []string{s.path, s.path + "-wal"} {
					raw, _ := os.ReadFile(p)
					for _, sec := range secretList {
						if strings.Contains(string(raw), sec) {
							t.Errorf("%s holds %.12s...", p, sec)
						}
					}
				}
			}
			if !strings.Contains(rows, "4b1d"+strings.Repeat("a1", 19)) {
				t.Error("the cursor's head hash was not written as it is")
			}

			// Lookups by the keys as an agent gives them.
			sess, err := s.Session(ctx, id)
			if err != nil || sess.ID != "sess-[REDACTED:github-pat]" || sess.Messages != 1 || sess.Compactions != 1 || sess.Clears != 1 {
				t.Errorf("Session(%q) = %+v, %v", id, sess, err)
			}
			if c, err := s.Cursor(ctx, path); err != nil || c.SessionID != sess.ID || strings.Contains(c.State, "Zq8vLw2pXr0Tm2Kc") ||
				!strings.Contains(c.State, `"queued"`) {
				t.Errorf("Cursor(%q) = %+v, %v", path, c, err)
			}
			if resumed, err := s.ResumeProject(ctx, project); err != nil || !resumed {
				t.Errorf("ResumeProject(%q) = %v, %v: want the paused project found", project, resumed, err)
			}
		})
	}
}

// TestCopyRedacted: on PostgreSQL a new session's messages are copied in
// (COPY), not inserted, and what is copied is redacted as every write is:
// a secret in a transcript's message does not reach the server, and a
// string the writer did not redact itself is redacted by the connection.
func TestCopyRedacted(t *testing.T) {
	t.Parallel()
	s := openPG(t)
	ctx := context.Background()
	kinds := secretstest.Kinds()
	gh, aws := kinds[4].Value, kinds[3].Value
	w, err := s.NewWriter(ctx, "claude")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Rollback()
	at := time.Date(2026, 6, 2, 9, 0, 0, 0, time.UTC)
	if _, err := w.AddMessage(ctx, compact.Message{UUID: "u1", SessionID: "s-copy", Role: compact.RoleUser, Time: at,
		Blocks: []compact.Block{{Kind: compact.BlockText, Text: "deploy with " + gh}}}); err != nil {
		t.Fatal(err)
	}
	if w.copied.copier == nil || len(w.copied.rows) != 1 {
		t.Fatalf("the message was not put to copy: %+v", w.copied)
	}
	// A row as a careless caller might give it: plain strings.
	ids, err := w.copied.copier.reserveIDs(ctx, "messages", 1)
	if err != nil {
		t.Fatal(err)
	}
	row := []any{ids[0], "s-copy", "u2-" + aws, "", int64(1), "user", "text", "", "the key is " + aws, nil, at,
		"", "", nil, nil, nil, nil, false, false, false, ""}
	if err := w.copied.copier.copyRows(ctx, "messages", copyColumns, [][]any{row}); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if w.copied.sent != 1 {
		t.Errorf("%d rows copied by the writer, want 1", w.copied.sent)
	}
	rows := allRows(t, s)
	for _, sec := range []string{gh, aws} {
		if strings.Contains(rows, sec) {
			t.Errorf("a row holds %.12s...:\n%s", sec, rows)
		}
	}
	if !strings.Contains(rows, "the key is [REDACTED:") || !strings.Contains(rows, "deploy with [REDACTED:") {
		t.Errorf("the copied rows are not there, redacted:\n%s", rows)
	}
	// The tsvector copied with them is the redacted text's: no word of a
	// secret is found.
	for _, sec := range []string{gh, aws} {
		var n int
		if err := s.db.GetContext(ctx, &n, `SELECT count(*) FROM messages WHERE tsv @@ to_tsquery('simple', $1)`,
			ParseQuery(sec).render(tsSyntax, true)); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%d messages are found by the words of %.12s...", n, sec)
		}
	}
}

// TestVerbatimWithoutRedaction: a store that does not redact writes every
// string as it comes, verbatim ones too.
func TestVerbatimWithoutRedaction(t *testing.T) {
	t.Parallel()
	s := openSQLite(t, WithoutRedaction())
	ctx := context.Background()
	gh := secretstest.Kinds()[4].Value
	if _, err := s.PauseProject(ctx, "/p/"+gh, time.Now()); err != nil {
		t.Fatal(err)
	}
	ps, err := s.PausedProjects(ctx)
	if err != nil || len(ps) != 1 || ps[0].Project != "/p/"+gh {
		t.Errorf("PausedProjects = %+v, %v", ps, err)
	}
}

func TestWrites(t *testing.T) {
	t.Parallel()
	for q, want := range map[string]bool{
		"INSERT INTO x VALUES (?)":         true,
		"\n\t\tupdate x SET a = ?":         true,
		"-- a comment\nINSERT INTO x":      true,
		"SELECT * FROM x WHERE a = ?":      false,
		"DELETE FROM x WHERE a = ?":        false,
		"PRAGMA secure_delete = ON":        false,
		"-- only a comment":                false,
		"  ":                               false,
		"INSERT INTO t (t) VALUES ('x')":   true,
		"SELECT set_config('a', $1, true)": false,
	} {
		if got := writes(q); got != want {
			t.Errorf("writes(%q) = %v, want %v", q, got, want)
		}
	}
}

// TestRescanRekeys: a ledger that stored session ids, cursor paths and
// reader states as they came (redaction off) is rekeyed by a rescan, on
// SQLite and PostgreSQL: every row that names an id holding a secret names
// its redacted form; two ids that differ only by their secrets become one
// session, whose messages and counts are both's; the old cursor state is
// redacted and still JSON.
func TestRescanRekeys(t *testing.T) {
	t.Parallel()
	kinds := secretstest.Kinds()
	gh1, gh2 := kinds[4].Value, "ghp_"+strings.Repeat("Zq8vLw2pXr0Tm2Kc5Wn8", 2)[:36]
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t, WithoutRedaction())
			ctx := context.Background()
			at := time.Date(2026, 6, 2, 9, 0, 0, 0, time.UTC)
			w, err := s.NewWriter(ctx, "claude")
			if err != nil {
				t.Fatal(err)
			}
			for i, id := range []string{"sess-" + gh1, "sess-" + gh2} {
				if _, err := w.AddMessage(ctx, compact.Message{UUID: fmt.Sprintf("m%d", i), SessionID: id, Role: compact.RoleUser, Time: at,
					Blocks: []compact.Block{{Kind: compact.BlockText, Text: "hello"}}}); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Commit(ctx, &Cursor{Path: "/t/sess-" + gh1 + ".jsonl", SessionID: "sess-" + gh1, Format: "claude", Size: 1,
				State: `{"Format":"claude","SessionID":"sess-` + gh1 + `","queued":["use ` + gh2 + `"]}`}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.AddNote(ctx, Note{SessionID: "sess-" + gh2, Kind: handoff.NoteNext, Text: "next", CreatedAt: at}); err != nil {
				t.Fatal(err)
			}
			if err := s.AddHookReceipt(ctx, HookReceipt{SessionID: "sess-" + gh2, Event: "Stop", At: at, Outcome: OutcomeOK}); err != nil {
				t.Fatal(err)
			}
			res, err := s.RedactRescan(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if res.RowsChanged == 0 {
				t.Errorf("rescan = %+v", res)
			}
			rows := allRows(t, s)
			for _, sec := range []string{gh1, gh2} {
				if strings.Contains(rows, sec) {
					t.Errorf("after rescan a row holds %.12s...:\n%s", sec, rows)
				}
			}
			// (This store does not redact: it finds rows by their keys as
			// stored.)
			sess, err := s.Session(ctx, "sess-[REDACTED:github-pat]")
			if err != nil || sess.Messages != 2 {
				t.Fatalf("Session = %+v, %v; want one session of both ids' 2 messages", sess, err)
			}
			if msgs, err := s.Messages(ctx, sess.ID, 0); err != nil || len(msgs) != 2 {
				t.Errorf("Messages = %d, %v", len(msgs), err)
			}
			if ns, err := s.Notes(ctx, sess.ID); err != nil || len(ns) != 1 {
				t.Errorf("Notes = %+v, %v", ns, err)
			}
			c, err := s.Cursor(ctx, "/t/sess-[REDACTED:github-pat].jsonl")
			if err != nil || c.SessionID != sess.ID || !json.Valid([]byte(c.State)) || !strings.Contains(c.State, "[REDACTED:github-pat]") {
				t.Errorf("Cursor = %+v, %v", c, err)
			}
			if again, err := s.RedactRescan(ctx); err != nil || again.RowsChanged != 0 {
				t.Errorf("second rescan = %+v, %v; want nothing changed", again, err)
			}
		})
	}
}
