package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/store"
)

// counts is a side's kept/total per section, as "files 3/3 tasks 0/0 ...".
func counts(s LossSide) string {
	var parts []string
	for _, sec := range s.Sections {
		parts = append(parts, fmt.Sprintf("%s %d/%d", sec.Name, sec.Kept, sec.Kept+sec.Dropped))
	}
	return strings.Join(parts, " ")
}

func dropped(s LossSide) []string {
	var out []string
	for _, sec := range s.Sections {
		for _, it := range sec.Items {
			if !it.Kept {
				out = append(out, sec.Name+": "+it.Text)
			}
		}
	}
	return out
}

// TestLossReportCorpus: Claude Code's auto compaction of spotter-258c7280,
// against the state of the work at its cut (the lines before its
// compact_boundary, as the handoff eval cuts it).
func TestLossReportCorpus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _ := openEngine(t)
	tr := corpusFile(t, "claude", "spotter-258c7280")
	side := strings.TrimSuffix(tr, ".jsonl") + ".subagents.agent-acompact-fffbd0.jsonl"
	if _, err := e.Ingest(ctx, []string{tr, side}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	reports, err := e.LossReports(ctx, "258c")
	if err != nil || len(reports) != 1 {
		t.Fatalf("reports: %d, %v; want 1", len(reports), err)
	}
	l := reports[0]
	if l.Summary == nil || l.Trigger != "auto" || l.Source != "transcript" || l.CutMessages != 328 {
		t.Fatalf("report: summary %v, trigger %s, source %s, cut after %d messages; want a summary, auto, transcript, 328",
			l.Summary != nil, l.Trigger, l.Source, l.CutMessages)
	}
	if got, want := counts(*l.Summary), "files 17/17 tasks 3/3 errors 0/0 requests 3/3 decisions 3/4"; got != want {
		t.Errorf("summary kept %s, want %s", got, want)
	}
	if d := dropped(*l.Summary); len(d) != 1 || !strings.HasPrefix(d[0], "decisions: config/test.exs: http: [port: 4002]") {
		t.Errorf("summary dropped %q, want the config/test.exs settings", d)
	}
	if l.Handoff.ID != nil || l.Handoff.Dropped != 0 {
		t.Errorf("handoff: id %v, dropped %v; want extracted at the cut, nothing dropped", l.Handoff.ID, dropped(l.Handoff.LossSide))
	}
	if l.Summary.Tokens != 4278 || l.Handoff.Tokens < 900 || l.Handoff.Tokens > 1500 {
		t.Errorf("tokens: summary %d, handoff %d; want 4278 and about 1,100", l.Summary.Tokens, l.Handoff.Tokens)
	}
	one, err := e.LossReport(ctx, l.Compaction)
	if err != nil || counts(*one.Summary) != counts(*l.Summary) {
		t.Errorf("LossReport(%d) = %v, %v; want the same report", l.Compaction, one.Summary, err)
	}
}

// TestLossReportOwnHandoff: a compaction ledger wrote (`ledger compact`)
// has no native summary; its report checks the stored handoff, whose
// Markdown a tight budget cut: at 400 tokens the files give way first.
func TestLossReportOwnHandoff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _ := openEngine(t)
	e.now = func() time.Time { return time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC) }
	if _, err := e.Ingest(ctx, []string{sampleDir(t)}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	const session = "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57"
	h, err := e.WriteHandoff(ctx, session, HandoffRequest{Trigger: "manual", Budget: 400, Source: "cli",
		Out: filepath.Join(t.TempDir(), "h.md")})
	if err != nil {
		t.Fatal(err)
	}
	reports, err := e.LossReports(ctx, session)
	if err != nil || len(reports) != 2 {
		t.Fatalf("reports: %d, %v; want the transcript's compaction and ledger's", len(reports), err)
	}
	native, own := reports[0], reports[1]
	if native.Summary == nil || native.Source != "transcript" {
		t.Fatalf("first report: source %s, summary %v; want the transcript's, with its summary", native.Source, native.Summary)
	}
	if got := dropped(*native.Summary); len(got) != 2 {
		t.Errorf("the sample's summary dropped %q, want its task request and its decision", got)
	}
	if own.Summary != nil || own.Source != "cli" || own.Handoff.ID == nil || *own.Handoff.ID != h.ID {
		t.Fatalf("own report: source %s, summary %v, handoff %v; want cli, none, handoff %d", own.Source, own.Summary, own.Handoff.ID, h.ID)
	}
	if own.Handoff.Tokens != h.Tokens || own.Handoff.Dropped == 0 || own.Handoff.Kept == 0 {
		t.Errorf("own handoff: %d tokens (wrote %d), kept %d, dropped %d; want some of each at a 400-token budget",
			own.Handoff.Tokens, h.Tokens, own.Handoff.Kept, own.Handoff.Dropped)
	}
	for _, d := range dropped(own.Handoff.LossSide) {
		if strings.Contains(h.Markdown, strings.SplitN(d, ": ", 2)[1]) {
			t.Errorf("reported dropped, but the handoff has it: %s", d)
		}
	}
	if _, err := e.LossReport(ctx, 999); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("LossReport(999) = %v, want ErrNotFound", err)
	}
}

