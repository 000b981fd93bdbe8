package handoff_test

// Golden cases read from real-format transcripts: each
// testdata/handoff/<case> that holds a transcript.jsonl (Claude Code) or a
// rollout.jsonl (Codex) is read with the transcript package, exactly as
// ledger ingests a file, and handed to Extract. The cases beside them that
// hold a messages.json belong to golden_test.go.
//
//	go test ./handoff -run TranscriptGolden -update              # rewrite handoff.md / handoff.json
//	go test ./handoff -run TranscriptGolden -update-transcripts  # the same, when -update is not defined

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/transcript"
)

var updateTranscripts = flag.Bool("update-transcripts", false,
	"rewrite the golden files of the transcript cases in testdata/handoff")

// updatingTranscripts tells whether the goldens are to be rewritten: by
// -update-transcripts, or by the -update flag of golden_test.go (package
// handoff, the same test binary) when it is defined.
func updatingTranscripts() bool {
	if *updateTranscripts {
		return true
	}
	if f := flag.Lookup("update"); f != nil {
		return f.Value.String() == "true"
	}
	return false
}

const transcriptGoldenDir = "../testdata/handoff"

// transcriptOptions is a transcript case's options.json. Every field is
// optional: what the transcript says (project, branch, compactions, the
// context in use and, for Codex, the window) is used unless it is set here.
type transcriptOptions struct {
	Task         string `json:"task"`
	Project      string `json:"project"`
	Branch       string `json:"branch"`
	Trigger      string `json:"trigger"`
	CreatedAt    string `json:"created_at"`
	Compactions  *int   `json:"compactions"`
	Budget       int    `json:"budget"`
	ContextUsed  int64  `json:"context_used"`
	ContextLimit int64  `json:"context_limit"`
}

// transcriptCase is one case, read.
type transcriptCase struct {
	name   string
	file   string // transcript.jsonl or rollout.jsonl
	format transcript.Format
	msgs   []compact.Message
	opts   handoff.ExtractOptions
	budget int
	// from the transcript itself
	session  transcript.SessionInfo
	skipped  int
	skips    []transcript.Skip
	messages int
}

// transcriptCaseNames lists the cases that have a transcript.
func transcriptCaseNames(t testing.TB) []string {
	t.Helper()
	entries, err := os.ReadDir(transcriptGoldenDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && transcriptFile(filepath.Join(transcriptGoldenDir, e.Name())) != "" {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		t.Fatal("no transcript golden cases")
	}
	return names
}

func transcriptFile(dir string) string {
	for _, f := range []string{"transcript.jsonl", "rollout.jsonl"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return filepath.Join(dir, f)
		}
	}
	return ""
}

// loadTranscriptCase reads a case's transcript as ledger does (Detect, then
// Read from the start), merges the session facts the lines give, and makes
// the options Extract gets.
func loadTranscriptCase(t testing.TB, name string) transcriptCase {
	t.Helper()
	return loadTranscriptCaseUpTo(t, name, 0)
}

// loadTranscriptCaseUpTo reads a case as if the transcript ended after line
// upTo (0: the whole file): the handoff a compaction at that moment would
// write.
func loadTranscriptCaseUpTo(t testing.TB, name string, upTo int) transcriptCase {
	t.Helper()
	dir := filepath.Join(transcriptGoldenDir, name)
	tc := transcriptCase{name: name, file: transcriptFile(dir)}
	raw, err := os.ReadFile(tc.file)
	if err != nil {
		t.Fatal(err)
	}
	format, err := transcript.Detect(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	tc.format = format
	f := bytes.NewReader(raw)
	st := &transcript.State{Format: format}
	compactions := 0
	var lastUsage int64
	res, err := transcript.Read(context.Background(), f, st, 0, 1, func(r transcript.Record) error {
		if upTo > 0 && r.Line > upTo {
			return nil
		}
		if s := r.Session; s != nil {
			mergeSession(&tc.session, *s)
		}
		if r.Boundary != nil {
			compactions++
		}
		if m := r.Message; m != nil {
			tc.msgs = append(tc.msgs, *m)
			if m.Role == compact.RoleAssistant && !m.Sidechain && m.Usage != nil && m.Usage.ContextTokens() > 0 {
				lastUsage = m.Usage.ContextTokens()
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", tc.file, err)
	}
	tc.skipped, tc.skips, tc.messages = res.Skipped, res.Skips, len(tc.msgs)

	var o transcriptOptions
	b, err := os.ReadFile(filepath.Join(dir, "options.json"))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		t.Fatalf("%s/options.json: %v", dir, err)
	}
	tc.opts = handoff.ExtractOptions{
		Task:         o.Task,
		Project:      firstSet(o.Project, tc.session.Project),
		Branch:       firstSet(o.Branch, tc.session.GitBranch),
		Trigger:      o.Trigger,
		Compactions:  compactions,
		ContextUsed:  lastUsage,
		ContextLimit: tc.session.ContextWindow,
	}
	if u := tc.session.Usage; u != nil && u.ContextTokens() > 0 {
		tc.opts.ContextUsed = u.ContextTokens() // Codex: usage is reported apart from messages
	}
	if o.Compactions != nil {
		tc.opts.Compactions = *o.Compactions
	}
	if o.ContextUsed > 0 {
		tc.opts.ContextUsed = o.ContextUsed
	}
	if o.ContextLimit > 0 {
		tc.opts.ContextLimit = o.ContextLimit
	}
	if o.CreatedAt != "" {
		at, err := time.Parse(time.RFC3339, o.CreatedAt)
		if err != nil {
			t.Fatal(err)
		}
		tc.opts.CreatedAt = at
	}
	tc.budget = o.Budget
	return tc
}

// mergeSession folds one record's session facts into what is known: the
// first project and branch win (a later cwd is a `cd`, not the project),
// the latest usage and window win.
func mergeSession(into *transcript.SessionInfo, s transcript.SessionInfo) {
	if into.ID == "" {
		into.ID = s.ID
	}
	if into.Project == "" {
		into.Project = s.Project
	}
	if into.GitBranch == "" {
		into.GitBranch = s.GitBranch
	}
	if s.Model != "" {
		into.Model = s.Model
	}
	if s.ContextWindow > 0 {
		into.ContextWindow = s.ContextWindow
	}
	if s.Usage != nil {
		into.Usage = s.Usage
	}
}

func firstSet(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// lineOf is the number of the first line of a case's transcript that
// contains sub.
func lineOf(t testing.TB, name, sub string) int {
	t.Helper()
	b, err := os.ReadFile(transcriptFile(filepath.Join(transcriptGoldenDir, name)))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, sub) {
			return i + 1
		}
	}
	t.Fatalf("%s: no line contains %q", name, sub)
	return 0
}

// cutDoc is the handoff of a case cut after the first line containing sub.
func cutDoc(t testing.TB, name, sub string) handoff.Doc {
	t.Helper()
	tc := loadTranscriptCaseUpTo(t, name, lineOf(t, name, sub))
	tc.opts.CreatedAt = time.Time{}
	return tc.doc()
}

// resume is the resume context of the case's handoff, stored as handoff 1
// and written once at compaction.
func (tc transcriptCase) resume(doc handoff.Doc) string {
	doc.ID = 1
	source := "claude"
	if tc.format == transcript.FormatCodex {
		source = "codex"
	}
	in := handoff.ResumeInput{Session: doc.Session, Source: source, Project: doc.Project, Branch: doc.Branch,
		Handoff: doc, Compactions: 1,
		LastCompaction: handoff.CompactionNote{At: doc.CreatedAt, Trigger: "auto", PreTokens: tc.opts.ContextUsed, Source: "hook"}}
	return handoff.Resume(in, 0, handoff.ApproxTokens)
}

func (tc transcriptCase) doc() handoff.Doc {
	return handoff.Extract(tc.msgs, tc.opts).Rendered(tc.budget, handoff.ApproxTokens)
}

// checkTranscriptGolden compares got with a golden file, or rewrites it.
func checkTranscriptGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if updatingTranscripts() {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./handoff -run TranscriptGolden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what Extract+Render make now (go test ./handoff -run TranscriptGolden -update to accept):\n--- got\n%s\n--- want\n%s",
			path, got, want)
	}
}

