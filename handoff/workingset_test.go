package handoff

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/agentledger/ledger/compact"
)

func read(path string, offset, limit int) map[string]any {
	in := map[string]any{"file_path": path}
	if offset > 0 {
		in["offset"] = offset
	}
	if limit > 0 {
		in["limit"] = limit
	}
	return in
}

func edit(path string) map[string]any {
	return map[string]any{"file_path": path, "old_string": "a", "new_string": "b"}
}

// TestWorkingSetFilesReadForAChange: the files read to make a change are
// in the working set beside the one changed, the latest first, grouped
// by folder, with the lines read where only part was; scratch files and
// deleted files are not.
func TestWorkingSetFilesReadForAChange(t *testing.T) {
	t.Parallel()
	msgs := conversation{}.
		user("Orders placed with a gift card should not charge shipping twice.").
		call("Read", "1", read("/srv/till/app/models/order.py", 0, 0)).result("1", "class Order: ...", false).
		call("Read", "2", read("/srv/till/app/pricing/shipping.py", 120, 60)).result("2", "def shipping(order): ...", false).
		call("Read", "3", read("/tmp/scratch-notes.txt", 0, 0)).result("3", "notes", false).
		call("Bash", "4", bash("nl -ba app/pricing/giftcard.py | sed -n '40,95p'")).result("4", "40 def redeem(...)", false).
		call("Read", "5", read("/srv/till/app/models/missing.py", 0, 0)).result("5", "File does not exist.", true).
		call("Edit", "6", edit("/srv/till/app/pricing/shipping.py")).result("6", "The file has been updated.", false).
		call("Write", "7", map[string]any{"file_path": "/srv/till/app/pricing/old_rules.py", "content": "x"}).result("7", "File created successfully", false).
		call("Bash", "8", bash("rm app/pricing/old_rules.py")).result("8", "", false)
	d := Extract(msgs, ExtractOptions{Project: "/srv/till"})
	want := []WorkFile{
		{Path: "/srv/till/app/pricing/shipping.py", Edited: true, Lines: "lines 120-179"},
		{Path: "/srv/till/app/pricing/giftcard.py", Lines: "lines 40-95"},
		{Path: "/srv/till/app/models/order.py"},
	}
	if !reflect.DeepEqual(d.WorkingSet.Files, want) {
		t.Errorf("Files\n got %+v\nwant %+v", d.WorkingSet.Files, want)
	}
	md := Render(d, 0, ApproxTokens)
	for _, line := range []string{
		"- app/pricing/: shipping.py (edited; lines 120-179), giftcard.py (lines 40-95)\n",
		"- app/models/: order.py\n",
	} {
		if !strings.Contains(md, line) {
			t.Errorf("Markdown lacks %q:\n%s", line, md)
		}
	}
}