// TestLossUsedAfter: after a compaction, the working set the agent used
// (files read or changed, commands, tests, tracker items) that the session
// held before the cut, and which of it the summary and the handoff carried;
// what appears only after the cut is not asked of them.
func TestLossUsedAfter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _ := openEngine(t)
	p := "/home/ines/src/quarry"
	at := time.Date(2026, 4, 3, 9, 0, 0, 0, time.UTC)
	edit := func(f string) map[string]any {
		return map[string]any{"file_path": p + "/" + f, "old_string": "a", "new_string": "b"}
	}
	b := newTranscript("10550000-0000-4000-8000-000000000003", p, at).
		user("Make the tile cache evict by size, not by count.").
		call("Read", map[string]any{"file_path": p + "/cache/lru.go"}, "package cache", false).
		call("Edit", edit("cache/lru.go"), "The file has been updated successfully.", false).
		call("Read", map[string]any{"file_path": p + "/cache/sizer.go"}, "package cache", false).
		call("Bash", map[string]any{"command": "go test ./cache -run TestEvict"}, "ok", false).
		call("Bash", map[string]any{"command": "golangci-lint run ./cache/..."}, "ok", false).
		compaction("Summary: evicting by size in cache/lru.go; tests pass with go test.").
		call("Read", map[string]any{"file_path": p + "/cache/lru.go"}, "package cache", false).
		call("Edit", edit("cache/sizer.go"), "The file has been updated successfully.", false).
		call("Edit", edit("cache/metrics.go"), "The file has been updated successfully.", false). // new after the cut
		call("Bash", map[string]any{"command": "go test ./cache -run TestEvict"}, "ok", false).
		call("Bash", map[string]any{"command": "golangci-lint run ./cache/..."}, "ok", false)
	if _, err := e.Ingest(ctx, []string{b.write(t, t.TempDir())}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	reports, err := e.LossReports(ctx, "1055")
	if err != nil || len(reports) != 1 {
		t.Fatalf("reports: %d, %v", len(reports), err)
	}
	u := reports[0].UsedAfter
	if u == nil {
		t.Fatal("no used_after for a compaction with work after it")
	}
	var got []string
	for _, it := range u.Items {
		got = append(got, fmt.Sprintf("%s %s summary=%v handoff=%v", it.Kind, it.Text, it.Summary, it.Handoff))
	}
	want := []string{
		"file cache/sizer.go summary=false handoff=true",
		"file cache/lru.go summary=true handoff=true",
		"command go test summary=true handoff=true",
		"command golangci-lint run summary=false handoff=true",
		"test TestEvict summary=false handoff=true",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("used after:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if u.Total != 5 || u.Summary != 2 || u.Handoff != 5 || u.Calls != 5 {
		t.Errorf("totals %+v, want 5 items, summary 2, handoff 5, 5 calls", *u)
	}
	tot := TotalUsed(reports)
	if tot.Compactions != 1 || tot.Total != 5 || tot.Summary != 2 || tot.Handoff != 5 {
		t.Errorf("TotalUsed = %+v", tot)
	}
}