func TestTranscriptGolden(t *testing.T) {
	for _, name := range transcriptCaseNames(t) {
		t.Run(name, func(t *testing.T) {
			tc := loadTranscriptCase(t, name)
			// The fixture is written as the agent writes: every line reads.
			if tc.skipped != 0 {
				t.Errorf("%s: %d lines skipped as bad input: %+v", tc.file, tc.skipped, tc.skips)
			}
			if tc.messages == 0 || tc.opts.Project == "" || tc.opts.Branch == "" {
				t.Fatalf("%s: %d messages, project %q, branch %q: the transcript should give all three",
					tc.file, tc.messages, tc.opts.Project, tc.opts.Branch)
			}
			doc := tc.doc()
			budget := tc.budget
			if budget <= 0 {
				budget = handoff.DefaultBudget
			}
			if doc.Tokens > budget {
				t.Errorf("markdown is %d tokens, budget %d", doc.Tokens, budget)
			}
			js, err := json.MarshalIndent(doc, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(transcriptGoldenDir, name)
			checkTranscriptGolden(t, filepath.Join(dir, "handoff.md"), []byte(doc.Markdown))
			checkTranscriptGolden(t, filepath.Join(dir, "handoff.json"), append(js, '\n'))
			// The context a fresh session gets from it, at the default
			// budget: the rendering resume makes.
			checkTranscriptGolden(t, filepath.Join(dir, "resume.md"), []byte(tc.resume(doc)))

			back, err := handoff.Parse(doc.Markdown)
			if err != nil {
				t.Fatalf("Parse(Markdown): %v", err)
			}
			if doc.Markdown == handoff.Render(doc, 1<<30, handoff.ApproxTokens) {
				if back.Task != doc.Task || !reflect.DeepEqual(back.NextSteps, doc.NextSteps) ||
					!reflect.DeepEqual(back.Errors, doc.Errors) {
					t.Errorf("Parse(Markdown) does not give back task, next steps and errors:\n got %#v\nwant %#v",
						back, doc)
				}
			}
		})
	}
}

// TestTranscriptGoldenSemantics says in words what each transcript case's
// handoff must show, at the end of the transcript and at a few moments
// where a compaction could have cut it, so that an -update cannot quietly
// accept a wrong answer. Checks marked BUG state the behaviour asked for in
// /tmp/research/handoff-review.md: they fail until the extractor does it.
func TestTranscriptGoldenSemantics(t *testing.T) {
	docs := map[string]handoff.Doc{}
	for _, name := range transcriptCaseNames(t) {
		docs[name] = loadTranscriptCase(t, name).doc()
	}
	for _, name := range []string{"claude-tasks", "claude-beads", "codex-plan"} {
		if _, ok := docs[name]; !ok {
			t.Fatalf("case %s is missing", name)
		}
	}
	t.Run("claude-tasks", func(t *testing.T) { runSem(t, claudeTasksChecks(docs["claude-tasks"])) })
	t.Run("claude-tasks/cut", func(t *testing.T) { runSem(t, claudeTasksCutChecks(t)) })
	t.Run("claude-beads", func(t *testing.T) { runSem(t, claudeBeadsChecks(docs["claude-beads"])) })
	t.Run("claude-beads/cut", func(t *testing.T) { runSem(t, claudeBeadsCutChecks(t)) })
	t.Run("codex-plan", func(t *testing.T) { runSem(t, codexPlanChecks(docs["codex-plan"])) })
	t.Run("codex-plan/cut", func(t *testing.T) { runSem(t, codexPlanCutChecks(t)) })
	t.Run("claude-working-set", func(t *testing.T) { runSem(t, claudeWorkingSetChecks(docs["claude-working-set"])) })
}

// claudeWorkingSetChecks: a rename worked through the files a search
// found, half done at the cut.
func claudeWorkingSetChecks(d handoff.Doc) sems {
	var s sems
	ws := d.WorkingSet
	var recent []string
	for _, f := range ws.Files {
		recent = append(recent, strings.TrimPrefix(f.Path, d.Project+"/")+" "+f.Lines)
	}
	s.add("the files read for the change are in the working set, with the lines read of those read in part",
		reflect.DeepEqual(recent, []string{"marlin/api/views.py lines 80-140", "marlin/api/serializers.py ",
			"marlin/models/sighting.py lines 30-89"}), recent)
	var next []string
	for _, g := range ws.Next {
		for _, p := range g.Paths {
			next = append(next, g.Why+": "+strings.TrimPrefix(p, d.Project+"/"))
		}
	}
	s.add("the rest of the search result is next: the files not changed since",
		reflect.DeepEqual(next, []string{"next, rest of the search result (3 of 6 done): marlin/api/filters.py",
			"next, rest of the search result (3 of 6 done): marlin/exports/csv.py",
			"next, rest of the search result (3 of 6 done): tests/test_sightings_api.py",
			"named by the user: docs/api.md"}), next)
	s.add("the loop's commands, as run", reflect.DeepEqual(ws.Commands, []string{"python -m pytest", "ruff check marlin"}), ws.Commands)
	s.add("the notification is no request; the prompt typed while the agent worked is",
		reflect.DeepEqual(d.Requests[1:], []string{"also update the OpenAPI description in docs/api.md when you're done"}), d.Requests)
	s.add("the decision and its reason are kept, the narration is not",
		len(d.Decisions) == 1 && strings.Contains(d.Decisions[0], "because the nightly export job reads the table directly"), d.Decisions)
	s.add("the failing test is named with its error",
		len(d.Errors) == 1 && strings.Contains(d.Errors[0], "test_list_filters_by_reporter") && strings.Contains(d.Errors[0], "AttributeError"), d.Errors)
	s.add("the item created in another session is in progress, by its id",
		len(d.NextSteps) > 0 && d.NextSteps[0] == "[in progress] #4", d.NextSteps)
	return s
}

// sem is one semantic check: a statement in words, whether it holds, and
// what was found.
type sem struct {
	what string
	ok   bool
	got  any
}

type sems []sem

func (s *sems) add(what string, ok bool, got any) { *s = append(*s, sem{what, ok, got}) }

func runSem(t *testing.T, checks sems) {
	t.Helper()
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s\n    got: %s", c.what, show(c.got))
		}
	}
}