// TestWorkingSetListWorkedThrough: the agent works through a list, a
// search result or one of its own, one file at a time; the rest of it is
// what comes next.
func TestWorkingSetListWorkedThrough(t *testing.T) {
	t.Parallel()
	grep := "Found 5 files\n/srv/till/app/api/carts.py\n/srv/till/app/api/orders.py\n/srv/till/app/api/refunds.py\n" +
		"/srv/till/app/api/returns.py\n/srv/till/app/api/vouchers.py"
	t.Run("search result", func(t *testing.T) {
		t.Parallel()
		msgs := conversation{}.
			user("Replace every use of the deprecated currency_of() helper.").
			call("Grep", "1", map[string]any{"pattern": "currency_of\\(", "output_mode": "files_with_matches"}).result("1", grep, false).
			call("Edit", "2", edit("/srv/till/app/api/carts.py")).result("2", "ok", false).
			call("Edit", "3", edit("/srv/till/app/api/orders.py")).result("3", "ok", false)
		d := Extract(msgs, ExtractOptions{Project: "/srv/till"})
		want := []NextFiles{{Why: "next, rest of the search result (2 of 5 done)", Paths: []string{
			"/srv/till/app/api/refunds.py", "/srv/till/app/api/returns.py", "/srv/till/app/api/vouchers.py"}}}
		if !reflect.DeepEqual(d.WorkingSet.Next, want) {
			t.Errorf("Next\n got %+v\nwant %+v", d.WorkingSet.Next, want)
		}
		if md := Render(d, 0, ApproxTokens); !strings.Contains(md,
			"- next, rest of the search result (2 of 5 done): app/api/{refunds.py, returns.py, vouchers.py}\n") {
			t.Errorf("Markdown:\n%s", md)
		}
	})
	t.Run("one file of a search is not a list being worked through", func(t *testing.T) {
		t.Parallel()
		msgs := conversation{}.
			call("Grep", "1", map[string]any{"pattern": "currency_of"}).result("1", grep, false).
			call("Read", "2", read("/srv/till/app/api/carts.py", 0, 0)).result("2", "x", false).
			call("Edit", "3", edit("/srv/till/app/api/carts.py")).result("3", "ok", false)
		if d := Extract(msgs, ExtractOptions{Project: "/srv/till"}); len(d.WorkingSet.Next) != 0 {
			t.Errorf("Next = %+v, want none", d.WorkingSet.Next)
		}
	})
	t.Run("the agent's own list", func(t *testing.T) {
		t.Parallel()
		msgs := conversation{}.
			say("Three serializers still emit the old field:\n\n1. `app/serializers/cart.py`\n2. `app/serializers/order.py`\n3. `app/serializers/refund.py`\n\nStarting with the cart.").
			call("Edit", "1", edit("/srv/till/app/serializers/cart.py")).result("1", "ok", false)
		d := Extract(msgs, ExtractOptions{Project: "/srv/till"})
		want := []NextFiles{{Why: "next, rest of your list (1 of 3 done)", Paths: []string{
			"/srv/till/app/serializers/order.py", "/srv/till/app/serializers/refund.py"}}}
		if !reflect.DeepEqual(d.WorkingSet.Next, want) {
			t.Errorf("Next\n got %+v\nwant %+v", d.WorkingSet.Next, want)
		}
	})
}

// TestWorkingSetNamedNext: the files the item in progress, the next item
// and an approved plan name, not yet touched, are next.
func TestWorkingSetNamedNext(t *testing.T) {
	t.Parallel()
	plan := "# Plan: split the importer\n\n1. Move parsing into `importer/parse.go`\n2. Keep `importer/run.go` as the entry point\n3. Update `docs/importing.md`"
	msgs := conversation{}.
		call("ExitPlanMode", "1", map[string]any{"plan": plan}).result("1", "User has approved your plan.", false).
		call("Write", "2", map[string]any{"file_path": "/w/imp/importer/parse.go", "content": "package importer"}).result("2", "File created successfully", false).
		call("TaskCreate", "3", map[string]any{"subject": "Add the retry flag", "description": "Touches `cmd/imp/flags.go` and `importer/retry.go`."}).
		result("3", "Task #4 created successfully: Add the retry flag", false)
	d := Extract(msgs, ExtractOptions{Project: "/w/imp"})
	want := []NextFiles{
		{Why: "next, from the approved plan", Paths: []string{"/w/imp/importer/run.go", "/w/imp/docs/importing.md"}},
		{Why: "next, for #4", Paths: []string{"/w/imp/cmd/imp/flags.go", "/w/imp/importer/retry.go"}},
	}
	if !reflect.DeepEqual(d.WorkingSet.Next, want) {
		t.Errorf("Next\n got %+v\nwant %+v", d.WorkingSet.Next, want)
	}
}

// TestWorkingSetCommands: the commands of the agent's loop, as it runs
// them, up to what changes from run to run; looking around, moving files,
// git and the filters after a pipe are not the loop.
func TestWorkingSetCommands(t *testing.T) {
	t.Parallel()
	var c conversation
	run := func(id, cmd string) { c = c.call("Bash", id, bash(cmd)).result(id, "ok", false) }
	run("1", "cargo build --release 2>&1 | tail -20")
	run("2", "tk claim WEB-12")
	run("3", "cargo build --release")
	run("4", "RUST_LOG=debug cargo test --workspace -- --nocapture")
	run("5", "git add -A && git commit -m 'wip'")
	run("6", "ls -la target/release && cat Cargo.toml")
	run("7", "tk done WEB-12 --note 'shipped'")
	run("8", "cargo test --workspace parser::")
	run("9", "curl -s localhost:8080/health | jq .")
	run("10", "tk claim WEB-13")
	run("11", "timeout 60 cargo clippy --all-targets -- -D warnings")
	d := Extract(c, ExtractOptions{Project: "/w/web"})
	// The most run first, then the latest.
	want := []string{"tk claim", "cargo test --workspace", "cargo build --release",
		"cargo clippy --all-targets -- -D warnings", "tk done"}
	if !reflect.DeepEqual(d.WorkingSet.Commands, want) {
		t.Errorf("Commands\n got %q\nwant %q", d.WorkingSet.Commands, want)
	}
}

