package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentledger/ledger/store/storetest"
)

// TestAuditLoss: `ledger audit --loss` prints each compaction's counts,
// summary beside handoff, and what the summary dropped; --json is the
// engine's report; a bad combination is a usage error.
func TestAuditLoss(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	if r := runCmd(t, home, "", "--db", db, "ingest", sampleDir(t)); r.code != 0 {
		t.Fatalf("ingest: %d %s", r.code, r.stderr)
	}
	r := runCmd(t, home, "", "--db", db, "audit", "--loss", "7c1d")
	if r.code != 0 {
		t.Fatalf("audit --loss: %d %s", r.code, r.stderr)
	}
	for _, want := range []string{"compaction 1 · 7c1d9e42", "SUMMARY", "HANDOFF", "files      3/3 kept",
		"all        7 kept, 2 dropped", "dropped by the summary:", "  - request: TestSessionExpiry in pkg/auth",
		"used after (first 4 tool calls): 4 items; the summary carried 2 (50%); the handoff carried 4 (100%)",
		"  - command go test: not in the summary\n",
		"used after 1 compaction: 4 items; summaries carried 2 (50%) in 136 tokens; handoffs carried 4 (100%)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("audit --loss output lacks %q:\n%s", want, r.stdout)
		}
	}
	r = runCmd(t, home, "", "--db", db, "audit", "--loss", "--json")
	var reports []struct {
		Compaction int64  `json:"compaction"`
		Session    string `json:"session"`
		Summary    *struct {
			Tokens   int `json:"tokens"`
			Dropped  int `json:"dropped"`
			Sections []struct {
				Name string `json:"name"`
			} `json:"sections"`
		} `json:"summary"`
		Handoff struct {
			ID     *int64 `json:"id"`
			Tokens int    `json:"tokens"`
		} `json:"handoff"`
		UsedAfter *struct {
			Calls, Total, Summary, Handoff int
			Items                          []struct {
				Kind, Text       string
				Summary, Handoff bool
			}
		} `json:"used_after"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &reports); err != nil || r.code != 0 {
		t.Fatalf("audit --loss --json: %d %v\n%s", r.code, err, r.stdout)
	}
	if len(reports) != 2 || reports[0].Summary == nil || len(reports[0].Summary.Sections) != 5 || reports[0].Handoff.Tokens == 0 {
		t.Errorf("reports: %+v", reports)
	}
	if u := reports[0].UsedAfter; u == nil || u.Total != 4 || u.Summary != 2 || u.Handoff != 4 || len(u.Items) != 4 {
		t.Errorf("used_after: %+v", u)
	}
	if r := runCmd(t, home, "", "--db", db, "audit", "--loss", "--since", "7d"); r.code != 2 {
		t.Errorf("--loss --since: exit %d, want 2 (usage)", r.code)
	}
	if r := runCmd(t, home, "", "--db", db, "audit", "--loss", "nosuch"); r.code != 3 {
		t.Errorf("--loss of an unknown session: exit %d, want 3", r.code)
	}
}
