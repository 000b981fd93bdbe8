package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// opencodeSession is the session of testdata/agents/opencode-1.18.33.
const opencodeSession = "ses_de942ed70ffeMnYg4uqeokH7Or"

// pluginDriver loads ledger's OpenCode plugin as OpenCode does (an ES
// module whose exports are plugin functions, called with the project) and
// calls its hooks as OpenCode 1.18 calls them: the system transform of a
// request, then the session's idle event. It prints the system prompt
// parts the plugin added, and how long each hook took.
const pluginDriver = `
const mod = await import(process.argv[2])
const hooks = await mod.LedgerPlugin({ directory: process.argv[3], worktree: process.argv[3] })
const id = process.argv[4]
const t0 = Date.now()
const output = { system: ["You are opencode."] }
await hooks["experimental.chat.system.transform"]({ sessionID: id, model: {} }, output)
const again = { system: ["You are opencode."] }
await hooks["experimental.chat.system.transform"]({ sessionID: id, model: {} }, again)
const t1 = Date.now()
await hooks.event({ event: { type: "session.idle", properties: { sessionID: id } } })
await hooks["experimental.chat.system.transform"]({ model: {} }, { system: [] })
console.log(JSON.stringify({ system: output.system, again: again.system, startMs: t1 - t0, idleMs: Date.now() - t1 }))
`

// runPlugin installs ledger's OpenCode plugin with the real binary in home,
// copies it as an ES module (edited by edit, when set) and runs the driver
// on it; it returns what the driver printed.
func runPlugin(t *testing.T, home, project string, edit func(string) string) (out struct {
	System, Again   []string
	StartMs, IdleMs int
}) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	r := execLedger(t, home, "", "", nil, "hooks", "install", "--agent", "opencode")
	if r.code != 0 {
		t.Fatalf("install: %s", r.stderr)
	}
	src, err := os.ReadFile(filepath.Join(home, ".config", "opencode", "plugin", "ledger.js"))
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		src = []byte(edit(string(src)))
	}
	dir := t.TempDir()
	mod := filepath.Join(dir, "ledger.mjs")
	driver := filepath.Join(dir, "driver.mjs")
	if err := os.WriteFile(mod, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(driver, []byte(pluginDriver), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, driver, mod, project, opencodeSession)
	cmd.Env = []string{"HOME=" + home, "PATH=" + filepath.Dir(node), "XDG_STATE_HOME=" + filepath.Join(home, ".state")}
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("driver: %v\n%s", err, b)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("driver printed %q: %v", b, err)
	}
	return out
}

// TestOpenCodePlugin runs ledger's OpenCode plugin file under node as
// OpenCode runs it, in a home where OpenCode has kept a session: the first
// request's system transform asks ledger (the real binary, by its absolute
// path) for the start context and adds the resume context of the session
// (which has replies: a resumed session) to the system prompt; a second
// request gets the same context without asking again; the idle event
// ingests the session, and ledger's hook log has both events.
func TestOpenCodePlugin(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	copyTo(t, pluginFixture("opencode-1.18.33", "opencode.db"), filepath.Join(home, ".local", "share", "opencode", "opencode.db"))
	out := runPlugin(t, home, "/work/agents-cache/proj-oc", nil)
	if len(out.System) != 2 || !strings.Contains(out.System[1], "<ledger-record") || !strings.Contains(out.System[1], "# Resume") ||
		!strings.Contains(out.System[1], opencodeSession) {
		t.Fatalf("system prompt %q", out.System)
	}
	if len(out.Again) != 2 || out.Again[1] != out.System[1] {
		t.Errorf("the second request's system prompt %q", out.Again)
	}
	r := execLedger(t, home, "", "", nil, "hooks", "log", "--json")
	var receipts []struct{ Event, Session, Outcome, Detail string }
	decodeJSON(t, r.stdout, &receipts)
	if len(receipts) != 2 || receipts[0].Event != "Stop" || receipts[1].Event != "SessionStart" ||
		!strings.Contains(receipts[1].Detail, "OpenCode session start, taken as resume") || !strings.HasPrefix(receipts[0].Detail, "opencode: ") {
		t.Errorf("receipts %+v", receipts)
	}
	r = execLedger(t, home, "", "", nil, "sessions", "--json")
	var sessions []struct {
		ID, Source  string
		Compactions int
	}
	decodeJSON(t, r.stdout, &sessions)
	if len(sessions) != 1 || sessions[0].ID != opencodeSession || sessions[0].Source != "opencode" || sessions[0].Compactions != 1 {
		t.Errorf("sessions %+v", sessions)
	}
}

