package handoff

import (
	"reflect"
	"strings"
	"testing"

	"github.com/agentledger/ledger/compact"
)

// tasksOf is the tracker state a conversation leaves: id, subject, status.
func tasksOf(d Doc) []Task {
	var out []Task
	for _, t := range d.Tasks {
		out = append(out, Task{ID: t.ID, Subject: t.Subject, Status: t.Status})
	}
	return out
}

func TestTrackers(t *testing.T) {
	beadsShow := "◐ shop-7ka [EPIC] · Checkout rework   [● P1 · IN_PROGRESS]\nOwner: Dana · Type: epic\n\nDESCRIPTION\nRework checkout.\n\n" +
		"CHILDREN\n  ↳ ✓ shop-7ka.1: Extract the price calculator ● P1\n  ↳ ○ shop-7ka.2: Add coupon codes ● P1\n  ↳ ○ shop-7ka.3: Show taxes per line ● P2\n"
	tests := []struct {
		name string
		msgs conversation
		want []Task
	}{
		{"TodoWrite: the latest whole list",
			conversation{}.
				call("TodoWrite", "1", map[string]any{"todos": []map[string]string{{"content": "Parse the feed", "status": "in_progress"}, {"content": "Old step", "status": "pending"}}}).
				call("TodoWrite", "2", map[string]any{"todos": []map[string]string{
					{"content": "Parse the feed", "status": "completed"}, {"content": "Store items", "status": "in_progress"}, {"content": "Add paging", "status": "pending"}}}),
			[]Task{{Subject: "Store items", Status: TaskInProgress}, {Subject: "Add paging", Status: TaskPending},
				{Subject: "Parse the feed", Status: TaskCompleted}}},
		{"Task tools: create, update, delete; newest state wins",
			conversation{}.
				call("TaskCreate", "1", map[string]any{"subject": "Add the migration", "description": "d", "activeForm": "Adding"}).
				result("1", "Task #1 created successfully: Add the migration", false).
				call("TaskCreate", "2", map[string]any{"subject": "Wire the importer", "description": "d"}).
				result("2", "Task #2 created successfully: Wire the importer", false).
				call("TaskCreate", "3", map[string]any{"subject": "Spike: try a queue", "description": "d"}).
				result("3", "Task #3 created successfully: Spike: try a queue", false).
				call("TaskUpdate", "4", map[string]any{"taskId": "1", "status": "in_progress"}).result("4", "Updated task #1 status", false).
				call("TaskUpdate", "5", map[string]any{"taskId": "1", "status": "completed"}).result("5", "Updated task #1 status", false).
				call("TaskUpdate", "6", map[string]any{"taskId": 2, "status": "in_progress"}).result("6", "Updated task #2 status", false).
				call("TaskUpdate", "7", map[string]any{"taskId": "3", "status": "deleted"}).result("7", "Updated task #3 deleted", false).
				call("TaskUpdate", "8", map[string]any{"taskId": "9", "status": "completed"}).result("8", "Task not found", false),
			[]Task{{ID: "2", Subject: "Wire the importer", Status: TaskInProgress}, {ID: "1", Subject: "Add the migration", Status: TaskCompleted},
				{ID: "3", Subject: "Spike: try a queue", Status: TaskDeleted}}},
		{"TaskList and TaskGet refresh the state",
			conversation{}.
				call("TaskList", "1", map[string]any{}).result("1", "#1 [completed] Add migration\n#2 [in_progress] Wire importer (alice)\n#3 [pending] Write tests [blocked by #2]", false).
				call("TaskGet", "2", map[string]any{"taskId": "3"}).result("2", "Task #3: Write tests\nStatus: in_progress\nDescription: Cover the edge cases\nBlocked by: #2", false),
			[]Task{{ID: "2", Subject: "Wire importer", Status: TaskInProgress}, {ID: "3", Subject: "Write tests", Status: TaskInProgress},
				{ID: "1", Subject: "Add migration", Status: TaskCompleted}}},
		{"Task tools from a subagent count: the session's list is shared",
			conversation{}.call("TaskCreate", "1", map[string]any{"subject": "sub"}).with(func(m *compact.Message) { m.Sidechain = true }).
				result("1", "Task #1 created successfully: sub", false),
			[]Task{{ID: "1", Subject: "sub", Status: TaskPending}}},
		{"Codex update_plan: arguments are a JSON string",
			conversation{}.call("update_plan", "1", `{"explanation":"schema done","plan":[{"step":"Add table","status":"completed"},{"step":"Wire importer","status":"in_progress"},{"step":"Run cargo test","status":"pending"}]}`),
			[]Task{{Subject: "Wire importer", Status: TaskInProgress}, {Subject: "Run cargo test", Status: TaskPending},
				{Subject: "Add table", Status: TaskCompleted}}},
		{"beads: show counts the item and its children; update and close; listings refresh only what counts",
			conversation{}.
				call("Bash", "1", bash("bd ready")).result("1", "📋 Ready work (3 issues with no blockers):\n\n1. [● P1] [task] shop-7ka.2: Add coupon codes\n2. [● P2] [task] shop-zz9: Unrelated work", false).
				call("Bash", "2", bash("bd show shop-7ka 2>/dev/null")).result("2", beadsShow, false).
				call("Bash", "3", bash("bd update shop-7ka.2 --status in_progress")).result("3", "✓ Updated issue: shop-7ka.2", false).
				call("Bash", "4", bash("bd close shop-7ka.2 --reason \"coupons done\"")).result("4", "✓ Closed shop-7ka.2: coupons done", false).
				call("Bash", "5", bash("bd update shop-7ka.3 --claim && bd list --status=open")).
				result("5", "✓ Updated issue: shop-7ka.3 — Show taxes per line\n○ shop-zz9 [● P2] [task] - Unrelated work\n◐ shop-7ka.3 [● P2] [task] - Show taxes per line (blocked by: shop-7ka)", false),
			[]Task{{ID: "shop-7ka", Subject: "Checkout rework", Status: TaskInProgress}, {ID: "shop-7ka.3", Subject: "Show taxes per line", Status: TaskInProgress},
				{ID: "shop-7ka.1", Subject: "Extract the price calculator", Status: TaskCompleted},
				{ID: "shop-7ka.2", Subject: "Add coupon codes", Status: TaskCompleted}}},
		{"beads: create (old and new output), reopen, a failed command changes nothing",
			conversation{}.
				call("Bash", "1", bash(`bd create "Fix the flaky login test" -t bug -p 1`)).
				result("1", "✓ Created issue: web-a1b\n  Title: Fix the flaky login test\n  Priority: P1\n  Status: open", false).
				call("Bash", "2", bash(`bd create --title "Rotate the API keys" -p 2`)).result("2", "✓ Created issue: web-c3d — Rotate the API keys\n  Priority: P2\n  Status: open", false).
				call("Bash", "3", bash("bd close web-a1b")).result("3", "✓ Closed web-a1b — Fix the flaky login test: Closed", false).
				call("Bash", "4", bash("bd reopen web-a1b")).result("4", "↻ Reopened web-a1b", false).
				call("Bash", "5", bash("bd close web-c3d")).result("5", "Exit code 1\nError: database is locked", true),
			[]Task{{ID: "web-a1b", Subject: "Fix the flaky login test", Status: TaskPending}, {ID: "web-c3d", Subject: "Rotate the API keys", Status: TaskPending}}},
		{"gh: issue create and close",
			conversation{}.
				call("Bash", "1", bash(`gh issue create --title "Document the 429" --body "x"`)).result("1", "https://github.com/acme/api/issues/41", false).
				call("Bash", "2", bash("gh issue close 12 -c done")).result("2", "✓ Closed issue acme/api#12 (Rate limit per route)", false),
			[]Task{{ID: "41", Subject: "Document the 429", Status: TaskPending}, {ID: "12", Subject: "Rate limit per route", Status: TaskCompleted}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tasksOf(Extract(tc.msgs, ExtractOptions{Project: "/p"})); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("tasks\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestTasksInNextSteps(t *testing.T) {
	show := "○ api-9.2 · Add the retry policy   [● P2 · OPEN]\nOwner: x · Type: task\n\nDESCRIPTION\nRetry transient failures.\n\n" +
		"Output files:\n- `internal/retry/policy.go` (new)\n- `internal/retry/policy_test.go` (new)\n\nDefinition of Done:\n- Retries 3 times with backoff.\n- Tests cover the give-up path.\n\n" +
		"PARENT\n  ↑ ◐ api-9: (EPIC) Resilience ● P2\n"
	msgs := conversation{}.
		call("Bash", "1", bash("bd show api-9.2")).result("1", show, false).
		call("Bash", "2", bash("bd show api-9.3")).result("2", "○ api-9.3 · Add a circuit breaker   [● P2 · OPEN]\n", false).
		call("Bash", "3", bash("bd show api-9.1")).result("3", "✓ api-9.1 · Add timeouts   [● P2 · CLOSED]\n", false).
		call("Bash", "4", bash("bd update api-9.2 --status in_progress")).result("4", "✓ Updated issue: api-9.2", false).
		call("Write", "5", map[string]any{"file_path": "/p/internal/retry/policy.go", "content": "package retry"}).result("5", "File created successfully at: /p/internal/retry/policy.go", false)
	d := Extract(msgs, ExtractOptions{Project: "/p"})
	want := []string{
		"[in progress] api-9.2: Add the retry policy",
		"still to do for api-9.2: done when Retries 3 times with backoff; Tests cover the give-up path",
		"[pending] api-9.3: Add a circuit breaker",
	}
	if !reflect.DeepEqual(d.NextSteps, want) {
		t.Errorf("NextSteps\n got %q\nwant %q", d.NextSteps, want)
	}
	for _, s := range d.NextSteps {
		if reTaskItem.MatchString(s) && (s == "[done] api-9.1: Add timeouts") {
			t.Errorf("a closed item is a next step: %q", s)
		}
	}
	// The files the item names that the session has not touched yet are
	// the working set's next files.
	wantNext := []NextFiles{{Why: "next, for api-9.2", Paths: []string{"/p/internal/retry/policy_test.go"}}}
	if !reflect.DeepEqual(d.WorkingSet.Next, wantNext) {
		t.Errorf("WorkingSet.Next\n got %+v\nwant %+v", d.WorkingSet.Next, wantNext)
	}
}

// TestDoneTasksAreACount: of a long list's done items the Tasks section
// lists the latest few, in the order they were done, and a count of the
// rest; open items are never left out for them.
func TestDoneTasksAreACount(t *testing.T) {
	t.Parallel()
	var c conversation
	for i := 1; i <= 9; i++ {
		id := string(rune('0' + i))
		c = c.call("TaskCreate", "c"+id, map[string]any{"subject": "Step " + id}).
			result("c"+id, "Task #"+id+" created successfully: Step "+id, false)
	}
	// Done out of order: 3, then 1, 2, 4, 5, 6, 7.
	for _, id := range []string{"3", "1", "2", "4", "5", "6", "7"} {
		c = c.call("TaskUpdate", "u"+id, map[string]any{"taskId": id, "status": "completed"}).result("u"+id, "Updated task #"+id, false)
	}
	c = c.call("TaskUpdate", "u8", map[string]any{"taskId": "8", "status": "in_progress"}).result("u8", "Updated task #8", false)
	d := Extract(c, ExtractOptions{})
	md := Render(d, 0, ApproxTokens)
	want := "## Tasks\n- … +3 more\n- [done] #4: Step 4\n- [done] #5: Step 5\n- [done] #6: Step 6\n- [done] #7: Step 7\n\n"
	if !strings.Contains(md, want) {
		t.Errorf("Markdown:\n%s\nwant\n%s", md, want)
	}
	if !strings.Contains(md, "- [in progress] #8: Step 8\n- [pending] #9: Step 9\n") {
		t.Errorf("the open items are not the next steps:\n%s", md)
	}
}

// TestTeamTasks: an item another session of the team created is known
// here by its id only; what the other sessions hold gives its subject,
// and an item a teammate closed is no longer a next step.
func TestTeamTasks(t *testing.T) {
	t.Parallel()
	// A teammate's session: it takes #6 and #7, created by the lead.
	mate := conversation{}.
		call("TaskUpdate", "1", map[string]any{"taskId": "6", "status": "in_progress"}).result("1", "Updated task #6 status", false).
		call("TaskUpdate", "2", map[string]any{"taskId": "7", "status": "pending"}).result("2", "Updated task #7 status", false).
		call("TaskUpdate", "3", map[string]any{"taskId": "8", "status": "in_progress"}).result("3", "Updated task #8 status", false)
	d := Extract(mate, ExtractOptions{})
	if !MissingSubjects(d) {
		t.Fatal("MissingSubjects = false for bare ids")
	}
	// The lead's session created them, and closed #8 since.
	lead := Extract(conversation{}.
		call("TaskCreate", "1", map[string]any{"subject": "Index the orders table"}).result("1", "Task #6 created successfully: Index the orders table", false).
		call("TaskCreate", "2", map[string]any{"subject": "Backfill order totals"}).result("2", "Task #7 created successfully: Backfill order totals", false).
		call("TaskCreate", "3", map[string]any{"subject": "Drop the legacy view"}).result("3", "Task #8 created successfully: Drop the legacy view", false).
		call("TaskUpdate", "4", map[string]any{"taskId": "8", "status": "completed"}).result("4", "Updated task #8 status", false),
		ExtractOptions{})
	got := ResolveTasks(d, lead.Tasks)
	wantNext := []string{"[in progress] #6: Index the orders table", "[pending] #7: Backfill order totals"}
	if !reflect.DeepEqual(got.NextSteps, wantNext) {
		t.Errorf("NextSteps\n got %q\nwant %q", got.NextSteps, wantNext)
	}
	if MissingSubjects(got) {
		t.Errorf("subjects still missing: %+v", got.Tasks)
	}
	if md := Render(got, 0, ApproxTokens); !strings.Contains(md, "- [done] #8: Drop the legacy view\n") {
		t.Errorf("the item closed elsewhere is not done:\n%s", md)
	}
}

// TestSubagentTaskTools: a subagent's Task tool calls change the list the
// session shares; its TodoWrite list is its own.
func TestSubagentTaskTools(t *testing.T) {
	t.Parallel()
	side := func(m *compact.Message) { m.Sidechain = true }
	msgs := conversation{}.
		call("TaskCreate", "1", map[string]any{"subject": "Profile the import"}).result("1", "Task #1 created successfully: Profile the import", false).
		call("TaskUpdate", "2", map[string]any{"taskId": "1", "status": "completed"}).with(side).result("2", "Updated task #1", false).with(side).
		call("TodoWrite", "3", map[string]any{"todos": []map[string]any{{"content": "subagent scratch step", "status": "pending"}}}).with(side).
		result("3", "ok", false).with(side)
	d := Extract(msgs, ExtractOptions{})
	want := []Task{{ID: "1", Subject: "Profile the import", Status: TaskCompleted, Tracker: TrackerTask}}
	if !reflect.DeepEqual(d.Tasks, want) {
		t.Errorf("Tasks\n got %+v\nwant %+v", d.Tasks, want)
	}
}
