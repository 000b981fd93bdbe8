package handoff

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/compact"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/handoff")

const goldenDir = "../testdata/handoff"

// caseOptions is a golden case's options.json: what a caller of Extract
// knows besides the messages, and the budget to render with.
type caseOptions struct {
	Task           string `json:"task"`
	SessionID      string `json:"session_id"`
	Project        string `json:"project"`
	Branch         string `json:"branch"`
	Trigger        string `json:"trigger"`
	CreatedAt      string `json:"created_at"`
	ContextSummary string `json:"context_summary"`
	Compactions    int    `json:"compactions"`
	Budget         int    `json:"budget"`
}

type goldenCase struct {
	name   string
	msgs   []compact.Message
	opts   ExtractOptions
	budget int
}

func loadCase(t testing.TB, name string) goldenCase {
	t.Helper()
	dir := filepath.Join(goldenDir, name)
	gc := goldenCase{name: name}
	readJSON(t, filepath.Join(dir, "messages.json"), &gc.msgs)
	var o caseOptions
	readJSON(t, filepath.Join(dir, "options.json"), &o)
	gc.opts = ExtractOptions{Task: o.Task, SessionID: o.SessionID, Project: o.Project, Branch: o.Branch,
		Trigger: o.Trigger, ContextSummary: o.ContextSummary, Compactions: o.Compactions}
	if o.CreatedAt != "" {
		at, err := time.Parse(time.RFC3339, o.CreatedAt)
		if err != nil {
			t.Fatal(err)
		}
		gc.opts.CreatedAt = at
	}
	gc.budget = o.Budget
	return gc
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func goldenCases(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		// Cases of compact messages; those written as transcripts have
		// their own harness (transcript_golden_test.go).
		if _, err := os.Stat(filepath.Join(goldenDir, e.Name(), "messages.json")); e.IsDir() && err == nil {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		t.Fatal("no golden cases")
	}
	return names
}

// checkGolden compares got with the golden file, or rewrites it under
// -update.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./handoff -run Golden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what Extract+Render make now (go test ./handoff -run Golden -update to accept):\n--- got\n%s\n--- want\n%s",
			path, got, want)
	}
}

