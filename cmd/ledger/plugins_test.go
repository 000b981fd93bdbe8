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
		!strings.Contains(receipts[1].Detail, "taken as resume") || !strings.HasPrefix(receipts[0].Detail, "opencode: ") {
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