func show(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case []string:
		if len(x) == 0 {
			return "(none)"
		}
		var b strings.Builder
		for _, s := range x {
			b.WriteString("\n      - " + fmt.Sprintf("%q", s))
		}
		return b.String()
	}
	b, _ := json.MarshalIndent(v, "      ", "  ")
	return string(b)
}

// --- helpers over a Doc -----------------------------------------------------

func taskBy(d handoff.Doc, tracker, id string) (handoff.Task, bool) {
	for _, t := range d.Tasks {
		if t.Tracker == tracker && t.ID == id {
			return t, true
		}
	}
	return handoff.Task{}, false
}

func taskStatus(d handoff.Doc, tracker, id string) string {
	t, ok := taskBy(d, tracker, id)
	if !ok {
		return "(absent)"
	}
	return t.Status
}

func fileBy(d handoff.Doc, rel string) (handoff.FileChange, bool) {
	for _, f := range d.Files {
		if f.Path == d.Project+"/"+rel {
			return f, true
		}
	}
	return handoff.FileChange{}, false
}

func hasFile(d handoff.Doc, rel string) bool {
	_, ok := fileBy(d, rel)
	return ok
}

// fileIs tells whether rel was changed with the given status, moved from
// from (relative to the project; "" for not moved) and git state ("" for
// any).
func fileIs(d handoff.Doc, rel, status, from, git string) bool {
	f, ok := fileBy(d, rel)
	if !ok || f.Status != status {
		return false
	}
	if from != "" && f.From != d.Project+"/"+from {
		return false
	}
	if from == "" && f.From != "" {
		return false
	}
	return git == "" || f.Git == git
}

func anyContains(list []string, sub string) bool { return indexOf(list, sub) >= 0 }

func countContains(list []string, sub string) int {
	n := 0
	for _, s := range list {
		if strings.Contains(s, sub) {
			n++
		}
	}
	return n
}

// indexOf is the index of the first item containing sub, -1 if none.
func indexOf(list []string, sub string) int {
	for i, s := range list {
		if strings.Contains(s, sub) {
			return i
		}
	}
	return -1
}

func testStatus(d handoff.Doc, cmd string) string {
	for _, r := range d.TestsRun {
		if r.Command == cmd {
			return r.Status
		}
	}
	return "(absent)"
}

// mdSection is the body of one Markdown section.
func mdSection(md, heading string) string {
	_, rest, ok := strings.Cut(md, "\n## "+heading+"\n")
	if !ok {
		return ""
	}
	body, _, _ := strings.Cut(rest, "\n## ")
	return body
}

// --- claude-tasks -------------------------------------------------------------

const (
	tasksQueued     = `also station names can contain semicolons, e.g. "Kiel; Leuchtturm" – make sure those get quoted`
	tasksCorrection = "no, use the existing formatTideTime helper from src/lib/time.ts instead of Intl.DateTimeFormat, it already handles the DST switch"
	tasksFeedback   = "put it in the overflow menu, not next to the zoom buttons; the toolbar is already crowded on phones"
	tasksReadme     = "when the menu item works, add a short section about the export to the README"
	tasksLastRule   = "One hard rule: do not add any new runtime dependency for this, not even a small CSV library, because the bundle is at 176 kB of our 180 kB budget."
)