func TestGolden(t *testing.T) {
	for _, name := range goldenCases(t) {
		t.Run(name, func(t *testing.T) {
			gc := loadCase(t, name)
			doc := Extract(gc.msgs, gc.opts).Rendered(gc.budget, ApproxTokens)
			budget := gc.budget
			if budget <= 0 {
				budget = DefaultBudget
			}
			if doc.Tokens > budget {
				t.Errorf("markdown is %d tokens, budget %d", doc.Tokens, budget)
			}
			js, err := json.MarshalIndent(doc, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(goldenDir, name)
			checkGolden(t, filepath.Join(dir, "handoff.md"), []byte(doc.Markdown))
			checkGolden(t, filepath.Join(dir, "handoff.json"), append(js, '\n'))

			// The Markdown reads back: exactly when nothing had to give way.
			back, err := Parse(doc.Markdown)
			if err != nil {
				t.Fatal(err)
			}
			full := Render(doc, 1<<30, ApproxTokens)
			if doc.Markdown == full {
				if got, want := carried(back), carried(doc); !reflect.DeepEqual(got, want) {
					t.Errorf("Parse(Markdown) differs:\n got %#v\nwant %#v", got, want)
				}
			}
		})
	}
}

// TestGoldenSemantics says in words what the golden files must show, so
// that an -update cannot quietly accept a wrong answer.
func TestGoldenSemantics(t *testing.T) {
	docs := map[string]Doc{}
	for _, name := range goldenCases(t) {
		gc := loadCase(t, name)
		docs[name] = Extract(gc.msgs, gc.opts).Rendered(gc.budget, ApproxTokens)
	}
	claude := docs["claude-session"]
	p := "/home/dev/src/acme-api/"
	checks := []struct {
		name     string
		got      any
		want     any
		contains bool // got (a string or []string joined) contains want
		not      bool
	}{
		{"task is the first real request", claude.Task, "Add per-client rate limiting to the HTTP API.", true, false},
		{"every request, in order", claude.Requests, []string{
			"Add per-client rate limiting to the HTTP API. Limits come from config; over the limit, return 429 with a Retry-After header.",
			"Also make the limits configurable per route."}, false, false},
		{"subagent prompt is not the task", claude.Task, "table tests", true, true},
		{"files: Write, Edit, MultiEdit, NotebookEdit, subagent Write; not Read, not rejected", claude.FilesModified, []string{
			p + "internal/ratelimit/bucket.go", p + "internal/server/server.go", p + "internal/config/config.go",
			p + "docs/benchmarks.ipynb", p + "internal/server/middleware_test.go"}, false, false},
		{"decisions: marked prose first", claude.Decisions[0], "a token bucket per API key, kept in memory (no Redis for now).", false, false},
		{"tests: latest status of each command; a narrow run covered by a later broad one that passed is passed", claude.TestsRun, []TestRun{
			{"go test ./...", TestPassed}, {"go test ./internal/server/ -run TestRateLimit", TestPassed},
			{"go test -race ./...", TestPassed}}, false, false},
		{"errors: unresolved lint; resolved edit and push, and the subagent's filtered test covered by the later go test -race ./..., left out",
			claude.Errors, []string{
				"`golangci-lint run ./...`: internal/server/middleware.go:14:2: ineffectual assignment to err (ineffassign)"}, false, false},
		{"blockers", claude.Blockers, []string{
			"the staging API keys are not in the vault yet, so limits cannot be checked end to end."}, false, false},
		{"next steps: open todos of the latest list, what still fails, next: lines; completed todos, summaries and words that announced a refused edit left out",
			claude.NextSteps, []string{"[in progress] Read limits from config", "[pending] Add middleware tests",
				fixLabel + "`golangci-lint run ./...`: internal/server/middleware.go:14:2: ineffectual assignment to err (ineffassign)",
				"document the 429 response in api/openapi.yaml"}, false, false},
		{"tasks: done ones in the Tasks section", claude.Markdown, "## Tasks\n- [done] Add the ratelimit package (token bucket)\n", true, false},
		{"context: where it stopped (not the edit the user refused), then the figures", claude.Context,
			"Stopped while running `git push -u origin feat/rate-limit` (Read limits from config in progress); 61,230 / 200,000 tokens (31%), claude-sonnet-4-5; compactions: 1", false, false},
		{"session from the messages", claude.Session, "c1a0de00-7b4e-4f2a-9d11-5e0c2a7f3b91", false, false},
	}
	codex := docs["codex-rollout"]
	q := "/home/dev/src/ledgerly/"
	checks = append(checks, []struct {
		name     string
		got      any
		want     any
		contains bool
		not      bool
	}{
		{"codex requests skip AGENTS.md and environment context", codex.Requests, []string{
			"Fix the CSV importer: amounts with thousands separators (1,234.56) are parsed as 1.0. Add tests.",
			"Looks good. Please also update the CHANGELOG."}, false, false},
		{"codex patch headers, resolved against the project; a moved file at its new path", codex.FilesModified, []string{
			q + "tests/csv_amounts.rs", q + "src/import/csv.rs", q + "src/import/legacy_csv.rs", q + "src/import/old_amount.rs"}, false, false},
		{"codex moved and deleted files", codex.Markdown, "- src/import/legacy.rs → src/import/legacy_csv.rs (uncommitted)\n- src/import/old_amount.rs (deleted, uncommitted)\n", true, false},
		{"codex tests: exit codes, JSON metadata, background session", codex.TestsRun, []TestRun{
			{"cargo test --test csv_amounts", TestPassed}, {"pytest -q scripts/", TestFailed},
			{"cargo test", TestPassed}}, false, false},
		{"codex errors name the place and the failing test", codex.Errors, []string{
			"`cargo clippy -- -D warnings`: src/import/csv.rs:97:9: this `if` has identical blocks",
			"`pytest -q scripts/`: test_export_roundtrip (scripts/test_export.py) — AssertionError"}, false, false},
		{"codex next steps from update_plan, what still fails, next: and last words", codex.NextSteps, []string{
			"[in progress] Update the CHANGELOG", "[pending] Ask about negative amounts in parentheses",
			fixLabel + "`pytest -q scripts/`: test_export_roundtrip (scripts/test_export.py) — AssertionError (and 1 more under Errors)",
			"add a fixture for parentheses negatives once the sample arrives",
			lastWordsLabel + "“We are blocked by the bank's sample file for negatives written in parentheses.”"}, false, false},
		{"codex blocked by, as the last thing the agent said", codex.Blockers, []string{
			"We are blocked by the bank's sample file for negatives written in parentheses."}, false, false},
		{"codex created defaults to the last message", codex.CreatedAt.Format(time.RFC3339), "2026-03-02T09:03:23Z", false, false},
	}...)
	empty := docs["empty"]
	checks = append(checks, []struct {
		name     string
		got      any
		want     any
		contains bool
		not      bool
	}{
		{"empty: every section present as _none_", strings.Count(empty.Markdown, "\n"+none+"\n"), 10, false, false},
	}...)
	budget := docs["budget"]
	checks = append(checks, []struct {
		name     string
		got      any
		want     any
		contains bool
		not      bool
	}{
		{"--task overrides", budget.Task, "Finish the vite migration", true, false},
		{"budget: JSON keeps every file", len(budget.FilesModified), 38, false, false},
		{"budget: markdown abbreviates", budget.Markdown, "more\n", true, false},
		{"budget: next steps survive", budget.Markdown, "- [in progress] Fix the saved-card payment flow", true, false},
	}...)

	for _, c := range checks {
		if c.contains {
			s, ok := c.got.(string)
			if !ok {
				t.Fatalf("%s: contains check on %T", c.name, c.got)
			}
			if has := strings.Contains(s, c.want.(string)); has == c.not {
				t.Errorf("%s: %q contains %q = %v", c.name, s, c.want, has)
			}
			continue
		}
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s:\n got %#v\nwant %#v", c.name, c.got, c.want)
		}
	}
}
