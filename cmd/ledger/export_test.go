package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/store/storetest"
)

// storedMessages reads every session's messages from a ledger file, with
// the session's source.
func storedMessages(t *testing.T, db string) (map[string][]compact.Message, map[string]store.Session) {
	t.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ss, err := s.Sessions(ctx, store.SessionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	msgs, sessions := map[string][]compact.Message{}, map[string]store.Session{}
	for _, sess := range ss {
		if msgs[sess.ID], err = s.Messages(ctx, sess.ID, 0); err != nil {
			t.Fatal(err)
		}
		sessions[sess.ID] = sess
	}
	return msgs, sessions
}

// Every session of the corpus (and the sample), exported as JSONL and
// ingested into a new ledger, gives back the same messages: for Codex the
// same but for their uuids, which are hashes of the rebuilt lines.
func TestExportedJSONLReingestsToTheSameMessages(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := filepath.Join(home, "a.db")
	ingestBin(t, home, db, corpusDir(t), sampleDir(t))
	want, before := storedMessages(t, db)
	sources := map[string]string{}
	for id, s := range before {
		sources[id] = s.Source
	}
	if len(want) < 3 {
		t.Fatalf("only %d sessions ingested", len(want))
	}
	out := filepath.Join(home, "export")
	for id, src := range sources {
		path := filepath.Join(out, "projects", "p", id+".jsonl")
		if src == "codex" {
			path = filepath.Join(out, "sessions", "rollout-2026-01-01T00-00-00-"+id+".jsonl")
		}
		if r := runCmd(t, home, "", "--db", db, "export", id, "--out", path); r.code != 0 {
			t.Fatalf("export %s: exit %d, %s", id, r.code, r.stderr)
		}
	}
	db2 := filepath.Join(home, "b.db")
	res := ingestBin(t, home, db2, out)
	if len(res.Skips) != 0 {
		t.Errorf("the exported files have lines the readers skip: %+v", res.Skips)
	}
	got, after := storedMessages(t, db2)
	total := 0
	for id, w := range want {
		b, a := before[id], after[id]
		if a.Project != b.Project || a.GitBranch != b.GitBranch || a.Title != b.Title || a.Model != b.Model ||
			a.Compactions != b.Compactions || a.Source != b.Source || a.StartedAt != b.StartedAt {
			t.Errorf("%s: session back as %+v, want %+v", id, a, b)
		}
		g := got[id]
		if sources[id] == "codex" {
			w, g = withoutUUIDs(w), withoutUUIDs(g)
		}
		total += len(w)
		if len(g) != len(w) {
			t.Errorf("%s (%s): %d messages back, want %d", id, sources[id], len(g), len(w))
			continue
		}
		for i := range w {
			if !reflect.DeepEqual(g[i], w[i]) {
				gj, _ := json.Marshal(g[i])
				wj, _ := json.Marshal(w[i])
				t.Errorf("%s (%s) message %d:\n got %.600s\nwant %.600s", id, sources[id], i, gj, wj)
				break
			}
		}
	}
	t.Logf("%d sessions, %d messages: exported and read back the same", len(want), total)
}

func withoutUUIDs(ms []compact.Message) []compact.Message {
	out := make([]compact.Message, len(ms))
	for i, m := range ms {
		m.UUID, m.ParentUUID = "", ""
		out[i] = m
	}
	return out
}

// --restore puts the transcript where Claude Code looks, never over a
// file, and marks it read (ingest adds nothing); --format md is readable.
func TestExportRestoreAndMarkdown(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	project := filepath.Join(home, "src", "payments")
	os.MkdirAll(project, 0o755)
	const id = "ffffffff-1111-4222-8333-444444444401"
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	src := sampleInProject(t, home, project, id)
	ingest(t, home, db, src)

	r := runCmd(t, home, "", "--db", db, "export", "ffff", "--restore")
	want := filepath.Join(home, ".claude", "projects", strings.NewReplacer("/", "-", ".", "-", "_", "-").Replace(project), id+".jsonl")
	if r.code != 0 || !strings.Contains(r.stderr, "written to "+want) {
		t.Fatalf("export --restore: exit %d, %s", r.code, r.stderr)
	}
	if _, err := os.Stat(want); err != nil {
		t.Fatal(err)
	}
	if res := ingest(t, home, db, want); res.Messages != 0 {
		t.Errorf("ingest of the restored file added %d messages", res.Messages)
	}
	if r = runCmd(t, home, "", "--db", db, "export", "ffff", "--restore"); r.code != exitFailure || !strings.Contains(r.stderr, "there already") {
		t.Errorf("a second --restore: exit %d, %s", r.code, r.stderr)
	}
	r = runCmd(t, home, "", "--db", db, "export", "ffff", "--format", "md")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "# Fix flaky session expiry test in payments auth\n") ||
		!strings.Contains(r.stdout, " · assistant · 2026-03-02") || !strings.Contains(r.stdout, "**Bash** call") {
		t.Errorf("export --format md: exit %d, %.500s", r.code, r.stdout)
	}
	if r = runCmd(t, home, "", "--db", db, "export", "ffff", "--format", "html"); r.code != exitUsage {
		t.Errorf("--format html: exit %d", r.code)
	}
}