func claudeTasksChecks(d handoff.Doc) sems {
	var c sems
	// Requests: the long first one, the prompt queued 2.1.39-style (remove
	// without content, no attachment), the typed correction, the feedback
	// given when rejecting the toolbar edit, the prompt queued with content
	// and an attachment: each once, in that order; nothing injected.
	c.add("there are exactly five requests", len(d.Requests) == 5, d.Requests)
	if len(d.Requests) == 5 {
		c.add("request 1 is the long first prompt, shortened in the middle", strings.HasPrefix(d.Requests[0],
			"We need a CSV export for the tide chart.") && strings.Contains(d.Requests[0], "[…]"), d.Requests[0])
		c.add("request 2 is the prompt queued while the agent was busy (enqueue, then remove without content)",
			d.Requests[1] == tasksQueued, d.Requests[1])
		c.add("request 3 is the typed correction", d.Requests[2] == tasksCorrection, d.Requests[2])
		c.add("request 4 is the feedback given when rejecting the toolbar edit", d.Requests[3] == tasksFeedback, d.Requests[3])
		c.add("request 5 is the prompt queued with content, removed with content and attached as queued_command",
			d.Requests[4] == tasksReadme, d.Requests[4])
	}
	c.add("the queued prompt with remove content and an attachment is one request, not two",
		countContains(d.Requests, "short section about the export") == 1, d.Requests)
	c.add("the 2.1.39-style queued prompt is one request", countContains(d.Requests, "Kiel; Leuchtturm") == 1, d.Requests)
	for _, injected := range []string{"Your questions have been answered", "User has answered", "User has approved",
		"[Request interrupted", "<system-reminder>", "The user doesn't want to proceed", "Entered plan mode"} {
		c.add("no request is injected text: "+injected, !anyContains(d.Requests, injected), d.Requests)
	}

	// The long request: ~1,500 characters, its constraint in the last sentence.
	c.add("the task is the long request shortened in the middle", strings.Contains(d.Task, " […] ") &&
		len([]rune(d.Task)) <= 520, d.Task)
	c.add("the shortened task keeps the last sentence whole (it holds the constraint)", strings.HasSuffix(d.Task, tasksLastRule), d.Task)
	c.add("the shortened task keeps its opening", strings.HasPrefix(d.Task, "We need a CSV export for the tide chart."), d.Task)
	c.add("the Markdown's Task section carries the constraint", strings.Contains(mdSection(d.Markdown, "Task"),
		"do not add any new runtime dependency"), mdSection(d.Markdown, "Task"))
	_, tail, _ := strings.Cut(d.Task, " […] ")
	// BUG: see handoff-review.md #15
	c.add("the kept tail of a shortened request starts at a sentence, not mid-sentence",
		tail != "" && strings.ToUpper(tail[:1]) == tail[:1], tail)

	// Tasks: TaskCreate x4, #3 deleted after the correction, #4 renamed by
	// TaskUpdate, #5 created after the queued README prompt.
	c.add("#1 completed", taskStatus(d, handoff.TrackerTask, "1") == handoff.TaskCompleted, d.Tasks)
	c.add("#2 completed", taskStatus(d, handoff.TrackerTask, "2") == handoff.TaskCompleted, d.Tasks)
	c.add("#3 deleted", taskStatus(d, handoff.TrackerTask, "3") == handoff.TaskDeleted, d.Tasks)
	c.add("#4 in progress", taskStatus(d, handoff.TrackerTask, "4") == handoff.TaskInProgress, d.Tasks)
	c.add("#5 pending", taskStatus(d, handoff.TrackerTask, "5") == handoff.TaskPending, d.Tasks)
	t4, _ := taskBy(d, handoff.TrackerTask, "4")
	c.add("#4 carries the subject TaskUpdate gave it", t4.Subject == "Add Download CSV item to the chart overflow menu", t4)
	c.add("five tasks in all", len(d.Tasks) == 5, d.Tasks)
	c.add("the Markdown lists the done and deleted tasks", strings.Contains(d.Markdown, "- [done] #1: Add toCsv serializer with tests") &&
		strings.Contains(d.Markdown, "- [deleted] #3: Format timestamps with Intl.DateTimeFormat"), mdSection(d.Markdown, "Tasks"))

	// Next steps: in progress first, then pending; nothing completed or deleted.
	c.add("next step 1 is the task in progress", len(d.NextSteps) > 0 &&
		d.NextSteps[0] == "[in progress] #4: Add Download CSV item to the chart overflow menu", d.NextSteps)
	c.add("the pending task follows the one in progress",
		indexOf(d.NextSteps, "[pending] #5: Document the CSV export in the README") == 1, d.NextSteps)
	for _, done := range []string{"#1", "#2", "#3", "toCsv serializer", "visible-range selector", "Intl.DateTimeFormat"} {
		c.add("no completed or deleted task among the next steps: "+done, !anyContains(d.NextSteps, done), d.NextSteps)
	}
	c.add("the still-failing test is a next step", anyContains(d.NextSteps, "Fix what still fails") &&
		anyContains(d.NextSteps, "OverflowMenu.test.tsx"), d.NextSteps)
	// BUG: see handoff-review.md #12
	c.add("the approved plan is not repeated as a next step once tasks were made from it (they hold its open parts)",
		!anyContains(d.NextSteps, "Approved plan: "), d.NextSteps)
	// BUG: see handoff-review.md #14
	c.add("last words taken from a list keep its items apart", !strings.Contains(d.LastWords, "re-run the suite then write"), d.LastWords)

	// Decisions: both AskUserQuestion wordings, the correction, the
	// rejection feedback; no stale diagnosis of a failure fixed since.
	c.add("decision: the delimiter answer (new wording)", anyContains(d.Decisions, "Which delimiter should the export use? → Semicolon"), d.Decisions)
	c.add("decision: the time zone answer (new wording)", anyContains(d.Decisions, "local time? → UTC (ISO 8601)"), d.Decisions)
	c.add("decision: the menu label answer (2.1.38 wording)", anyContains(d.Decisions, "What should the menu item say? → Download CSV"), d.Decisions)
	c.add("decision: the user's correction", anyContains(d.Decisions, "use the existing formatTideTime helper"), d.Decisions)
	// BUG: see handoff-review.md #5
	c.add("decision: the feedback the user gave when rejecting the toolbar edit", anyContains(d.Decisions, tasksFeedback), d.Decisions)
	// BUG: see handoff-review.md #11
	c.add("no decision is the diagnosis of a failure that was fixed since (the DST test passes now)",
		!anyContains(d.Decisions, "The DST case fails"), d.Decisions)
	c.add("the approved plan is kept", strings.Contains(d.Plan, "toCsv") && strings.Contains(d.Plan, "No new runtime dependencies"), d.Plan)

	// Errors: the serializer test failed, then passed in the broader
	// `npx vitest run`; grep without a match and ls of a missing folder are
	// answers; the overflow menu test still fails.
	c.add("exactly one error", len(d.Errors) == 1, d.Errors)
	c.add("the serializer test failure is resolved by the whole-suite run", !anyContains(d.Errors, "csv.test.ts"), d.Errors)
	c.add("grep with no match is not an error", !anyContains(d.Errors, "grep"), d.Errors)
	c.add("ls of a missing folder is not an error", !anyContains(d.Errors, "`ls ") && !anyContains(d.Errors, "src/export/"), d.Errors)
	c.add("the still-failing test is named", anyContains(d.Errors, "OverflowMenu > offers Download CSV once readings are loaded"), d.Errors)
	// BUG: see handoff-review.md #2
	c.add("the still-failing test's place is the test file's line, not a node_modules frame",
		anyContains(d.Errors, "src/components/OverflowMenu.test.tsx:45:19") && !anyContains(d.Errors, "node_modules"), d.Errors)
	c.add("tests run: the whole suite passed", testStatus(d, "npx vitest run") == handoff.TestPassed, d.TestsRun)
	c.add("tests run: the overflow menu test failed", testStatus(d, "npx vitest run src/components/OverflowMenu.test.tsx") == handoff.TestFailed, d.TestsRun)
	// BUG: see handoff-review.md #3
	c.add("tests run: a narrow run that a later broader run covered is not left as failed",
		testStatus(d, "npx vitest run src/export/csv.test.ts") != handoff.TestFailed, d.TestsRun)

	// Files: Write (new), Edit, MultiEdit; not the rejected toolbar edit;
	// not the plan file Claude Code keeps under ~/.claude/plans.
	c.add("src/export/csv.ts is new", fileIs(d, "src/export/csv.ts", handoff.FileAdded, "", ""), d.Files)
	c.add("src/export/csv.test.ts is new", fileIs(d, "src/export/csv.test.ts", handoff.FileAdded, "", ""), d.Files)
	c.add("the store was modified", fileIs(d, "src/stores/readings.ts", handoff.FileModified, "", ""), d.Files)
	c.add("MultiEdit's file was modified", fileIs(d, "src/components/OverflowMenu.tsx", handoff.FileModified, "", ""), d.Files)
	c.add("the edited test file was modified", fileIs(d, "src/components/OverflowMenu.test.tsx", handoff.FileModified, "", ""), d.Files)
	c.add("the rejected edit changed nothing", !hasFile(d, "src/components/ChartToolbar.tsx"), d.Files)
	// BUG: see handoff-review.md #4
	c.add("the plan file under ~/.claude/plans is not project work", !anyContains(d.FilesModified, "/.claude/plans/"), d.FilesModified)
	c.add("every project file is uncommitted (nothing was committed)", func() bool {
		n := 0
		for _, f := range d.Files {
			if strings.HasPrefix(f.Path, d.Project+"/") {
				n++
				if f.Git != handoff.GitUncommitted {
					return false
				}
			}
		}
		return n == 5
	}(), d.Files)

	c.add("context: the last usage of the 200,000-token window", strings.Contains(d.Context, "context 46,562 of 200,000 tokens"), d.Context)
	// BUG: see handoff-review.md #13
	c.add("context names the task in progress as the handoff shows ids elsewhere (#4)", strings.Contains(d.Context, "(#4 in progress)"), d.Context)
	c.add("session from the transcript", d.Session == "5b3e9c1a-7d24-4f6e-b0a8-2c91e4d7f3a6", d.Session)
	c.add("branch from the transcript", d.Branch == "feat/csv-export", d.Branch)
	return c
}

