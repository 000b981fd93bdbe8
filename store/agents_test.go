package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/handoff"
)

// TestAgentSources: a ledger made before migration 9 (its sessions a
// Claude Code and a Codex one) takes sessions of any agent once migrated,
// keeps every row, and passes SQLite's integrity check; taking the
// migration down again restores the old constraint on a ledger that only
// has claude and codex sessions.
func TestAgentSources(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	s := openAt(t, path)
	if err := s.MigrateDown(ctx, 8); err != nil {
		t.Fatal(err)
	}
	add := func(source, id string) error {
		w, err := s.NewWriter(ctx, source)
		if err != nil {
			return err
		}
		defer w.Rollback()
		if _, err := w.AddMessage(ctx, compact.Message{UUID: id + "-m", SessionID: id, Role: compact.RoleUser,
			Blocks: []compact.Block{{Kind: compact.BlockText, Text: "hello " + source}}}); err != nil {
			return err
		}
		return w.Commit(ctx, nil)
	}
	// At schema 8 the current writer cannot run (it writes columns of
	// later migrations): rows go in as that schema's ledger wrote them.
	addOld := func(source, id string) error {
		_, err := s.db.Exec(`INSERT INTO sessions (id, source) VALUES (?, ?)`, id, source)
		return err
	}
	for _, src := range []string{"claude", "codex"} {
		if err := addOld(src, "s-"+src); err != nil {
			t.Fatal(err)
		}
	}
	if err := addOld("pi", "s-pi"); err == nil {
		t.Fatal("schema 8 took a pi session")
	}
	s.Close()

	s = openAt(t, path) // migrates to the latest
	for _, src := range []string{"pi", "opencode", "kilo"} {
		if err := add(src, "s-"+src); err != nil {
			t.Fatalf("%s session: %v", src, err)
		}
	}
	var n int
	if err := s.db.Get(&n, `SELECT count(*) FROM sessions`); err != nil || n != 5 {
		t.Fatalf("%d sessions (%v)", n, err)
	}
	if err := s.db.Get(&n, `SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'hello'`); err != nil || n != 3 {
		t.Fatalf("%d messages found (%v)", n, err)
	}
	var check string
	if err := s.db.Get(&check, `PRAGMA integrity_check`); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q %v", check, err)
	}
	if _, err := s.db.Exec(`DELETE FROM sessions WHERE source NOT IN ('claude', 'codex')`); err != nil {
		t.Fatal(err)
	}
	if err := s.MigrateDown(ctx, 8); err != nil {
		t.Fatal(err)
	}
	if err := addOld("opencode", "s-oc2"); err == nil {
		t.Error("schema 8 again took an opencode session")
	}
	if err := s.db.Get(&check, `PRAGMA integrity_check`); err != nil || check != "ok" {
		t.Fatalf("integrity_check after down: %q %v", check, err)
	}
}

// TestAgentSourcesBackends: every backend stores a session of any agent.
func TestAgentSourcesBackends(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := b.open(t)
			for _, src := range []string{"claude", "pi", "opencode", "kilo"} {
				w, err := s.NewWriter(ctx, src)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := w.AddMessage(ctx, compact.Message{UUID: "m", SessionID: "s-" + src, Role: compact.RoleUser,
					Blocks: []compact.Block{{Kind: compact.BlockText, Text: "hi"}}}); err != nil {
					t.Fatalf("%s: %v", src, err)
				}
				if err := w.Commit(ctx, nil); err != nil {
					t.Fatalf("%s: %v", src, err)
				}
				sess, err := s.Session(ctx, "s-"+src)
				if err != nil || sess.Source != src {
					t.Fatalf("%s: session %+v, %v", src, sess, err)
				}
			}
		})
	}
}

// TestFailedCommitReleasesItsConnection: a Commit that fails before the
// end (here: the writer's columns missing from an old schema) returns its
// error and gives the connection back; before, it waited for good on the
// connection its own open transaction held.
func TestFailedCommitReleasesItsConnection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openAt(t, filepath.Join(t.TempDir(), "ledger.db"))
	if err := s.MigrateDown(ctx, 8); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		w, err := s.NewWriter(ctx, "claude")
		if err != nil {
			done <- err
			return
		}
		defer w.Rollback()
		if _, err := w.AddMessage(ctx, compact.Message{UUID: "m", SessionID: "s", Role: compact.RoleUser,
			Blocks: []compact.Block{{Kind: compact.BlockText, Text: "hello"}}}); err != nil {
			done <- err
			return
		}
		done <- w.Commit(ctx, nil)
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a writer of a later schema committed into schema 8")
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("Commit never returned: it waits on the connection its transaction holds")
	}
	// The store is still usable: the pool got its connection back.
	if _, err := s.db.Exec(`INSERT INTO sessions (id, source) VALUES ('after', 'claude')`); err != nil {
		t.Fatal(err)
	}
}

