package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/store"
)

// TestListingsSearchAndOptOut: sessions as the contract lists them, a
// search's hits plain, the doctor's counts and the versions; a paused
// project's sessions leave the search until it is resumed, and forget
// --project removes them.
func TestListingsSearchAndOptOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _, home := hookEngine(t)
	ingestSample(t, e, home)
	const project = "/home/dev/src/payments"

	list, err := e.SessionsOf(ctx, store.SessionFilter{Project: project})
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions of the project: %d, %v", len(list), err)
	}
	rows := SessionRows(list)
	if len(rows) != 1 || rows[0].ID != sampleID || rows[0].Messages != list[0].Messages || rows[0].Project != project {
		t.Errorf("session rows: %+v", rows)
	}
	if got := CostText(nil); got != "-" {
		t.Errorf("CostText(nil) = %q", got)
	}
	if got := CostText(&compact.Cost{USD: 1.868, LinesAdded: 412, LinesRemoved: 97}); got != "$1.87 +412/-97" {
		t.Errorf("CostText = %q", got)
	}

	search := func() []Hit {
		t.Helper()
		res, err := e.Search(ctx, SearchRequest{Text: "integration", SearchOptions: store.SearchOptions{Limit: 5}})
		if err != nil {
			t.Fatal(err)
		}
		return Hits(res.Hits)
	}
	hits := search()
	if len(hits) == 0 || hits[0].Session != sampleID || strings.Contains(hits[0].Snippet, store.MarkStart) {
		t.Fatalf("hits %+v, want the session's, snippets plain", hits)
	}
	if got := Unmark("a "+store.MarkStart+"b"+store.MarkEnd, "[", "]"); got != "a [b]" {
		t.Errorf("Unmark = %q", got)
	}

	if paused, err := e.Pause(ctx, project); err != nil || !paused {
		t.Fatalf("pause: %v, %v", paused, err)
	}
	if again, err := e.Pause(ctx, project); err != nil || again {
		t.Errorf("pause again: %v, %v; want false", again, err)
	}
	if ex, err := e.ExcludedProjects(ctx); err != nil || len(ex) != 1 || ex[0].Project != project || ex[0].How != "paused" {
		t.Errorf("excluded: %+v, %v", ex, err)
	}
	if hits := search(); len(hits) != 0 {
		t.Errorf("a paused project's session is searched: %+v", hits)
	}
	if resumed, err := e.ResumeRecording(ctx, project); err != nil || !resumed {
		t.Fatalf("resume recording: %v, %v", resumed, err)
	}
	if hits := search(); len(hits) == 0 {
		t.Error("no hits once the project is resumed")
	}

	h, err := e.Doctor(ctx, true)
	if err != nil || h.Integrity != "ok" || h.FTS != "ok" || !h.Rebuilt || h.Sessions != 1 || h.Messages != list[0].Messages {
		t.Errorf("doctor --rebuild: %+v, %v", h, err)
	}
	v, err := e.Versions(ctx, "v9")
	if err != nil || v.Version != "v9" || v.SchemaVersion < 1 || v.SQLiteVersion == "" {
		t.Errorf("versions: %+v, %v", v, err)
	}

	dry, err := e.ForgetProject(ctx, project, true, false)
	if err != nil || len(dry) != 1 {
		t.Fatalf("forget --project --dry-run: %+v, %v", dry, err)
	}
	if gone, err := e.ForgetProject(ctx, project, false, true); err != nil || len(gone) != 1 {
		t.Fatalf("forget --project: %+v, %v", gone, err)
	}
	if list, err := e.Sessions(ctx, "", 0); err != nil || len(list) != 0 {
		t.Errorf("sessions after forget: %d, %v", len(list), err)
	}
}

// TestMedianAndTotals: the audit's medians, of odd and even counts, and
// none of nothing.
func TestMedianAndTotals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		xs   []int64
		want int64
		ok   bool
	}{{nil, 0, false}, {[]int64{5}, 5, true}, {[]int64{9, 1, 5}, 5, true}, {[]int64{4, 1, 3, 10}, 3, true}} {
		if got, ok := Median(c.xs); got != c.want || ok != c.ok {
			t.Errorf("Median(%v) = %d, %v; want %d, %v", c.xs, got, ok, c.want, c.ok)
		}
	}
	pre := int64(150000)
	tot := Totals([]AuditRow{{PreTokens: &pre, ToolCalls: 3}, {ToolCalls: 7}})
	if tot.Compactions != 2 || tot.MedianPreTokens == nil || *tot.MedianPreTokens != pre || tot.MedianToolCalls == nil || *tot.MedianToolCalls != 5 {
		t.Errorf("totals: %+v", tot)
	}
}