func claudeTasksCutChecks(t *testing.T) sems {
	var c sems
	// Cut right after the user rejected the toolbar edit with feedback.
	d := cutDoc(t, "claude-tasks", `"toolDenialKind":"user-rejected"`)
	c.add("at the rejection: the feedback is the latest request", len(d.Requests) > 0 &&
		d.Requests[len(d.Requests)-1] == tasksFeedback, d.Requests)
	c.add("at the rejection: the rejected file is not listed", !hasFile(d, "src/components/ChartToolbar.tsx"), d.Files)
	// BUG: see handoff-review.md #5
	c.add("at the rejection: the feedback is a decision the next session keeps", anyContains(d.Decisions, tasksFeedback), d.Decisions)
	// BUG: see handoff-review.md #5
	c.add("at the rejection: the context does not say the agent stopped while editing the file the user refused",
		!strings.Contains(d.Context, "editing src/components/ChartToolbar.tsx"), d.Context)
	// BUG: see handoff-review.md #5
	c.add("at the rejection: the refused approach is not handed on as the agent's last words",
		!anyContains(d.NextSteps, "Adding the button next to the zoom controls"), d.NextSteps)

	// Cut right after the first (narrow) vitest failure.
	d = cutDoc(t, "claude-tasks", "src/export/csv.test.ts (4 tests | 1 failed)")
	c.add("at the serializer failure: the error names the test with file:line", anyContains(d.Errors,
		"toCsv > formats timestamps across the DST switch in UTC (src/export/csv.test.ts:27:31)"), d.Errors)
	c.add("at the serializer failure: #1 is the task in progress", len(d.NextSteps) > 0 &&
		d.NextSteps[0] == "[in progress] #1: Add toCsv serializer with tests", d.NextSteps)
	c.add("at the serializer failure: the queued prompt delivered mid-turn is a request", anyContains(d.Requests, "Kiel; Leuchtturm"), d.Requests)
	// BUG: see handoff-review.md #10
	c.add("at the serializer failure: prose from before a dozen tool calls is not handed on as last words",
		!anyContains(d.NextSteps, "Plan approved. Tracking it as tasks."), d.NextSteps)
	return c
}

