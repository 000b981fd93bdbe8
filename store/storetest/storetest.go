// Package storetest gives other packages' tests new ledgers that are
// already migrated: copies of a template made once per test process, so
// that a test whose subject is not the migrations does not pay for them
// (under -race, migrating a new SQLite file costs ~0.6 CPU-seconds; a
// PostgreSQL database, every migration's statements on the server).
// Package store's own tests have the same helpers inside the package,
// where TestTemplateIsAFreshLedger checks that a copy is what Open makes.
package storetest

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/store/pgtest"
)

// sqliteTemplate is a migrated ledger file's bytes, made by store.Open
// once per test process.
var sqliteTemplate = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "ledger-template-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "ledger.db")
	s, err := store.Open(context.Background(), path)
	if err != nil {
		return nil, err
	}
	// Closing checkpoints the WAL into the file and empties it: the file
	// alone is the ledger.
	if err := s.Close(); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
})

// MigratedFile writes a migrated ledger at path (its folder made as
// store.Open makes it, owner-only) and returns path.
func MigratedFile(t testing.TB, path string) string {
	t.Helper()
	b, err := sqliteTemplate()
	if err != nil {
		t.Fatalf("make the template ledger: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// MigratedPG returns a new, migrated database on the test server, dropped
// when t ends (it skips t, or fails it in CI, without a server: see
// pgtest.Server).
func MigratedPG(t testing.TB) string {
	t.Helper()
	return pgtest.Migrated(t, "storetest", func(url string) error {
		s, err := store.Open(context.Background(), url, store.WithLocalPath(filepath.Join(os.TempDir(), "ledger-template.db")))
		if err != nil {
			return err
		}
		return s.Close()
	})
}
