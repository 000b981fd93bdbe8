package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/store/storetest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/json/golden")

// goldenSessions are the sessions of the golden ledger: the sample's
// Claude Code and Codex sessions, one whose transcript has no time at all
// (its times unknown) and a cost, and one whose compaction stated no
// tokens (its pre_tokens unknown).
var goldenSessions = []string{
	"7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57", // sample, Claude Code
	"0199f3a2-7d4e-7c10-b2a9-5e8f1d3c6a20", // sample, Codex
	"3f0a9b17-0c2d-4e5f-8a6b-7c8d9e0f1a2b", // no times, a cost
	"8b2c4d6e-1f3a-4b5c-9d7e-0a1b2c3d4e5f", // a compaction with no tokens
}

// TestJSONGolden: the --json documents of docs/contract.md that carry
// stored times, counts and costs (sessions, audit and its --loss, search,
// handoff list and show, resume) and export's JSONL and Markdown, for
// one ledger, are byte for byte what testdata/json holds, on SQLite and on
// PostgreSQL alike. The ledger holds each kind of unknown a listing shows
// as null: a session with no times and no cost, a compaction with no
// pre_tokens and no handoff, a hit with no time. go test -run
// TestJSONGolden -update rewrites the files from SQLite.
func TestJSONGolden(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		home := t.TempDir()
		checkJSONGolden(t, home, filepath.Join(home, "ledger.db"), *update)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		checkJSONGolden(t, t.TempDir(), storetest.MigratedPG(t), false)
	})
}

// goldenLedger runs command lines on the ledger at db, at a fixed clock,
// and returns what they print.
func goldenLedger(t *testing.T, home, db string) func(args ...string) string {
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	return func(args ...string) string {
		t.Helper()
		c := newCmd(home, "", "LEDGER_HOST=golden-host")
		c.app.Now = func() time.Time { return now }
		r := c.run(append([]string{"--db", db}, args...)...)
		if r.code != 0 {
			t.Fatalf("ledger %s: exit %d, %s", strings.Join(args, " "), r.code, r.stderr)
		}
		return r.stdout
	}
}

// fillGoldenLedger writes the golden ledger at db.
func fillGoldenLedger(t *testing.T, home, db string) func(args ...string) string {
	ledger := goldenLedger(t, home, db)
	input, err := filepath.Abs(filepath.Join("..", "..", "testdata", "json", "input"))
	if err != nil {
		t.Fatal(err)
	}
	ledger("ingest", sampleDir(t), input)
	// A clear of the sample's Claude Code session: a cli record with a
	// handoff, written at the fixed clock.
	ledger("compact", goldenSessions[0], "--task", "Fix the flaky session expiry test", "--out", filepath.Join(home, "handoff.md"))
	return ledger
}

func checkJSONGolden(t *testing.T, home, db string, rewrite bool) {
	ledger := fillGoldenLedger(t, home, db)

	outputs := map[string]string{
		"sessions.json":   ledger("sessions", "--json"),
		"audit.json":      ledger("audit", "--json"),
		"search.json":     ledger("search", "--json", "certificates OR queue OR expiry"),
		"handoffs.json":   ledger("handoff", "list", "--json"),
		"handoff.json":    ledger("handoff", "show", goldenSessions[0], "--json"),
		"resume.json":     ledger("resume", goldenSessions[0], "--format", "json"),
		"audit-loss.json": ledger("audit", "--loss", "--json"),
	}
	for i, id := range goldenSessions {
		outputs["export-"+string(rune('a'+i))+".jsonl"] = ledger("export", id)
		outputs["export-"+string(rune('a'+i))+".md"] = ledger("export", id, "--format", "md")
	}
	dir := filepath.Join("..", "..", "testdata", "json", "golden")
	if rewrite {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A SQLite ledger names its sessions' machine by os.Hostname,
	// whatever $LEDGER_HOST says (that is for a server's).
	host, _ := os.Hostname()
	for name, got := range outputs {
		got = strings.ReplaceAll(got, home, "$HOME")
		for _, h := range []string{host, "golden-host"} {
			got = strings.ReplaceAll(got, `"host": "`+h+`"`, `"host": "$HOST"`)
		}
		if strings.HasSuffix(name, ".json") {
			var v any
			if err := json.Unmarshal([]byte(got), &v); err != nil {
				t.Errorf("%s is not one JSON document: %v", name, err)
			}
		}
		path := filepath.Join(dir, name)
		if rewrite {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := strings.Split(got, "\n"), strings.Split(string(want), "\n"); !slices.Equal(g, w) {
			i := 0
			for i < min(len(g), len(w)) && g[i] == w[i] {
				i++
			}
			t.Errorf("%s differs from %s at line %d:\n got: %q\nwant: %q", name, path, i+1, strings.Join(g[i:min(i+3, len(g))], "\n"), strings.Join(w[i:min(i+3, len(w))], "\n"))
		}
	}
}

// TestSyncKeepsUnknowns: `ledger sync` of the golden ledger to a server
// keeps the values that may be unknown as they were, null for null: the
// sessions' times and costs, and the compactions' times and token counts.
func TestSyncKeepsUnknowns(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	local, url := filepath.Join(home, "ledger.db"), storetest.MigratedPG(t)
	ledger := fillGoldenLedger(t, home, local)
	ledger("sync", "--to", url)
	server := goldenLedger(t, home, url)
	for _, c := range []struct {
		args []string
		keys []string
	}{
		{[]string{"sessions", "--json"}, []string{"id", "started_at", "last_at", "cost_usd", "lines_added", "lines_removed"}},
		{[]string{"audit", "--json"}, []string{"session", "at", "trigger", "source", "pre_tokens", "post_tokens"}},
	} {
		var want, got []map[string]any
		decodeJSON(t, ledger(c.args...), &want)
		decodeJSON(t, server(c.args...), &got)
		for _, rows := range [][]map[string]any{want, got} {
			for i, r := range rows {
				kept := map[string]any{}
				for _, k := range c.keys {
					kept[k] = r[k]
				}
				rows[i] = kept
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s on the server:\n%v\nwant\n%v", strings.Join(c.args, " "), got, want)
		}
	}
}