// TestHandoffAttach: OpenCode and Kilo store a compaction before their
// pre-compaction event fires, so the ingest that the hook runs first reads
// the compaction; the hook's handoff then belongs to that compaction (one
// record, with the handoff), and a second hook for it writes nothing. On
// every backend.
func TestHandoffAttach(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := b.open(t)
			at := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
			w, err := s.NewWriter(ctx, "opencode")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.AddMessage(ctx, compact.Message{UUID: "m1", SessionID: "ses", Role: compact.RoleUser, Time: at.Add(-time.Minute),
				Blocks: []compact.Block{{Kind: compact.BlockText, Text: "hi"}}}); err != nil {
				t.Fatal(err)
			}
			bd := compact.NewBoundary("ses", "prt_c", "auto", at, 15500, 0)
			if _, err := w.AddBoundary(ctx, bd); err != nil {
				t.Fatal(err)
			}
			if err := w.Commit(ctx, nil); err != nil {
				t.Fatal(err)
			}
			rec := CompactionRecord{Source: "hook", Trigger: "auto", At: at.Add(2 * time.Second), Debounce: time.Minute, Attach: time.Minute}
			doc := handoff.Doc{Session: "ses", CreatedAt: rec.At, Trigger: "auto", Markdown: "# Handoff", Tokens: 3}
			id, written, err := s.AddHandoff(ctx, NewHandoff{Doc: doc, Record: &rec})
			if err != nil || !written {
				t.Fatalf("first handoff %d %v %v", id, written, err)
			}
			again, written, err := s.AddHandoff(ctx, NewHandoff{Doc: doc, Record: &rec})
			if err != nil || written || again != id {
				t.Fatalf("second handoff %d %v %v, want %d not written", again, written, err, id)
			}
			cs, err := s.Compactions(ctx, CompactionFilter{SessionID: "ses"})
			if err != nil || len(cs) != 1 {
				t.Fatalf("compactions %+v %v", cs, err)
			}
			if c := cs[0]; !known(c.HandoffID, id) || c.Source != "hook" || !known(c.PreTokens, 15500) {
				t.Errorf("compaction %+v", c)
			}
			if sess, err := s.Session(ctx, "ses"); err != nil || sess.Compactions != 1 {
				t.Errorf("session %+v %v", sess, err)
			}
			// Long after that compaction, a handoff gets a record of its own.
			rec.At, doc.CreatedAt = at.Add(time.Hour), at.Add(time.Hour)
			if _, written, err := s.AddHandoff(ctx, NewHandoff{Doc: doc, Record: &rec}); err != nil || !written {
				t.Fatalf("later handoff %v %v", written, err)
			}
			if cs, _ := s.Compactions(ctx, CompactionFilter{SessionID: "ses"}); len(cs) != 2 {
				t.Errorf("%d compactions after a later handoff", len(cs))
			}
		})
	}
}

// TestAgentSourcesMigratedOnce: processes that open a new ledger at once
// race to migrate it, and the second to run migration 9 must fail as
// every other migration does on the tables the first made (it would
// otherwise apply again, the CHECK being gone already, and goose would
// record it twice). The second process is played here as it runs: goose
// sees version 9 as not applied (it read the versions before the first
// committed) and applies it to a ledger that has it. Racing real opens
// for that moment caught a migration without its guard in under one run
// in ten; TestOpenTwice races them, every migration counted once.
func TestAgentSourcesMigratedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTemp(t)
	if _, err := s.db.Exec(`DELETE FROM goose_db_version WHERE version_id = 9`); err != nil {
		t.Fatal(err)
	}
	p, err := s.d.migrator(s.db)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	if _, err := p.ApplyVersion(ctx, 9, true); err == nil {
		t.Fatal("migration 9 applied again on a ledger that has it")
	}
	var n int
	if err := s.db.Get(&n, `SELECT count(*) FROM goose_db_version WHERE version_id = 9`); err != nil || n != 0 {
		t.Fatalf("migration 9 recorded %d times by the second run (%v)", n, err)
	}
}
