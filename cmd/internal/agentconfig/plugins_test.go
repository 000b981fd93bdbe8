package agentconfig

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func TestPluginPath(t *testing.T) {
	t.Parallel()
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, tc := range []struct {
		agent, scope string
		getenv       func(string) string
		want         string
	}{
		{"opencode", "user", env(), "/h/.config/opencode/plugin/ledger.js"},
		{"kilo", "user", env(), "/h/.config/kilo/plugin/ledger.js"},
		{"pi", "user", env(), "/h/.pi/agent/extensions/ledger.js"},
		{"opencode", "user", env("XDG_CONFIG_HOME", "/x"), "/x/opencode/plugin/ledger.js"},
		{"opencode", "user", env("XDG_CONFIG_HOME", "relative"), "/h/.config/opencode/plugin/ledger.js"},
		{"pi", "user", env("PI_CODING_AGENT_DIR", "/p"), "/p/extensions/ledger.js"},
		{"opencode", "project", env(), "/w/.opencode/plugin/ledger.js"},
		{"kilo", "project", env(), "/w/.kilo/plugin/ledger.js"},
		{"pi", "project", env(), "/w/.pi/extensions/ledger.js"},
	} {
		got, err := PluginPath(tc.agent, tc.scope, "/h", "/w", tc.getenv)
		if err != nil || got != tc.want {
			t.Errorf("%s %s: %q %v, want %q", tc.agent, tc.scope, got, err, tc.want)
		}
	}
	if _, err := PluginPath("claude", "user", "/h", "/w", env()); err == nil {
		t.Error("claude got a plugin path")
	}
	if _, err := PluginPath("pi", "global", "/h", "/w", env()); err == nil {
		t.Error("scope global accepted")
	}
}

// tree lists every file and folder under root, with file contents.
func tree(t *testing.T, root string) string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			out = append(out, rel+"/")
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out = append(out, rel+": "+string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

func source(agent string, args ...string) func(string) ([]byte, error) {
	o := PluginOptions{Agent: agent, Name: "Agent", Exe: "/opt/ledger/bin/ledger", Args: args,
		Timeouts: map[string]int{"SessionStart": 10, "Stop": 15}}
	return func(created string) ([]byte, error) { return PluginSource(o, created) }
}

// TestPluginInstallUninstall: install writes the plugin file (and the
// folders it needs), a second install changes nothing, and uninstall
// leaves the home exactly as it was, in a home with no agent folder and
// in one where the user has plugins of their own.
func TestPluginInstallUninstall(t *testing.T) {
	t.Parallel()
	for _, agent := range []string{"opencode", "kilo", "pi"} {
		for _, own := range []bool{false, true} {
			home := t.TempDir()
			path, err := PluginPath(agent, "user", home, "", func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			if own {
				// The user's config folder with a plugin of their own.
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(filepath.Dir(path), "mine.js"), []byte("export const Mine = async () => ({})\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := tree(t, home)
			changed, err := InstallPlugin(path, source(agent))
			if err != nil || !changed {
				t.Fatalf("%s: install %v %v", agent, changed, err)
			}
			b, err := os.ReadFile(path)
			if err != nil || !IsLedgerPlugin(b) || !strings.Contains(string(b), `"/opt/ledger/bin/ledger"`) ||
				!strings.Contains(string(b), `["hook","--agent","`+agent+`"]`) {
				t.Fatalf("%s: plugin file %q %v", agent, b, err)
			}
			if created := createdOf(b); own && created != "" || !own && created != filepath.Dir(filepath.Dir(path)) && created != filepath.Join(home, ".config") && created != filepath.Join(home, ".pi") {
				t.Errorf("%s (own folder %v): created %q", agent, own, created)
			}
			if changed, err := InstallPlugin(path, source(agent)); err != nil || changed {
				t.Errorf("%s: second install %v %v", agent, changed, err)
			}
			if changed, err := InstallPlugin(path, source(agent, "--db", "/other/ledger.db")); err != nil || !changed {
				t.Errorf("%s: install with another --db %v %v", agent, changed, err)
			}
			if changed, err := UninstallPlugin(path); err != nil || !changed {
				t.Fatalf("%s: uninstall %v %v", agent, changed, err)
			}
			if after := tree(t, home); after != before {
				t.Errorf("%s (own folder %v): uninstall left\n%s\nwant\n%s", agent, own, after, before)
			}
			if changed, err := UninstallPlugin(path); err != nil || changed {
				t.Errorf("%s: second uninstall %v %v", agent, changed, err)
			}
		}
	}
}

// TestPluginNotOurs: a file at the plugin's path that ledger did not write
// is the user's: install and uninstall leave it as it is, and say so.
func TestPluginNotOurs(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "plugin", "ledger.js")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	mine := []byte("// my own ledger plugin\nexport const L = async () => ({})\n")
	if err := os.WriteFile(path, mine, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := InstallPlugin(path, source("opencode")); !errors.Is(err, ErrNotLedgerPlugin) {
		t.Errorf("install over the user's file: %v", err)
	}
	if _, err := UninstallPlugin(path); !errors.Is(err, ErrNotLedgerPlugin) {
		t.Errorf("uninstall of the user's file: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != string(mine) {
		t.Errorf("the user's file changed: %q", b)
	}
}

// TestPluginSourceParses: the OpenCode plugin is valid JavaScript (node
// --check) whatever the paths it holds, quotes and newlines included.
func TestPluginSourceParses(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	o := PluginOptions{Agent: "opencode", Name: "OpenCode", Exe: "/tmp/a \"quoted\"\nled`ger`${x}\u2028",
		Args: []string{"--db", "/db/it's \\ here.db"}, Timeouts: map[string]int{"Stop": 15}}
	b, err := PluginSource(o, "/made/by\nledger")
	if err != nil {
		t.Fatal(err)
	}
	if createdOf(b) != "" {
		t.Errorf("a folder with a newline read back as %q", createdOf(b))
	}
	path := filepath.Join(t.TempDir(), "ledger.mjs")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(node, "--check", path).CombinedOutput(); err != nil {
		t.Fatalf("node --check: %v\n%s", err, out)
	}
}
