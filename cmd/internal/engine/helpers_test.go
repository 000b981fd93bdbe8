package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/store/storetest"
)

// engineOf is an engine over an open store.
func engineOf(s *store.Store) *Engine {
	return newEngine(Config{DB: s.Path(), Mode: Write}, func(context.Context) (*store.Store, error) { return s, nil })
}

// openEngine is an engine over a new ledger in a temporary folder (a copy
// of a migrated one: see storetest).
func openEngine(t testing.TB) (*Engine, *store.Store) {
	t.Helper()
	s, err := store.Open(context.Background(), storetest.MigratedFile(t, filepath.Join(t.TempDir(), "ledger.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return engineOf(s), s
}

// rawDB opens a ledger's file apart from the store, for tests that look at
// (or fill) its tables directly. The program itself never does: every
// statement it runs is in package store.
func rawDB(t testing.TB, path string) *sqlx.DB {
	t.Helper()
	db, err := sqlx.Open("sqlite", store.DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// sampleDir is testdata/sample: a Claude Code session and a Codex rollout.
func sampleDir(t testing.TB) string {
	t.Helper()
	return filepath.Join("..", "..", "..", "testdata", "sample")
}

// corpusFile is a file of the real corpus whose name starts with prefix
// under sub (claude or codex); the test is skipped when the corpus is not
// there, unless LEDGER_REQUIRE_CORPUS is set.
func corpusFile(t testing.TB, sub, prefix string) string {
	t.Helper()
	dir := os.Getenv("LEDGER_CORPUS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "..", "shared", "corpus")
	}
	entries, err := os.ReadDir(filepath.Join(dir, sub))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) && strings.HasSuffix(e.Name(), ".jsonl") {
			return filepath.Join(dir, sub, e.Name())
		}
	}
	if os.Getenv("LEDGER_REQUIRE_CORPUS") != "" {
		t.Fatalf("corpus file %s/%s* not found in %s (%v)", sub, prefix, dir, err)
	}
	t.Skipf("corpus not found at %s", dir)
	return ""
}
