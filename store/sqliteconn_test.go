package store

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
)

// TestPlainSQLiteUnaffected: a program that imports store and opens a
// SQLite database of its own through the "sqlite" driver gets SQLite's
// defaults: its WAL is deleted when its last connection closes. Only the
// connections the store opens keep their WAL between processes
// (persistWAL).
func TestPlainSQLiteUnaffected(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()

	plain := filepath.Join(dir, "plain.db")
	db, err := sql.Open("sqlite", "file:"+plain+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (x); INSERT INTO t VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	var mode string
	if err := db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v; want wal", mode, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(plain + "-wal"); !os.IsNotExist(err) {
		t.Errorf("a plain sql.Open(\"sqlite\") connection kept its WAL (%v): store's connection hook reached it", err)
	}

	ledger := filepath.Join(dir, "ledger.db")
	s, err := Open(ctx, ledger)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ledger + "-wal"); err != nil {
		t.Errorf("the store's own connections did not keep their WAL: %v", err)
	}
}
