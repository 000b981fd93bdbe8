package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/store/storetest"
)

func TestForgetRemovesEverythingAndStaysForgotten(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	project := filepath.Join(home, "src", "payments")
	os.MkdirAll(project, 0o755)
	const id = "bbbbbbbb-1111-4222-8333-444444444444"
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	transcript := sampleInProject(t, home, project, id)
	ingest(t, home, db, transcript, filepath.Join(sampleDir(t), "codex"))
	if r := runCmd(t, home, "", "--db", db, "compact", id); r.code != 0 {
		t.Fatal(r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(engine.HandoffsDir(db, project), id, "*.md"))
	if len(files) != 1 {
		t.Fatalf("handoff files: %v", files)
	}
	if hits, _ := search(t, home, db, "SessionStore", "--session", id); len(hits) == 0 {
		t.Fatal("nothing to forget: no hits before")
	}

	// --dry-run counts and changes nothing.
	r := runCmd(t, home, "", "--db", db, "forget", "bbbb", "--dry-run", "--json")
	var dry struct {
		Session      string   `json:"session"`
		Messages     int      `json:"messages"`
		Handoffs     int      `json:"handoffs"`
		Compactions  int      `json:"compactions"`
		HandoffFiles []string `json:"handoff_files"`
	}
	decodeJSON(t, r.stdout, &dry)
	if dry.Session != id || dry.Messages != 28 || dry.Handoffs != 1 || dry.Compactions != 2 || len(dry.HandoffFiles) != 1 {
		t.Errorf("dry run = %+v", dry)
	}
	if hits, _ := search(t, home, db, "SessionStore", "--session", id); len(hits) == 0 {
		t.Error("--dry-run deleted something")
	}

	r = runCmd(t, home, "", "--db", db, "forget", "bbbb", "--files")
	if r.code != 0 {
		t.Fatalf("forget: %s", r.stderr)
	}
	if _, err := os.Stat(files[0]); !os.IsNotExist(err) {
		t.Errorf("--files left the handoff file (%v)", err)
	}
	// The forgotten text is gone from the bytes on disk too (secure_delete,
	// WAL truncated), not only from queries.
	for _, f := range []string{db, db + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("STRIPE_TEST_KEY")) || bytes.Contains(b, []byte("WithClock option")) {
			t.Errorf("%s still holds the forgotten session's text", filepath.Base(f))
		}
	}
	// Nothing of it is searchable, listed or audited; the other session is whole.
	for _, q := range []string{"SessionStore", "session_store.go", "TestSessionExpiry", "clock"} {
		hits, _ := search(t, home, db, q)
		for _, h := range hits {
			if h.Session == id {
				t.Errorf("search %q still finds the forgotten session: %+v", q, h)
			}
		}
	}
	if _, ok := sessionMessages(t, home, db)[id]; ok {
		t.Error("the session is still listed")
	}
	for _, row := range auditRows(t, home, db) {
		if row.Session == id {
			t.Errorf("audit still has %+v", row)
		}
	}
	if got := sessionMessages(t, home, db)["0199f3a2-7d4e-7c10-b2a9-5e8f1d3c6a20"]; got != 16 {
		t.Errorf("the other session has %v messages, want 16", got)
	}
	d := runCmd(t, home, "", "--db", db, "doctor", "--json")
	var health struct {
		Integrity string `json:"integrity"`
		FTS       string `json:"fts"`
	}
	decodeJSON(t, d.stdout, &health)
	if d.code != 0 || health.Integrity != "ok" || health.FTS != "ok" {
		t.Errorf("doctor after forget: exit %d %+v", d.code, health)
	}
	// Ingesting the transcript again does not bring it back.
	again := ingest(t, home, db, transcript)
	if again.Messages != 0 || again.Sessions != 0 {
		t.Errorf("re-ingest brought back %+v", again)
	}
	if r := runCmd(t, home, "", "--db", db, "forget", "bbbb"); r.code != 3 {
		t.Errorf("forgetting it twice: exit %d, want 3", r.code)
	}
}

func TestDoctorRebuild(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	ingest(t, home, db, sampleDir(t))
	r := runCmd(t, home, "", "--db", db, "doctor", "--rebuild", "--json")
	var h struct {
		Integrity string `json:"integrity"`
		FTS       string `json:"fts"`
		Sessions  int    `json:"sessions"`
		Messages  int    `json:"messages"`
		Bytes     int64  `json:"bytes"`
		Rebuilt   bool   `json:"rebuilt"`
	}
	decodeJSON(t, r.stdout, &h)
	if r.code != 0 || h.Integrity != "ok" || h.FTS != "ok" || h.Sessions != 2 || h.Messages != 44 || h.Bytes == 0 || !h.Rebuilt {
		t.Errorf("doctor --rebuild: exit %d %+v", r.code, h)
	}
	if hits, _ := search(t, home, db, "reserve"); len(hits) == 0 {
		t.Error("no hits after rebuild")
	}
}
