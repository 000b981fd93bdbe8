package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentledger/ledger/cmd/internal/engine"
)

const userSettings = `{
  "model": "opus",
  "permissions": {"allow": ["Bash(go test:*)"]},
  "hooks": {
    "PreCompact": [{"matcher": "auto", "hooks": [{"type": "command", "command": "~/bin/save.sh", "timeout": 5}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "say done"}, {"type": "command", "command": "/usr/local/bin/ledger hook"}]}]
  },
  "zeta": 1
}`

func readSettings(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("settings.json is not JSON: %v\n%s", err, b)
	}
	return m
}

func hookCommands(settings map[string]any, event string) []string {
	var out []string
	hooks, _ := settings["hooks"].(map[string]any)
	groups, _ := hooks[event].([]any)
	for _, g := range groups {
		hs, _ := g.(map[string]any)["hooks"].([]any)
		for _, h := range hs {
			out = append(out, h.(map[string]any)["command"].(string))
		}
	}
	return out
}

func TestHooksInstallUninstallRoundTrip(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	path := filepath.Join(home, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(path), 0o700)
	if err := os.WriteFile(path, []byte(userSettings), 0o644); err != nil {
		t.Fatal(err)
	}
	type changed struct {
		Settings string `json:"settings"`
		Changed  bool   `json:"changed"`
	}
	install := func(args ...string) changed {
		t.Helper()
		r := runCmd(t, home, "", append([]string{"hooks"}, append(args, "--json")...)...)
		if r.code != 0 {
			t.Fatalf("hooks %v: exit %d: %s", args, r.code, r.stderr)
		}
		var c changed
		decodeJSON(t, r.stdout, &c)
		return c
	}
	if c := install("install"); !c.Changed || c.Settings != path {
		t.Fatalf("first install = %+v, want changed at %s", c, path)
	}
	s := readSettings(t, path)
	for _, ev := range engine.HookEvents() {
		cmds := hookCommands(s, ev.Name)
		n := 0
		for _, c := range cmds {
			if strings.HasSuffix(strings.Fields(c)[0], "ledger") && strings.Fields(c)[1] == "hook" {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: %d ledger hooks, want exactly 1 (the old one replaced): %v", ev.Name, n, cmds)
		}
	}
	if got := hookCommands(s, "PreCompact"); got[0] != "~/bin/save.sh" {
		t.Errorf("the user's PreCompact hook is gone or moved: %v", got)
	}
	if got := hookCommands(s, "Stop"); got[0] != "say done" {
		t.Errorf("the user's Stop hook is gone: %v", got)
	}
	if s["model"] != "opus" || s["zeta"] != float64(1) {
		t.Errorf("other settings changed: %v", s)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode of an existing settings file changed to %v", fi.Mode().Perm())
	}
	if _, err := os.Stat(path + ".bak"); err != nil {
		t.Errorf("no backup: %v", err)
	}
	if c := install("install"); c.Changed {
		t.Error("second install changed the file")
	}
	if c := install("install", "--mode", "clear"); !c.Changed {
		t.Error("install --mode clear changed nothing")
	}
	if got := hookCommands(readSettings(t, path), "PreCompact"); len(got) != 2 || !strings.HasSuffix(got[1], "hook --mode clear") {
		t.Errorf("clear mode not installed: %v", got)
	}
	if c := install("uninstall"); !c.Changed {
		t.Error("uninstall changed nothing")
	}
	s = readSettings(t, path)
	var want map[string]any
	json.Unmarshal([]byte(userSettings), &want)
	// The user's file comes back whole, less the stale ledger hook it had.
	want["hooks"].(map[string]any)["Stop"] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "say done"}}}}
	gb, _ := json.Marshal(s)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		t.Errorf("after uninstall:\n%s\nwant\n%s", gb, wb)
	}
	if c := install("uninstall"); c.Changed {
		t.Error("second uninstall changed the file")
	}
}

func TestHooksInstallFreshAndBadSettings(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	path := filepath.Join(home, ".claude", "settings.json")
	r := runCmd(t, home, "", "hooks", "install")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("new settings file: %v, want mode 0600", err)
	}
	if got := hookCommands(readSettings(t, path), "SessionEnd"); len(got) != 1 {
		t.Errorf("SessionEnd hooks = %v", got)
	}
	// A settings file that is not JSON is reported and left alone.
	bad := []byte(`{"model": "opus",`)
	os.WriteFile(path, bad, 0o600)
	r = runCmd(t, home, "", "hooks", "install")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "ledger: ") {
		t.Errorf("bad settings: exit %d, %q; want exit 1 and one error line", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(path); string(b) != string(bad) {
		t.Errorf("bad settings file was rewritten: %q", b)
	}
	r = runCmd(t, home, "", "hooks", "install", "--scope", "galaxy")
	if r.code != 2 {
		t.Errorf("bad scope: exit %d, want 2", r.code)
	}
}
