package store

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadOnly: a read-only store reads what a writer wrote, even while the
// writer holds its write lock, and SQLite refuses its every write; it
// neither creates nor migrates a database.
func TestReadOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	if _, err := Open(ctx, path, ReadOnly()); !errors.As(err, new(*NoLedgerError)) || !strings.Contains(err.Error(), "no ledger at "+path) {
		t.Fatalf("read-only open of a missing database: %v, want an error saying there is no ledger there", err)
	}
	rw, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	if _, err := rw.db.Exec(`INSERT INTO sessions (id, source, project) VALUES ('s1', 'claude', '/p')`); err != nil {
		t.Fatal(err)
	}
	ro, err := Open(ctx, path, ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if !ro.ReadOnly() || ro.Redacts() {
		t.Errorf("ReadOnly() = %v, Redacts() = %v; want true, false", ro.ReadOnly(), ro.Redacts())
	}

	// A writer mid-transaction does not block the reader (WAL).
	w, err := rw.NewWriter(ctx, "claude")
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	if s, err := ro.Session(rctx, "s1"); err != nil || s.Project != "/p" {
		t.Errorf("read during a write transaction: %+v, %v", s, err)
	}
	cancel()
	w.Rollback()

	if _, err := ro.AddNote(ctx, Note{SessionID: "s1", Kind: "decision", Text: "x", CreatedAt: time.Now()}); err == nil ||
		!strings.Contains(err.Error(), "readonly") {
		t.Errorf("AddNote on a read-only store: %v, want SQLite's readonly error", err)
	}
	var n int
	if err := rw.db.Get(&n, `SELECT count(*) FROM notes`); err != nil || n != 0 {
		t.Errorf("notes = %d, %v; want 0", n, err)
	}
}

// TestReadOnlyMigratesFirst: a read-only store of an older schema (a
// newer ledger binary's first read) migrates it first, then reads only.
func TestReadOnlyMigratesFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	rw, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := rw.MigrateDown(ctx, 1); err != nil {
		t.Fatal(err)
	}
	rw.Close()
	ro, err := Open(ctx, path, ReadOnly())
	if err != nil {
		t.Fatalf("read-only open of an old schema: %v", err)
	}
	defer ro.Close()
	want, _ := TargetVersion()
	if have, err := ro.SchemaVersion(ctx); err != nil || have != want {
		t.Errorf("schema %d (%v), want %d", have, err, want)
	}
	if _, err := ro.AddNote(ctx, Note{SessionID: "x", Kind: "next", Text: "y"}); err == nil {
		t.Error("the migrated read-only store wrote")
	}
}