// TestOpenCodePluginFailsOpen: with the ledger binary gone and no ledger
// on PATH, or with a ledger that hangs (killed at the event's timeout,
// here made short), the plugin adds nothing and throws nothing.
func TestOpenCodePluginFailsOpen(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(string) string
	}{
		{"missing", func(s string) string {
			return regexp.MustCompile(`(?m)^const LEDGER = .*$`).ReplaceAllString(s, `const LEDGER = "/nonexistent/ledger"`)
		}},
		{"hanging", func(s string) string {
			hang := filepath.Join(t.TempDir(), "ledger")
			if err := os.WriteFile(hang, []byte("#!/bin/sh\nexec sleep 30\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			s = regexp.MustCompile(`(?m)^const LEDGER = .*$`).ReplaceAllString(s, `const LEDGER = "`+hang+`"`)
			return regexp.MustCompile(`(?m)^const TIMEOUT = .*$`).ReplaceAllString(s, `const TIMEOUT = {"SessionStart":300,"Stop":300}`)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := runPlugin(t, t.TempDir(), "/p", tc.edit)
			if len(out.System) != 1 || len(out.Again) != 1 {
				t.Errorf("system prompt %q %q", out.System, out.Again)
			}
			if out.StartMs > 5000 || out.IdleMs > 5000 {
				t.Errorf("hooks took %d and %d ms", out.StartMs, out.IdleMs)
			}
		})
	}
}

// piDriver loads ledger's Pi extension as Pi 0.73 does (the module's
// default export, called with the extension API, whose on() registers a
// handler per event) and emits Pi's events in the order Pi emits them in a
// resumed session that compacts: session_start, before_agent_start (whose
// result message Pi adds before the prompt), again for a second prompt,
// session_before_compact, session_compact, before_agent_start, agent_end,
// session_shutdown. The context's sessionManager reads the session file as
// Pi's does. It prints each before_agent_start result and how long the
// events took.
const piDriver = `
import { readFileSync } from "node:fs"
const mod = await import(process.argv[2])
const [file, id, cwd] = process.argv.slice(3)
const handlers = new Map()
mod.default({ on: (name, fn) => handlers.set(name, [...(handlers.get(name) ?? []), fn]) })
const ctx = {
  cwd,
  sessionManager: {
    getSessionId: () => id,
    getSessionFile: () => file,
    getEntries: () => readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.type !== "session"),
  },
}
const emit = async (type, fields) => {
  let result
  for (const fn of handlers.get(type) ?? []) result = (await fn({ type, ...fields }, ctx)) ?? result
  return result ?? null
}
const t0 = Date.now()
await emit("session_start", { reason: "startup" })
const first = await emit("before_agent_start", { prompt: "Carry on", systemPrompt: "You are pi." })
const second = await emit("before_agent_start", { prompt: "And then", systemPrompt: "You are pi." })
await emit("session_before_compact", { preparation: {}, branchEntries: [], signal: new AbortController().signal })
await emit("session_compact", { compactionEntry: {}, fromExtension: false })
const afterCompact = await emit("before_agent_start", { prompt: "Go on", systemPrompt: "You are pi." })
await emit("agent_end", { messages: [] })
await emit("session_shutdown", { reason: "quit" })
console.log(JSON.stringify({ first, second, afterCompact, ms: Date.now() - t0, events: [...handlers.keys()] }))
`

// piResult is what piDriver prints.
type piResult struct {
	First, Second, AfterCompact *struct {
		Message struct {
			CustomType, Content string
			Display             bool
		}
	}
	Ms     int
	Events []string
}

// runPiExtension installs ledger's Pi extension with the real binary in
// home, copies it as an ES module (edited by edit, when set) and runs
// piDriver on it for the session file.
func runPiExtension(t *testing.T, home, file, session, cwd string, edit func(string) string) piResult {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	if r := execLedger(t, home, "", "", nil, "hooks", "install", "--agent", "pi"); r.code != 0 {
		t.Fatalf("install: %s", r.stderr)
	}
	src, err := os.ReadFile(filepath.Join(home, ".pi", "agent", "extensions", "ledger.js"))
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		src = []byte(edit(string(src)))
	}
	dir := t.TempDir()
	mod, driver := filepath.Join(dir, "ledger.mjs"), filepath.Join(dir, "driver.mjs")
	if err := os.WriteFile(mod, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(driver, []byte(piDriver), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, driver, mod, file, session, cwd)
	cmd.Env = []string{"HOME=" + home, "PATH=" + filepath.Dir(node), "XDG_STATE_HOME=" + filepath.Join(home, ".state")}
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("driver: %v\n%s", err, b)
	}
	var out piResult
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("driver printed %q: %v", b, err)
	}
	return out
}

