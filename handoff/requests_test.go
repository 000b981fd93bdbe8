package handoff

import (
	"reflect"
	"strings"
	"testing"

	"github.com/agentledger/ledger/compact"
)

func TestRequests(t *testing.T) {
	long := "Port the billing export to the new API. " + strings.Repeat("The old exporter writes CSV by hand and mixes up the encodings. ", 25) +
		"Constraint: keep the old endpoint working until March."
	tests := []struct {
		name string
		msgs conversation
		want []string
	}{
		{"every request in order, short follow-ups included",
			conversation{}.user("Fix the flaky login test").say("Done.").user("continue until all are done").user("thanks, now push"),
			[]string{"Fix the flaky login test", "continue until all are done", "thanks, now push"}},
		{"the same request twice in a row is one",
			conversation{}.user("go on with the export").user("go on with the export"), []string{"go on with the export"}},
		{"injected text is not a request",
			conversation{}.user("Run the linter").
				user("<system-reminder>\nThe user sent a new message\n</system-reminder>").
				user("<local-command-stdout>Set model to opus</local-command-stdout>").
				user("Base directory for this skill: /home/u/.claude/skills/x\n\n# Skill").
				user("<task-notification>\n<task-id>b1</task-id>\n</task-notification>").
				user("[Request interrupted by user for tool use]").
				user("skill body").with(func(m *compact.Message) { m.Meta = true }).
				user("<command-name>/clear</command-name>\n<command-args></command-args>"),
			[]string{"Run the linter"}},
		{"injected by the agent, whatever the text: marked Meta by the transcript's structure",
			conversation{}.user("Add rate limits to the public API").
				user(`{"task_id": "b91", "status": "completed", "summary": "tests passed"}`).with(func(m *compact.Message) { m.Meta = true }).
				user("Teammate reviewer: looks good, merge it").with(func(m *compact.Message) { m.Meta = true }),
			[]string{"Add rate limits to the public API"}},
		{"older transcripts: notifications and unknown commands by their text",
			conversation{}.user("Add rate limits to the public API").
				user(`{"task_id": "b91", "status": "completed"}`).
				user("<bash-notification>\n<shell-id>b2</shell-id>\n<status>completed</status>\n</bash-notification>").
				user("Unknown slash command: limits"),
			[]string{"Add rate limits to the public API"}},
		{"an answer without its question is not a request",
			conversation{}.user("Add rate limits to the public API").say("Per key or per IP?\n1. per key\n2. per IP").
				user("1").user("yes").user("b").user("per key, and log the rejections"),
			[]string{"Add rate limits to the public API", "per key, and log the rejections"}},
		{"the question dialog's own words when the user asks to clarify are not a request",
			conversation{}.user("Add rate limits to the public API").
				call("AskUserQuestion", "1", map[string]any{"questions": []any{}}).
				result("1", "The user doesn't want to proceed with this tool use. The tool use was rejected. To tell you how to proceed, the user said:\n"+
					"The user wants to clarify these questions.\n    This means they may have additional information.\n\n    Questions asked:\n- \"Per key or per IP?\"", true),
			[]string{"Add rate limits to the public API"}},
		{"a slash command with arguments is a request",
			conversation{}.user("<command-message>review is running…</command-message>\n<command-name>/review</command-name>\n<command-args>the auth module</command-args>"),
			[]string{"/review the auth module"}},
		{"the feedback given when refusing a call is a request",
			conversation{}.user("Clean up the config").
				call("Bash", "1", bash("rm -rf config/old")).
				result("1", "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\nkeep config/old, move it to config/archive instead", true),
			[]string{"Clean up the config", "keep config/old, move it to config/archive instead"}},
		{"a long request is shortened in the middle, its end kept",
			conversation{}.user(long), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Extract(tc.msgs, ExtractOptions{})
			if tc.want == nil {
				r := d.Requests[0]
				if len([]rune(r)) > maxRequest || !strings.HasPrefix(r, "Port the billing export") ||
					!strings.HasSuffix(r, "keep the old endpoint working until March.") {
					t.Errorf("request %q", r)
				}
				return
			}
			if !reflect.DeepEqual(d.Requests, tc.want) {
				t.Errorf("Requests\n got %q\nwant %q", d.Requests, tc.want)
			}
		})
	}
}

func TestDecisionsExplicit(t *testing.T) {
	msgs := conversation{}.
		user("Add CSV export to the reports page").
		call("AskUserQuestion", "1", map[string]any{"questions": []map[string]any{{"question": "Which delimiter?", "header": "CSV"}}}).
		result("1", `User has answered your questions: "Which delimiter?"="Semicolon", "Quote every field?"="Only when needed". You can now continue with the user's answers in mind.`, false).
		call("AskUserQuestion", "2", map[string]any{"questions": []map[string]any{{"question": "Encoding?"}}}).
		result("2", `Your questions have been answered: "Encoding?"="UTF-8 with BOM". You can now continue with these answers in mind.`, false).
		call("AskUserQuestion", "3", map[string]any{}).
		result("3", "The user doesn't want to proceed with this tool use. The tool use was rejected", true).
		user("no, use the streaming writer instead of building the file in memory").
		say("Decision: exports go through the job queue.")
	d := Extract(msgs, ExtractOptions{Notes: []Note{{Kind: NoteDecision, Text: "Reports are read-only for viewers."}}})
	want := []string{
		"Reports are read-only for viewers.",
		"Which delimiter? → Semicolon", "Quote every field? → Only when needed", "Encoding? → UTF-8 with BOM",
		"user: no, use the streaming writer instead of building the file in memory",
		"exports go through the job queue.",
	}
	if !reflect.DeepEqual(d.Decisions, want) {
		t.Errorf("Decisions\n got %q\nwant %q", d.Decisions, want)
	}
	if len(d.Requests) != 2 {
		t.Errorf("the correction is a request too: %q", d.Requests)
	}
}