// --- claude-beads ------------------------------------------------------------

func claudeBeadsChecks(d handoff.Doc) sems {
	var c sems
	c.add("one request: the instruction to work through the epic", len(d.Requests) == 1 &&
		strings.HasPrefix(d.Requests[0], "Work through the ready children of qs-7kd"), d.Requests)

	// Tasks: the epic and its children from bd show, the two items bd
	// create made (old and new output), statuses from update and close;
	// ready items the session never named are not counted.
	c.add("epic qs-7kd is tracked", taskStatus(d, handoff.TrackerBeads, "qs-7kd") != "(absent)", d.Tasks)
	c.add("qs-7kd.1 completed", taskStatus(d, handoff.TrackerBeads, "qs-7kd.1") == handoff.TaskCompleted, d.Tasks)
	c.add("qs-7kd.2 completed", taskStatus(d, handoff.TrackerBeads, "qs-7kd.2") == handoff.TaskCompleted, d.Tasks)
	c.add("qs-7kd.3 in progress", taskStatus(d, handoff.TrackerBeads, "qs-7kd.3") == handoff.TaskInProgress, d.Tasks)
	c.add("qs-9fm (bd create, older output) pending", taskStatus(d, handoff.TrackerBeads, "qs-9fm") == handoff.TaskPending, d.Tasks)
	c.add("qs-7kd.4 (bd create, newer output) pending", taskStatus(d, handoff.TrackerBeads, "qs-7kd.4") == handoff.TaskPending, d.Tasks)
	t9, _ := taskBy(d, handoff.TrackerBeads, "qs-9fm")
	c.add("qs-9fm has the title bd create printed", t9.Subject == "Flaky TestTideTable on CI: depends on the local time zone", t9)
	t4, _ := taskBy(d, handoff.TrackerBeads, "qs-7kd.4")
	c.add("qs-7kd.4 has the title bd create printed", t4.Subject == "Flag overlapping berths in the web dashboard", t4)
	c.add("qs-7kd.4 belongs to the epic (--parent)", t4.Parent == "qs-7kd", t4)
	for _, id := range []string{"qs-7kd.1", "qs-7kd.2", "qs-7kd.3"} {
		tk, _ := taskBy(d, handoff.TrackerBeads, id)
		c.add(id+" belongs to the epic (CHILDREN)", tk.Parent == "qs-7kd", tk)
	}
	c.add("ready items the session never named are not tasks", taskStatus(d, handoff.TrackerBeads, "qs-3ab") == "(absent)" &&
		taskStatus(d, handoff.TrackerBeads, "qs-w2e") == "(absent)", d.Tasks)
	c.add("six tasks in all", len(d.Tasks) == 6, d.Tasks)

	// Next steps: the item in progress first, then the pending ones, then
	// the routine the two finished items went through.
	c.add("next step 1 is the item in progress", len(d.NextSteps) > 0 &&
		d.NextSteps[0] == "[in progress] qs-7kd.3: Move schedule loading into internal/schedule", d.NextSteps)
	c.add("the pending items follow", indexOf(d.NextSteps, "[pending] qs-9fm") == 1 && indexOf(d.NextSteps, "[pending] qs-7kd.4") == 2, d.NextSteps)
	c.add("no completed item among the next steps", !anyContains(d.NextSteps, "qs-7kd.1") && !anyContains(d.NextSteps, "qs-7kd.2"), d.NextSteps)
	c.add("the epic (it has children) is not a next step", !anyContains(d.NextSteps, "qs-7kd: "), d.NextSteps)
	i := indexOf(d.NextSteps, "Then finish as before: ")
	c.add("the routine is a next step, after the open items", i > 2, d.NextSteps)
	if i >= 0 {
		r := d.NextSteps[i]
		last, inOrder := -1, true
		for _, step := range []string{"`go build", "`go test", "`golangci-lint run", "`bd close", "`git commit", "`git push"} {
			j := strings.Index(r, step)
			if j < 0 || j < last {
				inOrder = false
			}
			last = j
		}
		c.add("the routine lists build, test, lint, close, commit, push, in that order", inOrder, r)
		c.add("the routine leaves out staging and claiming", !strings.Contains(r, "git add") && !strings.Contains(r, "bd update"), r)
		c.add("the routine names the broad test run, not the narrow one", !strings.Contains(r, "-run"), r)
		c.add("the routine's push is the plain one, not the one-off `git push -u`", strings.Contains(r, "`git push`") &&
			!strings.Contains(r, "-u"), r)
		c.add("the routine leaves out the one-off gofmt fix", !strings.Contains(r, "gofmt"), r)
	}
	c.add("the agent's next: line is a next step", anyContains(d.NextSteps, "fix the imports in cmd/quayside"), d.NextSteps)

	// Errors: the narrow go test failure resolved by go test ./..., the
	// push without upstream resolved by push -u, the pre-commit hook
	// failure resolved by the next commit: nothing left.
	c.add("no errors left", len(d.Errors) == 0, d.Errors)
	c.add("nothing left to fix among the next steps", !anyContains(d.NextSteps, "Fix what still fails"), d.NextSteps)
	c.add("tests run: go test ./... passed", testStatus(d, "go test ./...") == handoff.TestPassed, d.TestsRun)
	// BUG: see handoff-review.md #3
	c.add("tests run: the narrow go test covered by go test ./... is not left as failed",
		testStatus(d, "go test ./internal/berth -run TestOverlap") != handoff.TestFailed, d.TestsRun)

	// Files: shell moves, deletions, sed -i, heredoc; committed or not.
	c.add("window.go modified, committed", fileIs(d, "internal/berth/window.go", handoff.FileModified, "", handoff.GitCommitted), d.Files)
	c.add("window_test.go new, committed", fileIs(d, "internal/berth/window_test.go", handoff.FileAdded, "", handoff.GitCommitted), d.Files)
	c.add("git mv: conflicts.go at its new path with the old one, committed",
		fileIs(d, "internal/berth/conflicts.go", handoff.FileMoved, "internal/plan/conflicts.go", handoff.GitCommitted), d.Files)
	c.add("the old path of the git mv is not listed on its own", !hasFile(d, "internal/plan/conflicts.go"), d.Files)
	c.add("mv: load.go at its new path with the old one, uncommitted",
		fileIs(d, "internal/schedule/load.go", handoff.FileMoved, "internal/plan/load.go", handoff.GitUncommitted), d.Files)
	c.add("the old path of the mv is not listed on its own", !hasFile(d, "internal/plan/load.go"), d.Files)
	c.add("rm: legacy_csv.go deleted, uncommitted", fileIs(d, "internal/plan/legacy_csv.go", handoff.FileDeleted, "", handoff.GitUncommitted), d.Files)
	c.add("sed -i and Edit: plan.go changed, uncommitted since item 3 edited it again",
		fileIs(d, "cmd/quayside/plan.go", handoff.FileModified, "", handoff.GitUncommitted), d.Files)
	c.add("cat > heredoc: doc.go written, uncommitted", func() bool {
		f, ok := fileBy(d, "internal/schedule/doc.go")
		return ok && f.Git == handoff.GitUncommitted
	}(), d.Files)
	// BUG: see handoff-review.md #9
	c.add("cat > heredoc into the folder the session just made (mkdir -p) is a new file",
		fileIs(d, "internal/schedule/doc.go", handoff.FileAdded, "", handoff.GitUncommitted), d.Files)
	c.add("seven files in all", len(d.Files) == 7, d.Files)
	files := mdSection(d.Markdown, "Files modified")
	c.add("the Markdown shows a move as old → new", strings.Contains(files, "- internal/plan/load.go → internal/schedule/load.go (uncommitted)"), files)
	c.add("the Markdown marks the deletion and the uncommitted state", strings.Contains(files, "- internal/plan/legacy_csv.go (deleted, uncommitted)"), files)
	c.add("the Markdown shows a committed file without a mark", strings.Contains(files, "- internal/berth/window.go\n"), files)

	back, err := handoff.Parse(d.Markdown)
	again := handoff.Doc{}
	if err == nil {
		again, err = handoff.Parse(handoff.Render(back, 1<<30, handoff.ApproxTokens))
	}
	c.add("the Markdown reads back with the epic among the tasks", err == nil && taskStatus(back, "", "qs-7kd") == handoff.TaskPending, back.Tasks)
	// BUG: see handoff-review.md #16
	c.add("the Markdown reads back stably: Parse, Render, Parse keeps the open epic (FuzzParse's seed from this golden)",
		err == nil && reflect.DeepEqual(again.Tasks, back.Tasks), again.Tasks)

	c.add("context names the item in progress", strings.Contains(d.Context, "(qs-7kd.3 in progress)"), d.Context)
	c.add("context: the last usage of the 200,000-token window", strings.Contains(d.Context, "context 49,765 of 200,000 tokens"), d.Context)
	c.add("branch from the transcript", d.Branch == "qs-7kd", d.Branch)
	return c
}

