package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/transcript"
)

// resumeLedger returns a ledger of messages messages: one generated session
// of 1,000 messages ingested (no handoff written, so resume extracts one),
// and copies of it under other ids, older, made in SQL so that the setup
// stays a second or two at 100k messages. The copies are not indexed for
// search (resume never searches); everything else is as ingest writes it.
// The caller closes the store.
func resumeLedger(b *testing.B, dir string, messages int) (*store.Store, string) {
	b.Helper()
	ctx := context.Background()
	path := filepath.Join(dir, "-home-dev-src-project00", "session-00000.jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	err = transcript.Generate(f, transcript.GenOptions{Seed: 1_000_003, Messages: 1000, CompactEvery: 400,
		Project: "/home/dev/src/project00", Shape: transcript.GenReal})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.Fatal(err)
	}
	s, err := store.Open(ctx, filepath.Join(dir, "ledger.db"))
	if err != nil {
		b.Fatal(err)
	}
	fs, err := (&ingester{st: s}).file(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	copies := messages/1000 - 1
	if copies < 1 {
		return s, fs.Session
	}
	db := rawDB(b, filepath.Join(dir, "ledger.db"))
	columns := func(table string, skip ...string) []string {
		var cols []string
		rows, err := db.Queryx(`SELECT name FROM pragma_table_info(?) ORDER BY cid`, table)
		if err != nil {
			b.Fatal(err)
		}
		defer rows.Close()
	next:
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				b.Fatal(err)
			}
			for _, s := range skip {
				if c == s {
					continue next
				}
			}
			cols = append(cols, c)
		}
		return cols
	}
	// Copy every column but the id (and the session id, given).
	copyRows := func(table, keyCol string, skip ...string) string {
		cols := columns(table, append(skip, keyCol)...)
		list := strings.Join(cols, ", ")
		return fmt.Sprintf(`INSERT INTO %s (%s, %s) SELECT ?, %s FROM %s WHERE %s = ?`, table, keyCol, list, list, table, keyCol)
	}
	sessionCols := columns("sessions", "id", "started_at", "last_at")
	copySession := fmt.Sprintf(`INSERT INTO sessions (id, started_at, last_at, %[1]s)
		SELECT ?, datetime(started_at, ?), datetime(last_at, ?), %[1]s FROM sessions WHERE id = ?`, strings.Join(sessionCols, ", "))
	copyMessages := copyRows("messages", "session_id", "id")
	copyCompactions := copyRows("compactions", "session_id", "id", "handoff_id")
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	exec := func(q string, args ...any) {
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	for i := 1; i <= copies; i++ {
		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		age := fmt.Sprintf("-%d hours", i)
		exec(copySession, id, age, age, fs.Session)
		exec(copyMessages, id, fs.Session)
		exec(copyCompactions, id, fs.Session)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return s, fs.Session
}

// BenchmarkResume measures building a session's resume context (the work of
// `ledger resume SESSION --format hook` after start-up) at 1k and 100k
// messages in the ledger: by session id and as the latest session of a
// project, from the stored resume state (what ingest and the Stop hook
// leave); "extract" is the same when the state is stale (extracted from
// the session's messages now), "handoff" once a handoff was written. It
// should not grow with the ledger; whole-process figures come from
// cmd/ledger-bench.
func BenchmarkResume(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	for _, n := range []int{1000, 100_000} {
		var e *Engine
		var id string
		// Built on first use: -bench 'Resume/session/1k' builds no 100k
		// ledger. Closed when the parent benchmark ends.
		setup := func(sub *testing.B) {
			if e == nil {
				var s *store.Store
				s, id = resumeLedger(sub, filepath.Join(dir, strconv.Itoa(n)), n)
				e = engineOf(s)
				b.Cleanup(func() { s.Close() })
				if err := e.RefreshResumeState(ctx, id); err != nil {
					sub.Fatal(err)
				}
			}
		}
		b.Run(fmt.Sprintf("session/%dk", n/1000), func(b *testing.B) {
			setup(b)
			for b.Loop() {
				if _, err := e.Resume(ctx, ResumeRequest{Session: id, Budget: 2000, MaxChars: MaxHookContext}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("project/%dk", n/1000), func(b *testing.B) {
			setup(b)
			for b.Loop() {
				r, err := e.Resume(ctx, ResumeRequest{Project: "/home/dev/src/project00", Budget: 2000, MaxChars: MaxHookContext})
				if err != nil {
					b.Fatal(err)
				}
				if r.Session.ID != id {
					b.Fatalf("latest session %s, want %s", r.Session.ID, id)
				}
			}
		})
		b.Run(fmt.Sprintf("extract/%dk", n/1000), func(b *testing.B) {
			setup(b)
			st, sess, err := e.Session(ctx, id)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				d, err := extractForResume(ctx, st, sess)
				if err != nil {
					b.Fatal(err)
				}
				fitResume(handoff.ResumeInput{Session: id, Handoff: d, Extracted: true}, 2000, MaxHookContext, compact.DefaultMemo())
			}
		})
	}
	b.Run("handoff/1k", func(b *testing.B) {
		s, id := resumeLedger(b, filepath.Join(dir, "handoff"), 1000)
		defer s.Close()
		e := engineOf(s)
		if _, err := e.WriteHandoff(ctx, id, HandoffRequest{Trigger: "manual", Source: "cli", Out: filepath.Join(dir, "h.md")}); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := e.Resume(ctx, ResumeRequest{Session: id, Budget: 2000, MaxChars: MaxHookContext}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
