package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/store/storetest"
)

// agentSettings are settings files as people have them, for each agent:
// every byte of them must survive an install and come back at uninstall.
var agentSettings = map[string][]string{
	"gemini": {
		"{\n  \"security\": {\n    \"auth\": {\n      \"selectedType\": \"gemini-api-key\"\n    }\n  },\n  \"model\": {\"compressionThreshold\": 0.6}\n}\n",
		"{\n    \"hooks\": {\n        \"AfterTool\": [\n            {\"matcher\": \"write_file\", \"hooks\": [{\"type\": \"command\", \"command\": \"./lint.sh\", \"timeout\": 3000}]}\n        ],\n        \"SessionStart\": [\n            {\"hooks\": [{\"type\": \"command\", \"command\": \"echo hi\", \"name\": \"greet\"}]}\n        ]\n    },\n    \"ui\": {\"theme\": \"Dracula\"}\n}",
	},
	"qwen": {
		"{\"model\": {\"name\": \"qwen3-coder-plus\"}, \"hooks\": {\"Stop\": [{\"matcher\": \"\", \"hooks\": [{\"type\": \"command\", \"command\": \"say \\u00e9t\\u00e9\"}]}]}}",
		"{\n\t\"general\": {\n\t\t\"vimMode\": true\n\t}\n}\n",
	},
	"copilot": {
		"{\n  \"model\": \"gpt-5\",\n  \"hooks\": {\n    \"sessionStart\": [\n      {\"type\": \"command\", \"bash\": \"./scripts/start.sh\", \"timeoutSec\": 10}\n    ]\n  }\n}\n",
		"{\"trustedFolders\": [\"/src\"]}",
	},
}

