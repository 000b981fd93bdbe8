package store

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/agentledger/ledger/compact"
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
	for _, src := range []string{"claude", "codex"} {
		if err := add(src, "s-"+src); err != nil {
			t.Fatal(err)
		}
	}
	if err := add("pi", "s-pi"); err == nil {
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
	if err := s.db.Get(&n, `SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'hello'`); err != nil || n != 5 {
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
	if err := add("opencode", "s-oc2"); err == nil {
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
