package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/agentledger/ledger/store"
)

// corpusDir is the real transcript corpus: $LEDGER_CORPUS, else
// ../shared/corpus beside the repository. Tests that need it skip when it
// is absent, unless $LEDGER_REQUIRE_CORPUS is set (CI), where that fails.
func corpusDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("LEDGER_CORPUS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "corpus")
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if os.Getenv("LEDGER_REQUIRE_CORPUS") != "" {
			t.Fatalf("corpus not found at %s (LEDGER_REQUIRE_CORPUS is set)", dir)
		}
		t.Skipf("corpus not found at %s: set LEDGER_CORPUS to run this test", dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// corpusPart is a part of the corpus, as paths to ingest: both Codex
// sessions (one compacted) and four small Claude Code ones, 1.4 of its
// 8 MB. For the tests whose point is how several writers or backends
// share sessions, not how much of them there is.
func corpusPart(t *testing.T) []string {
	t.Helper()
	corpus := corpusDir(t)
	paths := []string{filepath.Join(corpus, "codex")}
	for _, f := range []string{"ccviewer-1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl", "spotter-short.jsonl",
		"spotter-tool_heavy.jsonl", "spotter-subagent.jsonl"} {
		paths = append(paths, filepath.Join(corpus, "claude", f))
	}
	return paths
}

// sampleDir is the sample data bundled in testdata/sample.
func sampleDir(t *testing.T) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("..", "..", "testdata", "sample"))
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// rawDB opens a ledger's file apart from the store, for tests that look at
// its tables directly (the program itself never does: every statement it
// runs is in package store).
func rawDB(t testing.TB, path string) *sqlx.DB {
	t.Helper()
	db, err := sqlx.Open("sqlite", store.DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
