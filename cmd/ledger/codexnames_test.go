package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentledger/ledger/store/storetest"
)

// TestCodexThreadNames: a Codex session named in Codex's session index
// (~/.codex/session_index.jsonl) has that name as its title, the latest
// naming holding, beating the first request; the index is untrusted: a
// name with terminal control is made plain, a long one cut, and lines
// that are not an entry are passed over.
func TestCodexThreadNames(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	layOutCorpus(t, home)
	// The Claude Code sessions are not this test's: without them the
	// ingest (in-process, where the names are read) reads the two Codex
	// ones only.
	if err := os.RemoveAll(filepath.Join(home, ".claude", "projects")); err != nil {
		t.Fatal(err)
	}
	const a, b = "019c8a4c-ed82-79a1-aa28-7738fc5ab61a", "019c8a59-e9dd-71f0-9ae3-4079fe9726a9"
	long := strings.Repeat("very long name ", 40)
	index := `{"id":"` + a + `","thread_name":"first name","updated_at":"2026-02-23T12:41:00Z"}` + "\n" +
		`not json` + "\n" +
		`{"id":"../../etc/passwd","thread_name":"not an id"}` + "\n" +
		`{"id":"` + a + `","thread_name":"Fix the \u001b[31mpush\u001b[0m\nretry","updated_at":"2026-02-23T12:42:00Z"}` + "\n" +
		`{"id":"` + b + `","thread_name":"` + long + `","updated_at":"2026-02-23T12:55:00Z"}` + "\n"
	if err := os.WriteFile(filepath.Join(home, ".codex", "session_index.jsonl"), []byte(index), 0o600); err != nil {
		t.Fatal(err)
	}
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	if r := runCmd(t, home, "", "--db", db, "ingest"); r.code != 0 {
		t.Fatalf("ingest: %d %s", r.code, r.stderr)
	}
	var list []struct{ ID, Title string }
	decodeJSON(t, runCmd(t, home, "", "--db", db, "sessions", "--json", "--agent", "codex").stdout, &list)
	titles := map[string]string{}
	for _, s := range list {
		titles[s.ID] = s.Title
	}
	if got, want := titles[a], "Fix the [31mpush [0m retry"; got != want {
		t.Errorf("title of %s = %q, want %q (the latest name, made one plain line)", a, got, want)
	}
	if got := titles[b]; !strings.HasPrefix(got, "very long name very long name") || !strings.HasSuffix(got, "…") || len([]rune(got)) != 120 {
		t.Errorf("title of %s = %q (%d characters), want the name cut to 120", b, got, len([]rune(got)))
	}
}