func claudeBeadsCutChecks(t *testing.T) sems {
	var c sems
	// Cut right after the narrow go test failed.
	d := cutDoc(t, "claude-beads", "--- FAIL: TestOverlap (0.00s)")
	c.add("at the go test failure: one error, naming the subtest", len(d.Errors) == 1 &&
		strings.Contains(d.Errors[0], "TestOverlap/touching_windows") && strings.Contains(d.Errors[0], "Overlap(8-10, 10-12) = true, want false"), d.Errors)
	// BUG: see handoff-review.md #8
	c.add("at the go test failure: the place is given from the project root (go test prints the file's base name only)",
		anyContains(d.Errors, "internal/berth/window_test.go:25"), d.Errors)
	c.add("at the go test failure: qs-7kd.1 is in progress and first", len(d.NextSteps) > 0 &&
		d.NextSteps[0] == "[in progress] qs-7kd.1: Add Window.Overlap to internal/berth", d.NextSteps)
	c.add("at the go test failure: fixing it is a next step", anyContains(d.NextSteps, "Fix what still fails: `go test ./internal/berth -run TestOverlap`"), d.NextSteps)

	// Cut right after the pre-commit hook refused the first commit.
	d = cutDoc(t, "claude-beads", "Pre-commit validation failed:")
	c.add("at the hook failure: the commit is an error", anyContains(d.Errors, "`git commit`"), d.Errors)
	c.add("at the hook failure: no literal \\n in the error", !anyContains(d.Errors, `\n`), d.Errors)
	// BUG: see handoff-review.md #6
	c.add("at the hook failure: the error says which check failed and on what ([GOFMT] … window_test.go)",
		anyContains(d.Errors, "[GOFMT]") && anyContains(d.Errors, "window_test.go is not gofmt-formatted"), d.Errors)

	// Cut right after the push without upstream.
	d = cutDoc(t, "claude-beads", "has no upstream branch")
	c.add("at the push failure: the error says why", anyContains(d.Errors, "`git push`: fatal: The current branch qs-7kd has no upstream branch."), d.Errors)
	c.add("at the push failure: the hook failure is resolved by the commit that followed", !anyContains(d.Errors, "git commit"), d.Errors)
	return c
}

// --- codex-plan ----------------------------------------------------------------

