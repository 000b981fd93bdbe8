package store

import (
	"context"
	"testing"
	"time"

	"github.com/agentledger/ledger/compact"
)

// orderedUUIDs is a session's message uuids by seq, with their seqs.
func orderedUUIDs(t *testing.T, s *Store, session string) ([]string, []int64) {
	t.Helper()
	var rows []struct {
		UUID string `db:"uuid"`
		Seq  int64  `db:"seq"`
	}
	if err := s.db.Select(&rows, `SELECT uuid, seq FROM messages WHERE session_id = $1 ORDER BY seq, id`, session); err != nil {
		t.Fatal(err)
	}
	var uuids []string
	var seqs []int64
	for _, r := range rows {
		uuids = append(uuids, r.UUID)
		seqs = append(seqs, r.Seq)
	}
	return uuids, seqs
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestMessagesTimeOrder: a session's messages are numbered in time order
// whatever order their files are read in (a compaction summarizer's
// subagent file before or after its session's, in one ingest or two), a
// message without a time keeps its place after its thread's message before
// it, and the
// numbers run 0..n-1 on both backends.
func TestMessagesTimeOrder(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 2, 11, 20, 0, 0, 0, time.UTC)
	msg := func(uuid string, minute int, side bool) compact.Message {
		m := compact.Message{UUID: uuid, SessionID: "s1", Role: compact.RoleUser, Sidechain: side,
			Blocks: []compact.Block{{Kind: compact.BlockText, Text: "text of " + uuid}}}
		if minute >= 0 {
			m.Time = at.Add(time.Duration(minute) * time.Minute)
		}
		return m
	}
	main := []compact.Message{msg("m1", 1, false), msg("m2", 2, false), msg("m3", -1, false), msg("m4", 5, false), msg("m5", 6, false)}
	side := []compact.Message{msg("a1", 3, true), msg("a2", 4, true)}
	want := []string{"m1", "m2", "m3", "a1", "a2", "m4", "m5"}
	cases := []struct {
		name    string
		batches [][]compact.Message // one transaction each
	}{
		{"session first, one ingest", [][]compact.Message{append(append([]compact.Message{}, main...), side...)}},
		{"subagent first, one ingest", [][]compact.Message{append(append([]compact.Message{}, side...), main...)}},
		{"session first, two ingests", [][]compact.Message{main, side}},
		{"subagent first, two ingests", [][]compact.Message{side, main}},
		{"in time order, one at a time", [][]compact.Message{main[:1], main[1:2], main[2:3], side[:1], side[1:], main[3:4], main[4:]}},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					ctx := context.Background()
					s := b.open(t)
					for _, batch := range c.batches {
						w, err := s.NewWriter(ctx, "claude")
						if err != nil {
							t.Fatal(err)
						}
						for _, m := range batch {
							if _, err := w.AddMessage(ctx, m); err != nil {
								t.Fatal(err)
							}
						}
						if err := w.Commit(ctx, nil); err != nil {
							t.Fatal(err)
						}
					}
					got, seqs := orderedUUIDs(t, s, "s1")
					if !sameStrings(got, want) {
						t.Errorf("order %v, want %v", got, want)
					}
					for i, seq := range seqs {
						if seq != int64(i) {
							t.Fatalf("seqs %v, want 0..%d", seqs, len(want)-1)
						}
					}
					msgs, err := s.Messages(ctx, "s1", 0)
					if err != nil {
						t.Fatal(err)
					}
					var last time.Time
					for _, m := range msgs {
						if !m.Time.IsZero() && m.Time.Before(last) {
							t.Errorf("%s at %v after a message at %v", m.UUID, m.Time, last)
						}
						if !m.Time.IsZero() {
							last = m.Time
						}
					}
				})
			}
		})
	}
}

// TestMigrationTimeOrder: a ledger whose messages were numbered in the
// order their files were read is numbered in time order by the migration.
func TestMigrationTimeOrder(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := b.open(t)
			before := int64(11) // the migration before messages_time_order
			if s.Shared() {
				before = 5
			}
			if err := s.MigrateDown(ctx, before); err != nil {
				t.Fatal(err)
			}
			at := time.Date(2026, 2, 11, 20, 0, 0, 0, time.UTC)
			if _, err := s.db.Exec(`INSERT INTO sessions (id, source) VALUES ('s1', 'claude')`); err != nil {
				t.Fatal(err)
			}
			// File order: the subagent's file first, then the session's.
			for i, r := range []struct {
				uuid   string
				minute int
			}{{"a1", 3}, {"a2", 4}, {"m1", 1}, {"m2", 2}, {"m3", -1}, {"m4", 5}} {
				var t0 any
				if r.minute >= 0 {
					t0 = at.Add(time.Duration(r.minute) * time.Minute)
				}
				if _, err := s.db.Exec(`INSERT INTO messages (session_id, uuid, seq, role, kind, text, at, sidechain) VALUES ('s1', $1, $2, 'user', 'text', 'x', $3, $4)`,
					r.uuid, i, t0, r.uuid[0] == 'a'); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.MigrateUp(ctx); err != nil {
				t.Fatal(err)
			}
			got, seqs := orderedUUIDs(t, s, "s1")
			if want := []string{"m1", "m2", "m3", "a1", "a2", "m4"}; !sameStrings(got, want) {
				t.Errorf("order after the migration %v, want %v", got, want)
			}
			for i, seq := range seqs {
				if seq != int64(i) {
					t.Fatalf("seqs %v, want 0..5", seqs)
				}
			}
		})
	}
}