// TestPiExtension runs ledger's Pi extension under node as Pi runs it, in
// a home where Pi has kept a session: the first prompt of the resumed
// session gets the session's resume context as a hidden ledger message, a
// second prompt nothing; the compaction writes a handoff and the first
// prompt after it gets the context again; agent_end and the shutdown read
// the file; ledger's hook log has every event, taken by the real binary.
func TestPiExtension(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	const session = "01a216c2-8921-7397-bbc1-38fa2acd5419"
	file := copyTo(t, pluginFixture("pi-0.73.1", piFixtureName), filepath.Join(home, ".pi", "agent", "sessions", "--work-agents-cache-proj-pi--", piFixtureName))
	out := runPiExtension(t, home, file, session, "/work/agents-cache/proj-pi", nil)
	for name, res := range map[string]*struct {
		Message struct {
			CustomType, Content string
			Display             bool
		}
	}{"first": out.First, "after the compaction": out.AfterCompact} {
		if res == nil || res.Message.CustomType != "ledger" || res.Message.Display ||
			!strings.Contains(res.Message.Content, "# Resume") || !strings.Contains(res.Message.Content, session) {
			t.Errorf("%s prompt's message %+v", name, res)
		}
	}
	if out.Second != nil {
		t.Errorf("a second prompt got %+v", out.Second)
	}
	r := execLedger(t, home, "", "", nil, "hooks", "log", "--json")
	var receipts []struct {
		Event, Outcome, Detail string
		Session                string `json:"session"`
	}
	decodeJSON(t, r.stdout, &receipts)
	var events []string
	for i := len(receipts) - 1; i >= 0; i-- {
		events = append(events, receipts[i].Event)
		if receipts[i].Session != session || receipts[i].Outcome == "failed" {
			t.Errorf("receipt %+v", receipts[i])
		}
	}
	if strings.Join(events, " ") != "SessionStart PreCompact PostCompact SessionStart Stop SessionEnd" {
		t.Errorf("hook log %v", events)
	}
	rows := auditRows(t, home, filepath.Join(home, ".local", "share", "ledger", "ledger.db"))
	if len(rows) != 2 || rows[1].Source != "hook" || rows[1].HandoffID == nil {
		t.Errorf("audit %+v", rows)
	}
}

// piTwiceDriver replays, with ledger's Pi extension loaded as piDriver
// loads it, what Pi 0.73.1 does when the compaction check at a prompt's
// end and the one before the next prompt race (AgentSession's
// _checkCompaction, reached from agent_end's queued handling and from
// prompt()): both prepare from the same branch and fire
// session_before_compact, the second once the first's compaction entry is
// in the file; the second entry is appended under the first; then
// session_compact for each, and the next prompt. The file, the session
// and the two entries' lines come in argv. It prints the message of the
// prompt after the compactions.
const piTwiceDriver = `
import { readFileSync, appendFileSync } from "node:fs"
const mod = await import(process.argv[2])
const [file, id, cwd, first, second] = process.argv.slice(3)
const handlers = new Map()
mod.default({ on: (name, fn) => handlers.set(name, [...(handlers.get(name) ?? []), fn]) })
const entries = () => readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.type !== "session")
const ctx = { cwd, sessionManager: { getSessionId: () => id, getSessionFile: () => file, getEntries: entries } }
const emit = async (type, fields) => {
  let result
  for (const fn of handlers.get(type) ?? []) result = (await fn({ type, ...fields }, ctx)) ?? result
  return result ?? null
}
await emit("session_start", { reason: "startup" })
const branch = entries()
const before = () => emit("session_before_compact", { preparation: {}, branchEntries: branch, signal: new AbortController().signal })
await before()
appendFileSync(file, first + "\n")
await before()
appendFileSync(file, second + "\n")
await emit("session_compact", { compactionEntry: JSON.parse(first), fromExtension: false })
await emit("session_compact", { compactionEntry: JSON.parse(second), fromExtension: false })
const afterCompact = await emit("before_agent_start", { prompt: "Carry on", systemPrompt: "You are pi." })
await emit("agent_end", { messages: [] })
await emit("session_shutdown", { reason: "quit" })
console.log(JSON.stringify({ afterCompact }))
`