const (
	codexFirst = "Collection dates like \"1921-06\" or \"vi.1921\" come out as None in the catalogue export. " +
		"Make parse_collected_on accept partial dates (year-month, and roman-numeral months with a year), and " +
		"move the date helpers into herbarium/parsing/ while you're at it. Keep `from herbarium.dates import " +
		"parse_collected_on` working."
	codexSecond = "don't touch herbarium/export/csv.py in this change, Jonas is rewriting it on another branch"
)

func codexPlanChecks(d handoff.Doc) sems {
	var c sems
	c.add("two requests, the typed ones, in order", reflect.DeepEqual(d.Requests, []string{codexFirst, codexSecond}), d.Requests)
	c.add("AGENTS.md is not a request", !anyContains(d.Requests, "AGENTS.md") && !anyContains(d.Requests, "INSTRUCTIONS"), d.Requests)
	c.add("environment_context is not a request", !anyContains(d.Requests, "environment_context"), d.Requests)
	c.add("the permissions message is not a request", !anyContains(d.Requests, "permissions instructions"), d.Requests)
	c.add("the task is the first typed prompt", d.Task == codexFirst, d.Task)
	c.add("decision: the user's constraint", anyContains(d.Decisions, "user: "+codexSecond), d.Decisions)

	// update_plan: the latest whole plan wins; open steps first.
	var plan []string
	for _, t := range d.Tasks {
		if t.Tracker == handoff.TrackerPlan {
			plan = append(plan, t.Status+": "+t.Subject)
		}
	}
	c.add("the plan is the latest update_plan, the step in progress first", reflect.DeepEqual(plan, []string{
		"in_progress: Document the accepted date formats in docs/dates.md",
		"completed: Move the date helpers into herbarium/parsing",
		"completed: Accept year-month and roman-numeral months",
		"completed: Keep herbarium.dates importable",
		"completed: Run the full test suite",
	}), plan)
	c.add("next step 1 is the plan step in progress", len(d.NextSteps) > 0 &&
		d.NextSteps[0] == "[in progress] Document the accepted date formats in docs/dates.md", d.NextSteps)
	for _, done := range []string{"Move the date helpers", "Accept year-month", "Keep herbarium.dates", "Run the full test suite"} {
		c.add("no completed step among the next steps: "+done, !anyContains(d.NextSteps, done), d.NextSteps)
	}

	// Errors: the narrow pytest failure is resolved by the whole suite;
	// rg with no match is an answer.
	c.add("no errors left", len(d.Errors) == 0, d.Errors)
	c.add("nothing left to fix among the next steps", !anyContains(d.NextSteps, "Fix what still fails"), d.NextSteps)
	c.add("tests run: pytest (whole suite) passed", testStatus(d, "pytest") == handoff.TestPassed, d.TestsRun)
	// BUG: see handoff-review.md #3
	c.add("tests run: the narrow pytest covered by the whole suite is not left as failed",
		testStatus(d, "pytest tests/test_partial_dates.py") != handoff.TestFailed, d.TestsRun)

	// Files from apply_patch: *** Move to, *** Delete File, *** Add File.
	c.add("dates.py at its new path with the old one", fileIs(d, "herbarium/parsing/dates.py", handoff.FileMoved, "herbarium/dates.py", ""), d.Files)
	c.add("legacy_dates.py deleted", fileIs(d, "herbarium/legacy_dates.py", handoff.FileDeleted, "", ""), d.Files)
	c.add("parsing/__init__.py new", fileIs(d, "herbarium/parsing/__init__.py", handoff.FileAdded, "", ""), d.Files)
	c.add("tests/test_partial_dates.py new", fileIs(d, "tests/test_partial_dates.py", handoff.FileAdded, "", ""), d.Files)
	c.add("the compatibility shim written at the old path is listed as new", fileIs(d, "herbarium/dates.py", handoff.FileAdded, "", ""), d.Files)
	c.add("the docs being written are listed", fileIs(d, "docs/dates.md", handoff.FileModified, "", ""), d.Files)
	c.add("the exporter the user protected was not touched", !hasFile(d, "herbarium/export/csv.py"), d.Files)
	c.add("six files in all, all uncommitted (nothing was committed)", func() bool {
		for _, f := range d.Files {
			if f.Git != handoff.GitUncommitted {
				return false
			}
		}
		return len(d.Files) == 6
	}(), d.Files)

	c.add("context from token_count: input tokens of the window", strings.Contains(d.Context, "context 37,904 of 272,000 tokens"), d.Context)
	c.add("session from session_meta", d.Session == "019f5a2e-41c7-7b90-9d3e-6a1f0c84b2d5", d.Session)
	c.add("branch from session_meta's git", d.Branch == "fix/partial-dates", d.Branch)
	c.add("created defaults to the last line's time", d.CreatedAt.Format(time.RFC3339) == "2026-07-14T07:59:34Z", d.CreatedAt)
	return c
}

func codexPlanCutChecks(t *testing.T) sems {
	var c sems
	// Cut right after the narrow pytest failed.
	d := cutDoc(t, "codex-plan", "short test summary info")
	c.add("at the pytest failure: one error, naming the test and its assertion", len(d.Errors) == 1 &&
		strings.Contains(d.Errors[0], "test_partial_dates[vi.1921-expected2]") && strings.Contains(d.Errors[0], "AssertionError"), d.Errors)
	// BUG: see handoff-review.md #7
	c.add("at the pytest failure: the place has the line pytest printed (tests/test_partial_dates.py:20)",
		anyContains(d.Errors, "tests/test_partial_dates.py:20"), d.Errors)
	c.add("at the pytest failure: rg with no match is still not an error", !anyContains(d.Errors, "rg "), d.Errors)
	c.add("at the pytest failure: the plan step in progress is first", len(d.NextSteps) > 0 &&
		d.NextSteps[0] == "[in progress] Accept year-month and roman-numeral months", d.NextSteps)
	// BUG: see handoff-review.md #10
	c.add("at the pytest failure: the agent's first sentence of the session is not handed on as its last words",
		!anyContains(d.NextSteps, "I'll find the parser and its tests first."), d.NextSteps)
	return c
}
