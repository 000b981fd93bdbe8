package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentledger/ledger/store/storetest"
)

// TestAgentRecordsShown ingests a real Claude Code 2.1.328 session
// (testdata/agents) and checks what its newer records say reaches the
// user: its cost (cost-state) in sessions and sessions --json, and the
// part of the conversation each partial compaction kept verbatim
// (compactMetadata.preservedSegment, preservedMessages) in the audit and
// the loss report, where what it kept counts as kept.
func TestAgentRecordsShown(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	src := filepath.Join("..", "..", "testdata", "agents", "claude-2.1.328", "session.jsonl")
	if r := runCmd(t, home, "", "--db", db, "ingest", src); r.code != 0 {
		t.Fatalf("ingest: %s", r.stderr)
	}

	var rows []struct {
		ID           string   `json:"id"`
		CostUSD      *float64 `json:"cost_usd"`
		LinesAdded   *int64   `json:"lines_added"`
		LinesRemoved *int64   `json:"lines_removed"`
	}
	r := runCmd(t, home, "", "--db", db, "sessions", "--json")
	decodeJSON(t, r.stdout, &rows)
	if len(rows) != 1 || rows[0].CostUSD == nil || *rows[0].CostUSD != 0.2332 || rows[0].LinesAdded == nil || *rows[0].LinesAdded != 8 ||
		rows[0].LinesRemoved == nil || *rows[0].LinesRemoved != 0 {
		t.Errorf("sessions --json = %s, want cost_usd 0.2332, lines_added 8, lines_removed 0", r.stdout)
	}
	if r := runCmd(t, home, "", "--db", db, "sessions"); !strings.Contains(r.stdout, "COST") || !strings.Contains(r.stdout, "$0.23 +8/-0") {
		t.Errorf("sessions:\n%s\nwant a COST column with $0.23 +8/-0", r.stdout)
	}

	var audit []struct {
		Trigger   string `json:"trigger"`
		Preserved int    `json:"preserved_messages"`
	}
	r = runCmd(t, home, "", "--db", db, "audit", "--json")
	decodeJSON(t, r.stdout, &audit)
	if len(audit) != 2 || audit[0].Preserved == 0 || audit[1].Preserved == 0 {
		t.Errorf("audit --json = %s, want two compactions that each kept messages", r.stdout)
	}
	if r := runCmd(t, home, "", "--db", db, "audit"); !strings.Contains(r.stdout, "KEPT") {
		t.Errorf("audit:\n%s\nwant a KEPT column", r.stdout)
	}

	var loss []struct {
		Trigger   string `json:"trigger"`
		Preserved int    `json:"preserved_messages"`
		Summary   *struct {
			Sections []struct {
				Name  string `json:"name"`
				Items []struct {
					Text string `json:"text"`
					Kept bool   `json:"kept"`
				} `json:"items"`
			} `json:"sections"`
		} `json:"summary"`
	}
	r = runCmd(t, home, "", "--db", db, "audit", "--loss", "--json")
	decodeJSON(t, r.stdout, &loss)
	if len(loss) != 2 || loss[0].Trigger != "manual" || loss[0].Preserved == 0 || loss[0].Summary == nil {
		t.Fatalf("audit --loss --json = %s", r.stdout)
	}
	// The summary ("The user asked for a few files") names no file; the
	// message Claude Code kept ("tides.md is written.") does.
	kept := false
	for _, sec := range loss[0].Summary.Sections {
		for _, it := range sec.Items {
			if sec.Name == "files" && strings.HasSuffix(it.Text, "tides.md") {
				kept = it.Kept
			}
		}
	}
	if !kept {
		t.Errorf("the manual compaction's report does not count tides.md as kept by the messages it preserved: %s", r.stdout)
	}
	if r := runCmd(t, home, "", "--db", db, "audit", "--loss"); !strings.Contains(r.stdout, "messages verbatim") {
		t.Errorf("audit --loss:\n%s\nwant the messages kept verbatim named", r.stdout)
	}
}