// TestFrontDoorChecks: the checks every front door makes of a search
// (the query's length, kind, role, limit) and of where the ledger is.
func TestFrontDoorChecks(t *testing.T) {
	t.Parallel()
	if CheckQuery(strings.Repeat("é", MaxQuery)) != nil || CheckQuery(strings.Repeat("a", MaxQuery+1)) == nil {
		t.Error("CheckQuery: want characters counted, at most MaxQuery")
	}
	for _, c := range []struct {
		kind, role string
		limit      int
		ok         bool
	}{{"", "", 1, true}, {"note", "tool", 5, true}, {"file", "", 1, false}, {"", "robot", 1, false}, {"", "", 0, false}} {
		if err := CheckSearch(c.kind, c.role, c.limit); (err == nil) != c.ok {
			t.Errorf("CheckSearch(%q, %q, %d) = %v", c.kind, c.role, c.limit, err)
		}
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"LEDGER_DB": "/x/l.db", "HOME": "/h"}, "/x/l.db"},
		{map[string]string{"XDG_DATA_HOME": "/d", "HOME": "/h"}, "/d/ledger/ledger.db"},
		{map[string]string{"XDG_DATA_HOME": "relative", "HOME": "/h"}, "/h/.local/share/ledger/ledger.db"},
	} {
		if got, err := DBPath(env(c.env)); err != nil || got != c.want {
			t.Errorf("DBPath(%v) = %q, %v; want %q", c.env, got, err, c.want)
		}
	}
}

// TestViewsOfATranscript: a transcript read without the ledger, the
// meter's accuracy of a stored session, and a resume as the contract
// shows it.
func TestViewsOfATranscript(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _, home := hookEngine(t)
	path := ingestSample(t, e, home)
	v, err := ReadTranscriptFile(ctx, path)
	if err != nil || len(v.Messages) == 0 {
		t.Fatalf("ReadTranscriptFile: %d messages, %v", len(v.Messages), err)
	}
	if _, err := ReadTranscriptFile(ctx, path+".missing"); err == nil {
		t.Error("ReadTranscriptFile of no file")
	}
	a, err := e.MeterAccuracy(ctx, sampleID)
	if err != nil || a.Messages+a.SkippedThinkingMessages+a.SkippedPartialMessages == 0 {
		t.Errorf("meter accuracy: %+v, %v", a, err)
	}
	r, err := e.Resume(ctx, ResumeRequest{Session: sampleID, Budget: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if d := r.Doc(); d.Session != sampleID || d.Markdown != r.Markdown || d.Tokens != r.Tokens {
		t.Errorf("resume doc: %+v", d)
	}
	if got := ProjectOf(home); got != home {
		t.Errorf("ProjectOf(a folder outside git) = %q, want %q", got, home)
	}
}

// TestAgentsTranscriptFolders: every agent's transcripts folder under a
// home, moved by the agent's own variable only when it names an absolute
// path; those that exist are found, the others said missing; the
// checkup then lists each agent's folder.
func TestAgentsTranscriptFolders(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".claude", "projects"), 0o700); err != nil {
		t.Fatal(err)
	}
	codexHome := filepath.Join(home, "elsewhere", "codex")
	if err := os.MkdirAll(filepath.Join(codexHome, "sessions"), 0o700); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CODEX_HOME": codexHome, "GEMINI_CLI_HOME": "relative/not/taken"}
	getenv := func(k string) string { return env[k] }
	all := TranscriptFolders(home, getenv)
	agents := map[string]bool{}
	for _, f := range all {
		agents[f.Agent] = true
		if !strings.HasPrefix(f.Path, home) {
			t.Errorf("%s's folder %s is not under the home (a relative variable was taken)", f.Agent, f.Path)
		}
	}
	if len(agents) != len(Agents()) {
		t.Errorf("folders of %v, want every agent's (%s)", agents, AgentSources())
	}
	found, missing := ExistingTranscriptFolders(home, getenv)
	if len(found) != 2 || found[0].Path != filepath.Join(home, ".claude", "projects") || found[1].Path != filepath.Join(codexHome, "sessions") {
		t.Errorf("found %+v, want Claude Code's and Codex's (from $CODEX_HOME)", found)
	}
	if len(found)+len(missing) != len(all) {
		t.Errorf("found %d and missing %d of %d", len(found), len(missing), len(all))
	}

	if err := os.MkdirAll(filepath.Join(home, ".gemini", "tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	e, _, _ := hookEngine(t)
	c, err := e.Checkup(context.Background(), CheckupOptions{ClaudeDir: filepath.Join(home, ".claude"), CodexHome: codexHome, Home: home, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, f := range c.Transcripts {
		seen = append(seen, f.Agent)
	}
	// Claude Code's and Codex's always; the others' when they exist.
	if got := strings.Join(seen, ","); got != "claude,codex,gemini" {
		t.Errorf("the checkup's transcripts folders are of %s, want claude,codex,gemini", got)
	}
}