// TestPushMessagesReadLater: a subagent's messages read after a push, and
// numbered among those already pushed, reach the team ledger at the next
// push, in the same order as here.
func TestPushMessagesReadLater(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	local, dst := openSQLite(t), openPG(t)
	at := time.Date(2026, 2, 11, 20, 0, 0, 0, time.UTC)
	add := func(uuids []string, minutes []int, side bool) {
		t.Helper()
		w, err := local.NewWriter(ctx, "claude")
		if err != nil {
			t.Fatal(err)
		}
		for i, u := range uuids {
			if _, err := w.AddMessage(ctx, compact.Message{UUID: u, SessionID: "s1", Role: compact.RoleUser, Sidechain: side,
				Time: at.Add(time.Duration(minutes[i]) * time.Minute), Blocks: []compact.Block{{Kind: compact.BlockText, Text: u}}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Commit(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	add([]string{"m1", "m2", "m3"}, []int{1, 2, 5}, false)
	if _, err := local.Push(ctx, dst, "alice"); err != nil {
		t.Fatal(err)
	}
	add([]string{"a1", "a2"}, []int{3, 4}, true)
	got, err := local.Push(ctx, dst, "alice")
	if err != nil || got.Messages != 2 {
		t.Fatalf("second push sent %+v, %v; want the subagent's 2 messages", got, err)
	}
	want, _ := orderedUUIDs(t, local, "s1")
	if there, _ := orderedUUIDs(t, dst, "s1"); !sameStrings(there, want) || !sameStrings(want, []string{"m1", "m2", "a1", "a2", "m3"}) {
		t.Errorf("team ledger %v, local %v; want both m1 m2 a1 a2 m3", there, want)
	}
}

// TestIgnoredProjectsBackends: a project noted as ignored in an ingest's
// transaction is listed on both backends, the latest file holding.
func TestIgnoredProjectsBackends(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := b.open(t)
			at := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
			for i, f := range []string{"/src/secret/.ledgerignore", "/src/secret/sub/.ledgerignore"} {
				w, err := s.NewWriter(ctx, "claude")
				if err != nil {
					t.Fatal(err)
				}
				if err := w.NoteIgnored(ctx, "/src/secret/", f, at.Add(time.Duration(i)*time.Minute)); err != nil {
					t.Fatal(err)
				}
				if err := w.Commit(ctx, nil); err != nil {
					t.Fatal(err)
				}
			}
			got, err := s.IgnoredProjects(ctx)
			if err != nil || len(got) != 1 || got[0].Project != "/src/secret" || got[0].File != "/src/secret/sub/.ledgerignore" || !got[0].At.Equal(at.Add(time.Minute)) {
				t.Errorf("IgnoredProjects = %+v, %v", got, err)
			}
		})
	}
}

// TestUsageOfBackends: a Codex token_count's usage, named for a message of
// the same transaction (on PostgreSQL a new session's messages wait in the
// copy buffer) or of an earlier one, is kept on that message on both
// backends, and the context series reads it.
func TestUsageOfBackends(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := b.open(t)
			at := time.Date(2026, 2, 23, 12, 0, 0, 0, time.UTC)
			for i, uuid := range []string{"codex-a", "codex-b"} {
				w, err := s.NewWriter(ctx, "codex")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := w.AddMessage(ctx, compact.Message{UUID: uuid, SessionID: "c1", Role: compact.RoleAssistant,
					Time: at.Add(time.Duration(i) * time.Minute), Blocks: []compact.Block{{Kind: compact.BlockText, Text: uuid}}}); err != nil {
					t.Fatal(err)
				}
				u := compact.Usage{InputTokens: int64(1000 * (i + 1)), CacheReadInputTokens: 500, OutputTokens: 20}
				if err := w.PatchSession(ctx, SessionPatch{ID: "c1", Usage: &u, UsageOf: uuid}); err != nil {
					t.Fatal(err)
				}
				if err := w.Commit(ctx, nil); err != nil {
					t.Fatal(err)
				}
			}
			series, err := s.ContextSeries(ctx, "c1")
			if err != nil || len(series) != 2 || series[0].Tokens != 1500 || series[1].Tokens != 2500 {
				t.Errorf("ContextSeries = %+v, %v; want 1,500 and 2,500", series, err)
			}
		})
	}
}

// TestPushMarksOfAnOlderLedger: marks an older ledger left on the server
// (no count of messages, no fingerprint of records) make the next push
// check each session once by its largest ids and record the count: it
// sends nothing that was sent, and from then on a push with nothing new
// sends nothing; a message added after is sent.
func TestPushMarksOfAnOlderLedger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	local, dst := openSQLite(t), openPG(t)
	at := fillConversation(t, local)
	if _, err := local.Push(ctx, dst, "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := dst.db.ExecContext(ctx, `UPDATE sync_marks SET messages = -1, records = ''`); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{0, 0} {
		got, err := local.Push(ctx, dst, "alice")
		if err != nil || got.Messages != want || got.Compactions != 0 || got.Handoffs != 0 {
			t.Fatalf("push %d after older marks sent %+v, %v; want nothing", i+1, got, err)
		}
	}
	var unmarked int
	if err := dst.db.GetContext(ctx, &unmarked, `SELECT count(*) FROM sync_marks WHERE messages < 0`); err != nil || unmarked != 0 {
		t.Errorf("%d marks still without a count (%v)", unmarked, err)
	}
	w, err := local.NewWriter(ctx, "claude")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddMessage(ctx, compact.Message{UUID: "late", SessionID: "s1", Role: compact.RoleUser, Time: at.Add(time.Hour),
		Blocks: []compact.Block{{Kind: compact.BlockText, Text: "late"}}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := local.Push(ctx, dst, "alice"); err != nil || got.Messages != 1 {
		t.Errorf("push after a new message sent %+v, %v; want it", got, err)
	}
}