// TestAgentHooksInstallRoundTrip: `ledger hooks install --agent
// gemini|qwen|copilot` writes each agent's hooks in its own shape into its
// settings, keeps every other byte, changes nothing the second time, and
// uninstall gives the file back byte for byte; a file install made is
// removed again.
func TestAgentHooksInstallRoundTrip(t *testing.T) {
	t.Parallel()
	type want struct {
		file    string
		events  []string
		timeout string // the key of the timeout and its value at PreCompact
	}
	wants := map[string]want{
		"gemini":  {".gemini/settings.json", []string{"AfterAgent", "PreCompress", "SessionEnd", "SessionStart"}, `"timeout": 60000`},
		"qwen":    {".qwen/settings.json", []string{"PostCompact", "PreCompact", "SessionEnd", "SessionStart", "Stop"}, `"timeout": 60`},
		"copilot": {".copilot/settings.json", []string{"agentStop", "preCompact", "sessionEnd", "sessionStart"}, `"timeoutSec": 60`},
	}
	for agent, w := range wants {
		t.Run(agent, func(t *testing.T) {
			t.Parallel()
			for i, before := range append(agentSettings[agent], "") {
				home := t.TempDir()
				path := filepath.Join(home, filepath.FromSlash(w.file))
				if before != "" {
					os.MkdirAll(filepath.Dir(path), 0o700)
					os.WriteFile(path, []byte(before), 0o600)
				}
				r := runCmd(t, home, "", "hooks", "install", "--agent", agent, "--json")
				if r.code != 0 {
					t.Fatalf("file %d: install: exit %d: %s", i, r.code, r.stderr)
				}
				doc, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if !json.Valid(doc) {
					t.Fatalf("file %d: install left invalid JSON:\n%s", i, doc)
				}
				cmds := ledgerCommands(t, agent, doc)
				var events []string
				for ev, cs := range cmds {
					events = append(events, ev)
					want := "hook --agent " + agent
					if agent == "copilot" {
						want += " --event " + ev
					}
					if len(cs) != 1 || !strings.HasSuffix(cs[0], want) || !filepath.IsAbs(strings.Fields(cs[0])[0]) {
						t.Errorf("file %d: %s: commands %q, want one ending %q", i, ev, cs, want)
					}
				}
				sort.Strings(events)
				if strings.Join(events, ",") != strings.Join(w.events, ",") {
					t.Errorf("file %d: events %v, want %v", i, events, w.events)
				}
				if !strings.Contains(strings.ReplaceAll(string(doc), `":60`, `": 60`), w.timeout) {
					t.Errorf("file %d: no %s in\n%s", i, w.timeout, doc)
				}
				if agent == "gemini" && strings.Count(string(doc), `"name": "ledger"`) != 4 {
					t.Errorf("file %d: Gemini CLI's hooks are not named ledger:\n%s", i, doc)
				}
				if again := runCmd(t, home, "", "hooks", "install", "--agent", agent); again.code != 0 || !strings.Contains(again.stdout, "nothing changed") {
					t.Errorf("file %d: second install: %q", i, again.stdout)
				}
				if r := runCmd(t, home, "", "hooks", "uninstall", "--agent", agent); r.code != 0 {
					t.Fatalf("file %d: uninstall: exit %d: %s", i, r.code, r.stderr)
				}
				after, err := os.ReadFile(path)
				switch {
				case before == "" && !os.IsNotExist(err):
					t.Errorf("file %d: the settings file install made is still there: %q", i, after)
				case before != "" && string(after) != before:
					t.Errorf("file %d: uninstall changed the user's file:\n got %q\nwant %q", i, after, before)
				}
			}
		})
	}
	// A repository's Copilot hooks go in a file of ledger's own, which
	// uninstall removes.
	home, wd := t.TempDir(), t.TempDir()
	r := runCmdIn(t, home, wd, "", "hooks", "install", "--agent", "copilot", "--scope", "project")
	path := filepath.Join(wd, ".github", "hooks", "ledger.json")
	doc, err := os.ReadFile(path)
	if r.code != 0 || err != nil || !strings.HasPrefix(string(doc), "{\n  \"version\": 1,\n  \"hooks\": {") || !strings.Contains(r.stdout, "trusts") {
		t.Fatalf("copilot --scope project: exit %d, %q, file %q (%v)", r.code, r.stdout, doc, err)
	}
	if r := runCmdIn(t, home, wd, "", "hooks", "uninstall", "--agent", "copilot", "--scope", "project"); r.code != 0 {
		t.Fatalf("uninstall: %s", r.stderr)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("ledger.json left after uninstall: %v", err)
	}
	// What is refused: clear mode and the status line are Claude Code's,
	// a settings file that is not JSON (Gemini CLI's may hold comments)
	// is left as it was.
	for _, args := range [][]string{
		{"hooks", "install", "--agent", "gemini", "--mode", "clear"},
		{"hooks", "install", "--agent", "qwen", "--statusline"},
		{"hook", "--agent", "copilot", "--mode", "clear"},
	} {
		if r := runCmd(t, home, "", args...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, r.code, r.stderr)
		}
	}
	bad := filepath.Join(home, ".gemini", "settings.json")
	os.MkdirAll(filepath.Dir(bad), 0o700)
	commented := "{\n  // my theme\n  \"ui\": {\"theme\": \"GitHub\"}\n}\n"
	os.WriteFile(bad, []byte(commented), 0o600)
	if r := runCmd(t, home, "", "hooks", "install", "--agent", "gemini"); r.code != 1 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("commented settings: exit %d, %q", r.code, r.stderr)
	}
	if got, _ := os.ReadFile(bad); string(got) != commented {
		t.Errorf("commented settings changed: %q", got)
	}
}