// TestWorkingSetRender: the section's lines give way least recent folder
// first, the commands last; the Markdown reads back.
func TestWorkingSetRender(t *testing.T) {
	t.Parallel()
	d := Doc{Project: "/w/p", Task: "t", WorkingSet: WorkingSet{
		Files: []WorkFile{
			{Path: "/w/p/src/a.ts", Edited: true}, {Path: "/w/p/src/b.ts", Lines: "lines 1-40"},
			{Path: "/w/p/README.md"}, {Path: "/w/p/test/a.test.ts", Edited: true},
			{Path: "/etc/hosts"},
		},
		Next:     []NextFiles{{Why: "next, for web-3", Paths: []string{"/w/p/src/c.ts", "/w/p/src/d.ts", "/w/p/docs/x.md"}}},
		Commands: []string{"pnpm test", "pnpm lint --fix", "echo `x`"},
	}}
	md := Render(d, 1<<30, ApproxTokens)
	want := "## Working set\n" +
		"- src/: a.ts (edited), b.ts (lines 1-40)\n" +
		"- README.md\n" +
		"- test/: a.test.ts (edited)\n" +
		"- /etc/: hosts\n" +
		"- next, for web-3: src/{c.ts, d.ts}, docs/x.md\n" +
		"- commands: `pnpm test`, `pnpm lint --fix`, `` echo `x` ``\n"
	if !strings.Contains(md, want) {
		t.Errorf("Markdown:\n%s\nwant the section:\n%s", md, want)
	}
	back, err := Parse(md)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.WorkingSet, d.WorkingSet) {
		t.Errorf("read back\n got %+v\nwant %+v", back.WorkingSet, d.WorkingSet)
	}
	var b strings.Builder
	writeWorking(&b, d, 3, 0)
	if got, want := b.String(), "- src/: a.ts (edited), b.ts (lines 1-40)\n"+
		"- next, for web-3: src/{c.ts, d.ts}, docs/x.md\n- commands: `pnpm test`, `pnpm lint --fix`, `` echo `x` ``\n- … +3 more\n"; got != want {
		t.Errorf("three lines kept:\n%s\nwant\n%s", got, want)
	}
}

// TestUsedAfter: what the agent used after a cut, read like the working
// set, and whether a text carries it.
func TestUsedAfter(t *testing.T) {
	t.Parallel()
	before := []Task{{Subject: "Wire the CSV export into the toolbar", Status: TaskPending}, {Subject: "Write the docs", Status: TaskPending}}
	msgs := conversation{}.
		call("Read", "1", read("/w/tide/src/export/csv.ts", 0, 0)).result("1", "export function toCsv", false).
		call("Bash", "2", bash("npx vitest run src/export/csv.test.ts -t 'semicolons'")).result("2", "ok", false).
		call("TodoWrite", "3", map[string]any{"todos": []map[string]any{
			{"content": "Wire the CSV export into the toolbar", "status": "in_progress"},
			{"content": "Write the docs", "status": "pending"}}}).result("3", "ok", false).
		call("Bash", "4", bash("git status")).result("4", "clean", false).
		call("Edit", "5", edit("/w/tide/src/components/Toolbar.tsx")).result("5", "ok", false)
	items := UsedAfter(msgs, UsedOptions{Project: "/w/tide", Calls: 4, Before: before})
	var got []string
	for _, it := range items {
		got = append(got, it.Kind+":"+it.Text)
	}
	want := []string{"file:src/export/csv.ts", "command:vitest run", "test:csv.test.ts", "test:semicolons",
		"task:Wire the CSV export into the toolbar"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("UsedAfter (4 calls)\n got %q\nwant %q", got, want)
	}
	summary := "We were adding a CSV export (src/export/csv.ts) and wiring the export into the toolbar; run `vitest run` to check."
	carried := map[string]bool{}
	for _, it := range items {
		carried[it.Text] = it.CarriedBy(summary)
	}
	wantCarried := map[string]bool{"src/export/csv.ts": true, "vitest run": true, "csv.test.ts": false, "semicolons": false,
		"Wire the CSV export into the toolbar": true}
	if !reflect.DeepEqual(carried, wantCarried) {
		t.Errorf("CarriedBy\n got %v\nwant %v", carried, wantCarried)
	}
	if it := items[0]; it.ExistedIn("opened csv.ts.orig") || !it.ExistedIn("Read /w/tide/src/export/csv.ts") {
		t.Error("ExistedIn: a file exists before the cut by its path")
	}
}

