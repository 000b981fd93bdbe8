package handoff

import (
	"reflect"
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
		{"Task tools from a subagent do not count",
			conversation{}.call("TaskCreate", "1", map[string]any{"subject": "sub"}).with(func(m *compact.Message) { m.Sidechain = true }).
				result("1", "Task #1 created successfully: sub", false),
			nil},
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
		"still to do for api-9.2: done when Retries 3 times with backoff; Tests cover the give-up path; not touched yet: internal/retry/policy_test.go",
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
}