// ledgerCommands lists ledger's hook commands in an agent's settings, by
// the agent's event.
func ledgerCommands(t *testing.T, agent string, doc []byte) map[string][]string {
	t.Helper()
	var v struct {
		Hooks map[string][]json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for ev, list := range v.Hooks {
		for _, raw := range list {
			var e struct {
				Bash  string `json:"bash"`
				Hooks []struct {
					Command string `json:"command"`
				} `json:"hooks"`
			}
			json.Unmarshal(raw, &e)
			var cmds []string
			if agent == "copilot" {
				cmds = []string{e.Bash}
			}
			for _, h := range e.Hooks {
				cmds = append(cmds, h.Command)
			}
			for _, c := range cmds {
				if strings.Contains(c, " hook --agent ") {
					out[ev] = append(out[ev], c)
				}
			}
		}
	}
	return out
}

// hookRun is one run of an agent's hook, in-process (runCmd) as the
// binary runs it; the agents running the binary are the end-to-end tests'
// (cmd/internal/agenttest/e2e).
type hookRun struct {
	t        *testing.T
	home, db string
	agent    string
}

func (h hookRun) run(stdin string, args ...string) result {
	h.t.Helper()
	r := runCmd(h.t, h.home, stdin, append([]string{"--db", h.db, "hook", "--agent", h.agent}, args...)...)
	if r.code != 0 || r.stderr != "" {
		h.t.Fatalf("hook %v: exit %d, stderr %q", args, r.code, r.stderr)
	}
	return r
}

// receipt is the newest hook receipt's detail.
func (h hookRun) receipt() string {
	h.t.Helper()
	var rs []struct{ Event, Outcome, Detail string }
	decodeJSON(h.t, runCmd(h.t, h.home, "", "--db", h.db, "hooks", "log", "--json", "--limit", "1").stdout, &rs)
	if len(rs) == 0 {
		return ""
	}
	return rs[0].Event + " " + rs[0].Outcome + ": " + rs[0].Detail
}

// lineOf is the 1-based number of the first line of lines holding s after
// line from (0: from the start).
func lineOf(t *testing.T, lines [][]byte, from int, s string) int {
	t.Helper()
	for i := from; i < len(lines); i++ {
		if bytes.Contains(lines[i], []byte(s)) {
			return i + 1
		}
	}
	t.Fatalf("no line holds %q", s)
	return 0
}

// TestGeminiHooksOnRealPayloads drives the binary with Gemini CLI's
// recorded hook payloads, the session file as it stood when each fired:
// PreCompress fires before every turn, and ledger writes a handoff only
// at the turn where Gemini CLI compressed, once; AfterAgent ingests; the
// transcript's compression then completes the hook's record; a resumed
// session gets its context in Gemini CLI's form.
func TestGeminiHooksOnRealPayloads(t *testing.T) {
	t.Parallel()
	f := agentFixtures[0]
	home := t.TempDir()
	h := hookRun{t, home, filepath.Join(home, "ledger.db"), "gemini"}
	lines := f.lines(t)
	at := func(n int) string { return f.place(t, home, n) }

	// Run 1: the first turn's PreCompress, at a context of 1,013 tokens.
	path := at(lineOf(t, lines, 0, `"type":"user"`))
	if r := h.run(f.payload(t, "000-SessionStart", path)); r.stdout != "" {
		t.Errorf("SessionStart startup injected %q", r.stdout)
	}
	h.run(f.payload(t, "004-PreCompress", path))
	if d := h.receipt(); !strings.Contains(d, "PreCompact nothing: gemini: ") || !strings.Contains(d, "no compression due") {
		t.Errorf("first turn's PreCompress: %q", d)
	}
	if rows := auditRows(t, home, h.db); len(rows) != 0 {
		t.Fatalf("a handoff at a turn Gemini CLI did not compress: %+v", rows)
	}
	// Run 2: the tool call came back at 900,000 tokens of 1,048,576; the
	// next turn's PreCompress is the compression's.
	big := lineOf(t, lines, lineOf(t, lines, 0, `"input":900000`), `"input":900000`)
	path = at(big)
	pre := f.payload(t, "022-PreCompress", path)
	h.run(pre)
	rows := auditRows(t, home, h.db)
	if len(rows) != 1 || rows[0].Source != "hook" || rows[0].HandoffID == nil || rows[0].Trigger != "auto" {
		t.Fatalf("after the compressing turn's PreCompress: %+v, want one hook record with a handoff", rows)
	}
	h.run(pre) // fired again at the same point: nothing more
	if rows := auditRows(t, home, h.db); len(rows) != 1 {
		t.Errorf("a second handoff at one point: %+v (%s)", rows, h.receipt())
	}
	// The compression reaches the log; AfterAgent ingests it: still one
	// record, completed with the snapshot.
	path = at(-1)
	h.run(f.payload(t, "024-AfterAgent", path))
	rows = auditRows(t, home, h.db)
	if len(rows) != 1 || rows[0].PreTokens == nil || *rows[0].PreTokens != 900000 || rows[0].Summary == 0 {
		t.Errorf("after AfterAgent: %+v, want the hook record completed (900,000 tokens before, the summary)", rows)
	}
	// Run 3: resumed; its context in Gemini CLI's form; its PreCompress
	// at 1,021 tokens writes nothing.
	r := h.run(f.payload(t, "028-SessionStart", path))
	var out engine.SessionStartOutput
	decodeJSON(t, r.stdout, &out)
	if out.HookSpecificOutput.HookEventName != "SessionStart" || !strings.Contains(out.HookSpecificOutput.AdditionalContext, f.session) ||
		!strings.Contains(out.HookSpecificOutput.AdditionalContext, "notes-2.txt") {
		t.Errorf("resumed SessionStart: %q", r.stdout)
	}
	h.run(f.payload(t, "032-PreCompress", path))
	h.run(f.payload(t, "036-SessionEnd", path))
	if rows := auditRows(t, home, h.db); len(rows) != 1 {
		t.Errorf("%d compaction records after run 3, want 1", len(rows))
	}
}

// TestQwenHooksOnRealPayloads: Qwen Code's PreCompact writes the handoff
// and its PostCompact completes the record from the log's
// chat_compression, for an auto and a manual compression; SessionStart
// after the compaction injects the context.
func TestQwenHooksOnRealPayloads(t *testing.T) {
	t.Parallel()
	f := agentFixtures[1]
	home := t.TempDir()
	h := hookRun{t, home, filepath.Join(home, "ledger.db"), "qwen"}
	lines := f.lines(t)
	first := lineOf(t, lines, 0, `"subtype":"chat_compression"`)
	second := lineOf(t, lines, first, `"subtype":"chat_compression"`)
	for i, c := range []struct {
		line           int
		pre, post, eve string
		trigger        string
	}{{first, "018-PreCompact", "020-PostCompact", "022-SessionStart", "auto"}, {second, "028-PreCompact", "030-PostCompact", "032-SessionStart", "manual"}} {
		path := f.place(t, home, c.line-1)
		h.run(f.payload(t, c.pre, path))
		path = f.place(t, home, c.line)
		h.run(f.payload(t, c.post, path))
		rows := auditRows(t, home, h.db)
		if len(rows) != i+1 || rows[i].Source != "hook" || rows[i].HandoffID == nil || rows[i].Trigger != c.trigger ||
			rows[i].PreTokens == nil || rows[i].Summary == 0 {
			t.Fatalf("compaction %d: %+v, want a hook record with its handoff, completed by the log", i, rows)
		}
		r := h.run(f.payload(t, c.eve, path))
		var out engine.SessionStartOutput
		decodeJSON(t, r.stdout, &out)
		if !strings.Contains(out.HookSpecificOutput.AdditionalContext, f.session) {
			t.Errorf("SessionStart after compaction %d: %q", i, r.stdout)
		}
	}
	path := f.place(t, home, -1)
	h.run(f.payload(t, "038-Stop", path))
	// Three prompts, two tool calls and their results, three answers.
	if n := sessionMessages(t, home, h.db)[f.session]; n != 10 {
		t.Errorf("after Stop the session has %v messages, want 10", n)
	}
}

// TestCopilotHooksOnRealPayloads: Copilot CLI's camelCase events (named by
// --event) and their PascalCase aliases are both understood; one
// compaction gets one handoff whichever fires; sessionStart and
// sessionEnd, which carry no transcript path, use the file ledger read the
// session from; the native sessionStart's context is
// {"additionalContext"}.
func TestCopilotHooksOnRealPayloads(t *testing.T) {
	t.Parallel()
	f := agentFixtures[2]
	home := t.TempDir()
	h := hookRun{t, home, filepath.Join(home, "ledger.db"), "copilot"}
	lines := f.lines(t)
	if r := h.run(f.payload(t, "000-sessionStart", ""), "--event", "sessionStart"); r.stdout != "" {
		t.Errorf("a new session got context: %q", r.stdout)
	}
	path := f.place(t, home, lineOf(t, lines, 0, `"type":"session.compaction_complete"`)-1)
	h.run(f.payload(t, "028-preCompact", path), "--event", "preCompact")
	h.run(f.payload(t, "030-PreCompact", path)) // the alias, same compaction
	rows := auditRows(t, home, h.db)
	if len(rows) != 1 || rows[0].HandoffID == nil || rows[0].Trigger != "auto" {
		t.Fatalf("preCompact and its alias: %+v, want one hook record with a handoff", rows)
	}
	path = f.place(t, home, -1)
	h.run(f.payload(t, "032-agentStop", path), "--event", "agentStop")
	rows = auditRows(t, home, h.db)
	if len(rows) != 2 || rows[0].Summary == 0 || rows[0].PreTokens == nil {
		t.Errorf("after agentStop: %+v, want the hook record completed and the manual compaction", rows)
	}
	// Resumed: no transcript path in the input; the context comes as
	// Copilot CLI takes it.
	r := h.run(f.payload(t, "044-sessionStart", ""), "--event", "sessionStart")
	var out engine.CopilotSessionStartOutput
	decodeJSON(t, r.stdout, &out)
	if !strings.Contains(out.AdditionalContext, f.session) || strings.Contains(r.stdout, "hookSpecificOutput") {
		t.Errorf("sessionStart resume: %q", r.stdout)
	}
	r = h.run(f.payload(t, "046-SessionStart", ""))
	var alias engine.SessionStartOutput
	decodeJSON(t, r.stdout, &alias)
	if !strings.Contains(alias.HookSpecificOutput.AdditionalContext, f.session) {
		t.Errorf("SessionStart alias resume: %q", r.stdout)
	}
	h.run(f.payload(t, "054-sessionEnd", ""), "--event", "sessionEnd")
	if d := h.receipt(); !strings.HasPrefix(d, "SessionEnd ") || strings.Contains(d, "failed") {
		t.Errorf("sessionEnd: %q", d)
	}
	// An input without an event name and no --event: a warning, exit 0.
	r = runCmd(t, home, f.payload(t, "054-sessionEnd", ""), "--db", h.db, "hook", "--agent", "copilot")
	if r.code != 0 || !strings.Contains(r.stderr, "--event") {
		t.Errorf("no event: exit %d, %q", r.code, r.stderr)
	}
}

// TestSessionStartOffersAcrossNewAgents: at a brand-new session, the
// project's latest work in another agent is offered, in the new agent's
// injection form.
func TestSessionStartOffersAcrossNewAgents(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	g := agentFixtures[0]
	g.place(t, home, -1)
	if r := runCmd(t, home, "", "--db", db, "ingest"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	in := `{"sessionId":"11111111-0000-4000-8000-000000000001","timestamp":1795678284782,"cwd":"` + g.cwd + `","source":"new","initialPrompt":"go on"}`
	r := runCmd(t, home, in, "--db", db, "hook", "--agent", "copilot", "--event", "sessionStart")
	var out engine.CopilotSessionStartOutput
	decodeJSON(t, r.stdout, &out)
	if r.code != 0 || !strings.Contains(out.AdditionalContext, "latest work is a Gemini CLI session (43a4cd49") ||
		!strings.Contains(out.AdditionalContext, "ledger resume --for copilot 43a4cd49") {
		t.Errorf("copilot sessionStart in a Gemini project: %q (%s)", r.stdout, r.stderr)
	}
	in = `{"session_id":"22222222-0000-4000-8000-000000000002","transcript_path":"","cwd":"` + g.cwd + `","hook_event_name":"SessionStart","source":"startup"}`
	r = runCmd(t, home, in, "--db", db, "hook", "--agent", "qwen")
	var q engine.SessionStartOutput
	decodeJSON(t, r.stdout, &q)
	if !strings.Contains(q.HookSpecificOutput.AdditionalContext, "ledger resume --for qwen 43a4cd49") {
		t.Errorf("qwen SessionStart in a Gemini project: %q", r.stdout)
	}
}

// TestDoctorSeesOtherAgents: doctor reports the hooks and sessions folder
// of an agent the user has (its settings file or folder exists), and says
// nothing of the others.
func TestDoctorSeesOtherAgents(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	if r := runCmd(t, home, "", "hooks", "install", "--agent", "gemini"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	agentFixtures[0].place(t, home, -1)
	r := runCmd(t, home, "", "--db", db, "doctor", "--json")
	var doc struct {
		Hooks []struct {
			Agent, File string
			Events      []string
		}
		Transcripts []struct {
			Agent, Path string
			Found       bool
			Files       int
			Behind      int `json:"files_behind"`
		} `json:"transcripts"`
	}
	decodeJSON(t, r.stdout, &doc)
	var hooks, folders []string
	for _, h := range doc.Hooks {
		hooks = append(hooks, h.Agent+":"+strings.Join(h.Events, ","))
	}
	for _, f := range doc.Transcripts {
		folders = append(folders, f.Agent)
		if f.Agent == "gemini" && (f.Files != 1 || f.Behind != 1 || f.Path != filepath.Join(home, ".gemini", "tmp")) {
			t.Errorf("gemini transcripts: %+v", f)
		}
	}
	if got := strings.Join(hooks, " "); got != "claude: codex: gemini:AfterAgent,PreCompress,SessionEnd,SessionStart" {
		t.Errorf("hooks: %s", got)
	}
	if got := strings.Join(folders, ","); got != "claude,codex,gemini" {
		t.Errorf("transcripts of %s, want claude,codex,gemini", got)
	}
}

// TestCopilotSessionEndOfAnUnknownSession: a sessionEnd names no
// transcript; for a session no earlier event showed ledger, there is
// nothing to read, and that is no failure.
func TestCopilotSessionEndOfAnUnknownSession(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	h := hookRun{t, home, filepath.Join(home, "ledger.db"), "copilot"}
	h.run(`{"reason":"complete","sessionId":"33333333-0000-4000-8000-000000000003","timestamp":1795678287642,"cwd":"/tmp/x"}`, "--event", "sessionEnd")
	if d := h.receipt(); d != "SessionEnd nothing: copilot: no transcript known for this session yet (Copilot CLI's sessionEnd names none)" {
		t.Errorf("receipt %q", d)
	}
}

// TestQwenStopWithAHugeAnswer: Qwen Code's Stop names the turn's last
// answer (last_assistant_message), which ledger looks for in what it
// stored; an answer of 4 MB (a model that printed a whole file) costs the
// hook no more than a short one: only its start is redacted and looked
// for. Before, the whole answer was redacted first, which spent the 1 s
// budget: every such Stop was abandoned as a timeout, its resume state
// not brought up to date.
func TestQwenStopWithAHugeAnswer(t *testing.T) {
	t.Parallel()
	f := agentFixtures[1]
	home := t.TempDir()
	db := filepath.Join(home, "ledger.db")
	path := f.place(t, home, -1)
	var in map[string]any
	decodeJSON(t, f.payload(t, "038-Stop", path), &in)
	in["last_assistant_message"] = in["last_assistant_message"].(string) + strings.Repeat(" password=hunter2hunter2 AKIAIOSFODNN7EXAMPLE", 90_000)
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	r := execLedger(t, home, "", string(b), nil, "--db", db, "hook", "--agent", "qwen")
	if r.code != 0 {
		t.Fatalf("Stop: exit %d: %s", r.code, r.stderr)
	}
	var rs []struct{ Event, Outcome, Detail string }
	decodeJSON(t, execLedger(t, home, "", "", nil, "--db", db, "hooks", "log", "--json").stdout, &rs)
	// The answer's start is not the stored answer's (its tail was added
	// here): the hook waits for it until its read time, and says so.
	if len(rs) != 1 || rs[0].Outcome == "timeout" || rs[0].Outcome == "failed" {
		t.Errorf("receipts %+v, want one Stop that did its work within the budget", rs)
	}
}
