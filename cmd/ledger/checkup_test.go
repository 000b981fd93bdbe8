package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentledger/ledger/store/storetest"
)

type checkupJSON struct {
	Integrity string `json:"integrity"`
	Bytes     int64  `json:"bytes"`
	Hooks     []struct {
		Agent     string   `json:"agent"`
		Events    []string `json:"events"`
		Missing   []string `json:"missing"`
		Elsewhere []string `json:"elsewhere"`
	} `json:"hooks"`
	Receipts []struct {
		Event   string `json:"event"`
		Outcome string `json:"outcome"`
	} `json:"last_hook_receipts"`
	Transcripts []struct {
		Agent  string `json:"agent"`
		Found  bool   `json:"found"`
		Files  int    `json:"files"`
		Behind int    `json:"files_behind"`
		Bytes  int64  `json:"bytes_behind"`
	} `json:"transcripts"`
	Excluded []struct {
		Project string `json:"project"`
		How     string `json:"how"`
	} `json:"excluded_projects"`
	FTSSegments map[string]int64 `json:"fts_segments"`
	Problems    []string         `json:"problems"`
}

func doctorJSON(t *testing.T, home, db string) checkupJSON {
	t.Helper()
	r := runCmd(t, home, "", "--db", db, "doctor", "--json")
	if r.code != 0 {
		t.Fatalf("doctor: exit %d, %s", r.code, r.stderr)
	}
	var c checkupJSON
	decodeJSON(t, r.stdout, &c)
	return c
}

// Doctor checks the set-up: hooks installed and running this binary (a
// Codex hooks.json running another), the last receipt of each event, the
// transcripts not yet ingested, the projects kept out, the FTS segments.
func TestDoctorChecksTheSetUp(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	project := filepath.Join(home, "src", "payments")
	os.MkdirAll(project, 0o755)
	const id = "abababab-1111-4222-8333-444444444401"
	path := filepath.Join(home, ".claude", "projects", "-src-payments", id+".jsonl")
	os.MkdirAll(filepath.Dir(path), 0o700)
	if err := os.Rename(sampleInProject(t, home, project, id), path); err != nil {
		t.Fatal(err)
	}

	c := doctorJSON(t, home, db)
	if len(c.Hooks) != 2 || len(c.Hooks[0].Events) != 0 || len(c.Problems) == 0 {
		t.Errorf("before install: hooks %+v, problems %v", c.Hooks, c.Problems)
	}
	if tr := c.Transcripts[0]; tr.Agent != "claude" || !tr.Found || tr.Files != 1 || tr.Behind != 1 || tr.Bytes == 0 {
		t.Errorf("before ingest: claude transcripts %+v", tr)
	}
	if c.Transcripts[1].Found {
		t.Errorf("codex transcripts found: %+v", c.Transcripts[1])
	}

	if r := runCmd(t, home, "", "--db", db, "hooks", "install"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	codex := `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "ledger hook codex stop"}]}],
		"SessionStart": [{"hooks": [{"type": "command", "command": "other-tool start"}]}]}}`
	os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
	if err := os.WriteFile(filepath.Join(home, ".codex", "hooks.json"), []byte(codex), 0o600); err != nil {
		t.Fatal(err)
	}
	in := hookJSON(t, map[string]any{"session_id": id, "transcript_path": path, "cwd": project, "hook_event_name": "Stop"})
	for tries := 1; ; tries++ {
		if r := runCmd(t, home, in, "--db", db, "hook"); r.code != 0 {
			t.Fatal(r.stderr)
		}
		// A machine too busy for Stop's 1 s budget defers the new lines
		// to the next event, and says so in the receipt: run the next.
		rs := doctorJSON(t, home, db).Receipts
		if len(rs) != 1 || rs[0].Outcome != "deferred" || tries == 10 {
			break
		}
		t.Logf("Stop %d: %+v", tries, rs)
	}
	if r := runCmd(t, home, "", "--db", db, "pause", "--project", filepath.Join(home, "client")); r.code != 0 {
		t.Fatal(r.stderr)
	}

	c = doctorJSON(t, home, db)
	claude, cx := c.Hooks[0], c.Hooks[1]
	if claude.Agent != "claude" || len(claude.Events) != 5 || len(claude.Missing) != 0 || len(claude.Elsewhere) != 0 {
		t.Errorf("claude hooks after install: %+v", claude)
	}
	if cx.Agent != "codex" || strings.Join(cx.Events, ",") != "Stop" || strings.Join(cx.Elsewhere, ",") != "ledger" {
		t.Errorf("codex hooks: %+v (want Stop, running a bare ledger)", cx)
	}
	if len(c.Receipts) != 1 || c.Receipts[0].Event != "Stop" || c.Receipts[0].Outcome != "ok" {
		t.Errorf("receipts %+v", c.Receipts)
	}
	if tr := c.Transcripts[0]; tr.Behind != 0 || tr.Bytes != 0 {
		t.Errorf("after the Stop hook ingested: %+v", tr)
	}
	if len(c.Excluded) != 1 || c.Excluded[0].How != "paused" {
		t.Errorf("excluded %+v", c.Excluded)
	}
	if c.FTSSegments["messages_fts"] < 1 || c.Bytes == 0 || c.Integrity != "ok" {
		t.Errorf("segments %v, bytes %d", c.FTSSegments, c.Bytes)
	}
	r := runCmd(t, home, "", "--db", db, "doctor")
	for _, want := range []string{"full-text segments: compactions", "hooks (claude): ", "running this binary",
		"(not this binary)", "last Stop hook: ", "all ingested", home + "/client (paused)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("doctor lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "codex hooks run another ledger binary") {
		t.Errorf("doctor stderr: %s", r.stderr)
	}
}