func TestDecisionsInferred(t *testing.T) {
	tests := []struct {
		name  string
		prose string
		after bool // right after a failed call
		kept  bool
	}{
		{"a limit and the fix", "The generated migration uses `ALTER COLUMN`, which SQLite doesn't support. I need to rebuild the table instead.", false, true},
		{"a cause, after a failure", "The test process can't see the sandbox because LiveView runs in a separate process. I'll switch the sandbox to shared mode.", true, true},
		{"a choice", "Let's go with a token bucket per API key rather than a global limiter.", false, true},
		{"a constraint found the hard way", "The pre-commit hook still runs even with --no-verify, so it cannot be bypassed.", true, true},
		{"narration is not a decision", "Let me read the config file first.", false, false},
		{"a progress report is not a decision", "All 43 tests pass now.", false, false},
		{"a question is not a decision", "Should I also update the CHANGELOG?", false, false},
		{"a state of the moment is not a rule", "The module doesn't exist yet.", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var msgs conversation
			if tc.after {
				msgs = msgs.call("Bash", "1", bash("mix test")).result("1", "Exit code 1\n1 failure", true)
			}
			d := Extract(msgs.say(tc.prose), ExtractOptions{})
			if kept := len(d.Decisions) > 0; kept != tc.kept {
				t.Errorf("decisions %q, want kept=%v", d.Decisions, tc.kept)
			}
		})
	}
}

// TestNarrationIsNotADecision: what the agent says it does next is
// narration; a reason, a limit or a choice stays.
func TestNarrationIsNotADecision(t *testing.T) {
	t.Parallel()
	tests := []struct {
		prose string
		kept  bool
	}{
		{"I need to also import `Plug.Conn` in the helper.", false},
		{"Let me fix the failing assertion in `cart_test.exs`.", false},
		{"Now let me update the router to use the new controller.", false},
		{"Let me try using `Ecto.Multi` instead.", false},
		{"If you want the export in UTC instead of local time, you can pass `--utc`.", false},
		{"Now there's only one worker running (instead of three).", false},
		{"The scheduler must be rate limited. Let me try adding a token bucket.", false},
		{"The export has been written to `out/report.csv` instead.", false},
		{"I'll keep the old endpoint rather than removing it, because the mobile app still calls it.", true},
		{"Redis is not available in CI, so we must use the in-memory store in tests.", true},
		{"The issue is that the worker can't access the sandbox. Let me rewrite it to use a shared connection.", true},
	}
	for _, tc := range tests {
		d := Extract(conversation{}.say(tc.prose), ExtractOptions{})
		if kept := len(d.Decisions) > 0; kept != tc.kept {
			t.Errorf("%q: decisions %q, want kept=%v", tc.prose, d.Decisions, tc.kept)
		}
	}
}

// TestPlanExplanationIsADecision: Codex's update_plan explanation that
// gives a reason or states a choice is a decision; one that says where
// the work stands is not.
func TestPlanExplanationIsADecision(t *testing.T) {
	t.Parallel()
	plan := func(expl string) conversation {
		return conversation{}.call("update_plan", "1", map[string]any{"explanation": expl,
			"plan": []map[string]any{{"step": "Parse the header", "status": "in_progress"}}}).result("1", "Plan updated", false)
	}
	d := Extract(plan("Keeping the parser streaming instead of loading whole files, because exports reach 2 GB."), ExtractOptions{})
	if want := []string{"Keeping the parser streaming instead of loading whole files, because exports reach 2 GB."}; !reflect.DeepEqual(d.Decisions, want) {
		t.Errorf("Decisions = %q, want %q", d.Decisions, want)
	}
	if d := Extract(plan("Header parsed; moving on to the rows next."), ExtractOptions{}); len(d.Decisions) != 0 {
		t.Errorf("a progress note is a decision: %q", d.Decisions)
	}
}

func TestDecisionsFromSettings(t *testing.T) {
	msgs := conversation{}.
		call("Edit", "1", map[string]any{"file_path": "/p/config/test.exs", "old_string": "config :app, tracing: true",
			"new_string": "# Tracing is off in tests: it is slow and noisy\nconfig :app, tracing: false"}).result("1", "ok", false).
		call("Edit", "2", map[string]any{"file_path": "/p/package.json", "old_string": `"dependencies": {`,
			"new_string": "\"dependencies\": {\n    \"zod\": \"^3.23.0\","}).result("2", "ok", false).
		call("Edit", "3", map[string]any{"file_path": "/p/internal/config/config.go", "old_string": "a", "new_string": "b"}).result("3", "ok", false)
	d := Extract(msgs, ExtractOptions{Project: "/p"})
	want := []string{"config/test.exs: config :app, tracing: false — Tracing is off in tests: it is slow and noisy",
		`package.json: "zod": "^3.23.0"`}
	if !reflect.DeepEqual(d.Decisions, want) {
		t.Errorf("Decisions\n got %q\nwant %q (code in a config folder is not a setting)", d.Decisions, want)
	}
}
