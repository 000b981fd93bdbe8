package handoff

import (
	"reflect"
	"strings"
	"testing"
)

func TestLastWords(t *testing.T) {
	tests := []struct{ text, want string }{
		{"Done with the parser.\n\nNext I'll wire it into the importer and run the suite.",
			"Next I'll wire it into the importer and run the suite."},
		{"## Summary\n- ✅ Task 1 (shop-1)\n- ✅ Task 2 (shop-2)\n\n### Next Steps\nThe remaining tasks are:\n- shop-3: add coupons\n- shop-4: taxes\n\nThese are ready.",
			"The remaining tasks are: shop-3: add coupons; shop-4: taxes; These are ready."},
		{"**Remaining:**\n1. Update the CHANGELOG\n2. Tag the release", "Update the CHANGELOG; Tag the release"},
		{"```go\nfmt.Println(1)\n```", ""},
		{"Decision: use SQLite\nnext: ship it", ""},
	}
	for _, tc := range tests {
		if got := lastWordsOf(tc.text); got != tc.want {
			t.Errorf("lastWordsOf(%q)\n got %q\nwant %q", tc.text, got, tc.want)
		}
	}
}

func TestNextStepsOrder(t *testing.T) {
	msgs := conversation{}.
		user("Finish the importer").
		call("TodoWrite", "1", map[string]any{"todos": []map[string]string{
			{"content": "Write the parser", "status": "completed"},
			{"content": "Add paging", "status": "pending"},
			{"content": "Wire the importer", "status": "in_progress"}}}).
		call("Bash", "2", bash("npm run build")).result("2", "Exit code 1\nsrc/importer.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.", true).
		say("next: ask about the date format").
		say("Now I'll fix the type error in importer.ts and rebuild.")
	d := Extract(msgs, ExtractOptions{Notes: []Note{{Kind: NoteNext, Text: "Keep the old CSV path until March"}}})
	want := []string{
		"Keep the old CSV path until March",
		"[in progress] Wire the importer",
		"[pending] Add paging",
		fixLabel + "`npm run build`: src/importer.ts:3:7: TS2322: Type 'string' is not assignable to type 'number'.",
		"ask about the date format",
		lastWordsLabel + "“Now I'll fix the type error in importer.ts and rebuild.”",
	}
	if !reflect.DeepEqual(d.NextSteps, want) {
		t.Errorf("NextSteps\n got %q\nwant %q", d.NextSteps, want)
	}
	for _, s := range d.NextSteps {
		if strings.Contains(s, "Write the parser") {
			t.Errorf("a completed item is a next step: %q", s)
		}
	}
}

func TestApprovedPlan(t *testing.T) {
	plan := "# Plan: add retries\n- Wrap the client in a retrying transport\n- Cap at 3 attempts"
	msgs := conversation{}.
		call("ExitPlanMode", "1", map[string]any{"plan": plan, "planFilePath": "/home/u/.claude/plans/x.md"}).
		result("1", "User has approved your plan. You can now start coding.\n\n## Approved Plan:\n"+plan, false)
	d := Extract(msgs, ExtractOptions{})
	if d.Plan != plan {
		t.Errorf("Plan = %q", d.Plan)
	}
	if want := planLabel + "add retries: Wrap the client in a retrying transport; Cap at 3 attempts"; !reflect.DeepEqual(d.NextSteps, []string{want}) {
		t.Errorf("NextSteps = %q", d.NextSteps)
	}
	rejected := conversation{}.call("ExitPlanMode", "1", map[string]any{"plan": plan}).
		result("1", "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\nadd jitter too", true)
	d = Extract(rejected, ExtractOptions{})
	if d.Plan != "" || !reflect.DeepEqual(d.Requests, []string{"add jitter too"}) {
		t.Errorf("rejected plan: Plan %q, Requests %q", d.Plan, d.Requests)
	}
}

// TestRoutine: work finished the same way twice is a routine; the item in
// progress gets the steps it has not run since its last change.
func TestRoutine(t *testing.T) {
	var c conversation
	n := 0
	id := func() string { n++; return strings.Repeat("x", n) }
	run := func(cmd, out string) {
		i := id()
		c = c.call("Bash", i, bash(cmd)).result(i, out, false)
	}
	edit := func(p string) {
		i := id()
		c = c.call("Edit", i, map[string]any{"file_path": p}).result(i, "ok", false)
	}
	for _, item := range []string{"api-1.1", "api-1.2"} {
		run("bd update "+item+" --status in_progress", "✓ Updated issue: "+item)
		edit("/p/" + item + ".go")
		run("go test ./...", "ok")
		edit("/p/" + item + "_test.go")
		run("go vet ./... && go test ./...", "ok")
		run("golangci-lint run", "0 issues.")
		run("bd close "+item, "✓ Closed "+item+": Closed")
		run(`git add -A && git commit -m "feat: `+item+`"`, "[main abc1234] feat")
		run("git push", "To github.com:acme/api.git")
	}
	run("bd update api-1.3 --status in_progress", "✓ Updated issue: api-1.3")
	edit("/p/api-1.3.go")
	run("go test ./...", "ok") // run once, before the last change
	edit("/p/api-1.3_test.go")
	d := Extract(c, ExtractOptions{Project: "/p"})
	want := routineLabel + "`go vet`, `go test`, `golangci-lint run`, `bd close`, `git commit`, `git push`"
	found := false
	for _, s := range d.NextSteps {
		if s == want {
			found = true
		}
		if strings.Contains(s, "api-1.1") || strings.Contains(s, "api-1.2") {
			t.Errorf("a finished item in the next steps: %q", s)
		}
	}
	if !found {
		t.Errorf("NextSteps %q\nlack %q", d.NextSteps, want)
	}
	// Once the routine ran after the last change, nothing is left.
	run("go vet ./... && go test ./...", "ok")
	run("golangci-lint run", "0 issues.")
	run("bd close api-1.3", "✓ Closed api-1.3: Closed")
	run(`git add -A && git commit -m "feat: api-1.3"`, "[main def5678] feat")
	run("git push", "ok")
	for _, s := range Extract(c, ExtractOptions{Project: "/p"}).NextSteps {
		if strings.HasPrefix(s, routineLabel) {
			t.Errorf("routine step after the routine ran: %q", s)
		}
	}
}
