package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/store/storetest"
	"github.com/agentledger/ledger/transcript/transcripttest"
)

type handoffOut struct {
	ID            int64    `json:"id"`
	Session       string   `json:"session"`
	Project       string   `json:"project"`
	CreatedAt     string   `json:"created_at"`
	Trigger       string   `json:"trigger"`
	Task          string   `json:"task"`
	FilesModified []string `json:"files_modified"`
	Decisions     []string `json:"decisions"`
	TestsRun      []struct {
		Command string `json:"command"`
		Status  string `json:"status"`
	} `json:"tests_run"`
	Errors    []string `json:"errors"`
	Blockers  []string `json:"blockers"`
	NextSteps []string `json:"next_steps"`
	Context   string   `json:"context"`
	Tokens    int      `json:"tokens"`
	Markdown  string   `json:"markdown"`
}

func TestCompactWritesHandoffAndRecord(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	project := filepath.Join(home, "src", "payments")
	os.MkdirAll(project, 0o755)
	const id = "aaaaaaaa-1111-4222-8333-444444444444"
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	ingest(t, home, db, sampleInProject(t, home, project, id))

	r := runCmd(t, home, "", "--db", db, "compact", "aaaa", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var raw map[string]any
	decodeJSON(t, r.stdout, &raw)
	for _, k := range []string{"id", "session", "project", "created_at", "trigger", "task", "files_modified", "decisions",
		"tests_run", "errors", "blockers", "next_steps", "context", "tokens", "markdown"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("handoff object lacks %q", k)
		}
	}
	var h handoffOut
	decodeJSON(t, r.stdout, &h)
	if h.ID == 0 || h.Session != id || h.Trigger != "manual" || len(h.FilesModified) != 4 || len(h.NextSteps) == 0 {
		t.Errorf("handoff = %+v", h)
	}
	if got := compact.DefaultEstimator().Tokens(h.Markdown); got != h.Tokens || got > 800 {
		t.Errorf("tokens = %d (counted %d), want <= 800 and exact", h.Tokens, got)
	}
	// The file: in the project, owner-only, the same Markdown.
	files, _ := filepath.Glob(filepath.Join(engine.HandoffsDir(db, project), id, "*.md"))
	if len(files) != 1 {
		t.Fatalf("handoff files %v, want one", files)
	}
	b, _ := os.ReadFile(files[0])
	if string(b) != h.Markdown {
		t.Error("the file's Markdown differs from the ledger's")
	}
	if fi, _ := os.Stat(files[0]); fi.Mode().Perm() != 0o600 {
		t.Errorf("handoff file mode %v", fi.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(engine.HandoffsDir(db, project), id, ".*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	// The compaction record: source cli, linked to the handoff.
	rows := auditRows(t, home, db)
	last := rows[len(rows)-1]
	if last.Source != "cli" || last.HandoffID == nil || *last.HandoffID != h.ID || last.PreTokens == nil {
		t.Errorf("compaction record %+v, want source cli linked to handoff %d", last, h.ID)
	}
	// show by id and by session, list.
	for _, arg := range []string{"1", "aaaa"} {
		s := runCmd(t, home, "", "--db", db, "handoff", "show", arg)
		if s.code != 0 || s.stdout != h.Markdown {
			t.Errorf("handoff show %s: exit %d, not the same Markdown", arg, s.code)
		}
	}
	l := runCmd(t, home, "", "--db", db, "handoff", "list", "--json")
	var list []handoffOut
	decodeJSON(t, l.stdout, &list)
	if len(list) != 1 || list[0].ID != h.ID {
		t.Errorf("handoff list = %+v", list)
	}

	// --out, --budget, --task, --trigger
	out := filepath.Join(home, "HANDOFF.md")
	r = runCmd(t, home, "", "--db", db, "compact", id, "--out", out, "--budget", "300", "--task", "Ship the clock fix", "--trigger", "auto", "--json")
	decodeJSON(t, r.stdout, &h)
	if b, err := os.ReadFile(out); err != nil || string(b) != h.Markdown {
		t.Errorf("--out file: %v", err)
	}
	if h.Tokens > 300 || h.Task != "Ship the clock fix" || h.Trigger != "auto" || len(h.FilesModified) != 4 {
		t.Errorf("budgeted handoff = tokens %d task %q trigger %q files %d", h.Tokens, h.Task, h.Trigger, len(h.FilesModified))
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"compact", "ffff"}, 3},
		{[]string{"compact", id, "--trigger", "sometimes"}, 2},
		{[]string{"compact", id, "--budget", "10"}, 2},
		{[]string{"handoff", "show", "999"}, 3},
		{[]string{"handoff", "show", "0199"}, 3},
	} {
		if r := runCmd(t, home, "", append([]string{"--db", db}, tc.args...)...); r.code != tc.code {
			t.Errorf("%v: exit %d, want %d (%s)", tc.args, r.code, tc.code, r.stderr)
		}
	}
}

// TestCompactCorpusListsEveryEditedFile: the handoff of a real session
// lists every file its Edit/Write calls touched (but a file it created and
// then removed with rm, which changed nothing), and its Markdown names them
// all within the default budget by the meter's estimator. (Calls that
// failed still count here: the expected set is taken at its widest.)
func TestCompactCorpusListsEveryEditedFile(t *testing.T) {
	t.Parallel()
	corpus := corpusDir(t)
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	for _, s := range []string{"258c7280-ae70-4798-800f-63464d01a85d", "ae4a77f8-aedd-4bc1-888f-c94edc91af04"} {
		path := filepath.Join(corpus, "claude", "spotter-"+s+".jsonl")
		ingestBin(t, home, db, path) // the starting point: compact runs in-process
		want := transcripttest.NotRemoved(t, path, transcripttest.EditedFiles(t, path))
		r := runCmd(t, home, "", "--db", db, "compact", s, "--json")
		if r.code != 0 {
			t.Fatalf("compact %s: %s", s, r.stderr)
		}
		var h handoffOut
		decodeJSON(t, r.stdout, &h)
		got := map[string]bool{}
		for _, f := range h.FilesModified {
			got[f] = true
		}
		for _, f := range want {
			if !got[f] {
				t.Errorf("%s: %s was edited but is not in files_modified", s[:8], f)
			}
			if !strings.Contains(h.Markdown, filepath.Base(f)) {
				t.Errorf("%s: %s is not named in the Markdown", s[:8], f)
			}
		}
		if h.Tokens > handoff.DefaultBudget || compact.DefaultEstimator().Tokens(h.Markdown) > handoff.DefaultBudget {
			t.Errorf("%s: %d tokens, want <= %d", s[:8], h.Tokens, handoff.DefaultBudget)
		}
		t.Logf("%s: %d edited files, handoff %d tokens", s[:8], len(want), h.Tokens)
	}
}