// TestPiExtensionCompactedTwice: Pi 0.73.1 compacting twice at one point
// (a real session where it did: the file up to its first compaction, then
// its two compaction entries as Pi appended them, with the events Pi fires
// around them) is one compaction for ledger: one PreCompact, one handoff,
// one record, completed with Pi's summary; the next prompt's context
// names that handoff.
func TestPiExtensionCompactedTwice(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	home := t.TempDir()
	file, first, second := piCompactedTwice(t, home)
	if r := execLedger(t, home, "", "", nil, "hooks", "install", "--agent", "pi"); r.code != 0 {
		t.Fatalf("install: %s", r.stderr)
	}
	mod, driver := filepath.Join(t.TempDir(), "ledger.mjs"), filepath.Join(t.TempDir(), "driver.mjs")
	copyTo(t, filepath.Join(home, ".pi", "agent", "extensions", "ledger.js"), mod)
	if err := os.WriteFile(driver, []byte(piTwiceDriver), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, driver, mod, file, piTwiceSession, "/home/dev/src/tidepool", first, second)
	cmd.Env = []string{"HOME=" + home, "PATH=" + filepath.Dir(node), "XDG_STATE_HOME=" + filepath.Join(home, ".state")}
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("driver: %v\n%s", err, b)
	}
	var out struct {
		AfterCompact *struct{ Message struct{ Content string } }
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("driver printed %q: %v", b, err)
	}

	r := execLedger(t, home, "", "", nil, "hooks", "log", "--json")
	var receipts []struct{ Event, Outcome, Detail string }
	decodeJSON(t, r.stdout, &receipts)
	var pre []string
	for _, x := range receipts {
		if x.Outcome == "failed" {
			t.Errorf("receipt %+v", x)
		}
		if x.Event == "PreCompact" {
			pre = append(pre, x.Detail)
		}
	}
	if len(pre) != 1 || !strings.Contains(pre[0], "handoff 1 written") {
		t.Errorf("PreCompact receipts %q, want one, writing handoff 1", pre)
	}
	rows := auditRows(t, home, filepath.Join(home, ".local", "share", "ledger", "ledger.db"))
	if len(rows) != 1 || rows[0].Source != "hook" || rows[0].HandoffID == nil || *rows[0].HandoffID != 1 || rows[0].Summary == 0 {
		t.Errorf("audit %+v, want one compaction: the hook's, with handoff 1 and Pi's summary", rows)
	}
	if out.AfterCompact == nil || !strings.Contains(out.AfterCompact.Message.Content, "Handoff 1,") {
		t.Errorf("the prompt after the compaction got %+v, want the context with handoff 1", out.AfterCompact)
	}
}

// TestPiExtensionFailsOpen: with the ledger binary gone and no ledger on
// PATH, or with a ledger that hangs (killed at the event's timeout, here
// made short), the extension adds no message and throws nothing.
func TestPiExtensionFailsOpen(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(string) string
	}{
		{"missing", func(s string) string {
			return regexp.MustCompile(`(?m)^const LEDGER = .*$`).ReplaceAllString(s, `const LEDGER = "/nonexistent/ledger"`)
		}},
		{"hanging", func(s string) string {
			hang := filepath.Join(t.TempDir(), "ledger")
			if err := os.WriteFile(hang, []byte("#!/bin/sh\nexec sleep 30\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			s = regexp.MustCompile(`(?m)^const LEDGER = .*$`).ReplaceAllString(s, `const LEDGER = "`+hang+`"`)
			return regexp.MustCompile(`(?m)^const TIMEOUT = .*$`).ReplaceAllString(s,
				`const TIMEOUT = {"SessionStart":300,"PreCompact":300,"PostCompact":300,"Stop":300,"SessionEnd":300}`)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			file := copyTo(t, pluginFixture("pi-0.73.1", piFixtureName), filepath.Join(home, "s.jsonl"))
			out := runPiExtension(t, home, file, "01a216c2-8921-7397-bbc1-38fa2acd5419", "/p", tc.edit)
			if out.First != nil || out.Second != nil || out.AfterCompact != nil {
				t.Errorf("messages %+v %+v %+v", out.First, out.Second, out.AfterCompact)
			}
			// Six events, each killed at 300 ms at most when it hangs.
			if out.Ms > 15000 {
				t.Errorf("the events took %d ms", out.Ms)
			}
		})
	}
}