// TestWorkingSetNamedByTheUser: the files the user's requests name (a
// design document, an attached file), but not those it says to keep away
// from.
func TestWorkingSetNamedByTheUser(t *testing.T) {
	t.Parallel()
	msgs := conversation{}.
		user("Implement the importer as @docs/design/importer.md describes, with data/samples/june.csv as the test input. Don't touch legacy/import_v1.py, it is frozen.")
	d := Extract(msgs, ExtractOptions{Project: "/w/ledgerly"})
	want := []NextFiles{{Why: "named by the user", Paths: []string{"/w/ledgerly/docs/design/importer.md", "/w/ledgerly/data/samples/june.csv"}}}
	if !reflect.DeepEqual(d.WorkingSet.Next, want) {
		t.Errorf("Next\n got %+v\nwant %+v", d.WorkingSet.Next, want)
	}
}

// TestWorkingSetOtherAgentsTools: a file tool this package does not know
// by name (another agent's, an MCP server's) counts by the file it names
// and what its name says; a subagent's changes count, its reads do not.
func TestWorkingSetOtherAgentsTools(t *testing.T) {
	t.Parallel()
	msgs := conversation{}.
		call("read_file", "1", map[string]any{"absolute_path": "/w/k/src/queue.rs", "offset": 10, "limit": 20}).result("1", "fn push", false).
		call("mcp__fs__write_file", "2", map[string]any{"path": "/w/k/src/worker.rs", "content": "x"}).result("2", "ok", false).
		call("search_files", "3", map[string]any{"path": "/w/k/src/lib.rs", "pattern": "x"}).result("3", "", false).
		call("Read", "4", read("/w/k/README.md", 0, 0)).with(func(m *compact.Message) { m.Sidechain = true }).
		result("4", "readme", false).with(func(m *compact.Message) { m.Sidechain = true }).
		call("Edit", "5", edit("/w/k/src/pool.rs")).with(func(m *compact.Message) { m.Sidechain = true }).
		result("5", "ok", false).with(func(m *compact.Message) { m.Sidechain = true })
	d := Extract(msgs, ExtractOptions{Project: "/w/k"})
	var got []string
	for _, f := range d.WorkingSet.Files {
		got = append(got, strings.TrimPrefix(f.Path, "/w/k/")+" "+f.Lines)
	}
	sort.Strings(got)
	if want := []string{"src/pool.rs ", "src/queue.rs lines 10-29", "src/worker.rs "}; !reflect.DeepEqual(got, want) {
		t.Errorf("Files\n got %q\nwant %q", got, want)
	}
}

// TestWorkingSetWindowsPaths: a Windows project's files are shown under
// it, grouped by folder, and read back.
func TestWorkingSetWindowsPaths(t *testing.T) {
	t.Parallel()
	p := `C:\Users\ana\src\kiln`
	msgs := conversation{}.
		call("Read", "1", read(p+`\app\models\oven.py`, 0, 0)).result("1", "x", false).
		call("Edit", "2", edit(p+`\app\models\batch.py`)).result("2", "ok", false).
		call("Edit", "3", edit(p+`\setup.cfg`)).result("3", "ok", false).
		call("Read", "4", read(`C:\Users\ana\AppData\Local\Temp\scratch.txt`, 0, 0)).result("4", "x", false)
	d := Extract(msgs, ExtractOptions{Project: p})
	md := Render(d, 1<<30, ApproxTokens)
	if want := "## Working set\n- setup.cfg (edited)\n- app\\models\\: batch.py (edited), oven.py\n"; !strings.Contains(md, want) {
		t.Errorf("Markdown:\n%s\nwant\n%s", md, want)
	}
	back, err := Parse(md)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.WorkingSet, d.WorkingSet) {
		t.Errorf("read back\n got %+v\nwant %+v", back.WorkingSet, d.WorkingSet)
	}
}
