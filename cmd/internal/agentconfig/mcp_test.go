package agentconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"github.com/tidwall/gjson"
)

var ledgerMCP = MCPServer{Command: "/usr/local/bin/ledger", Args: []string{"mcp"}}

// codexFiles are config.toml files as people write them.
var codexFiles = map[string]string{
	"empty": "",
	"comments, other servers and tables": `# Codex configuration
model = "gpt-5.3-codex"
approval_policy = "on-request"   # ask before running commands

[mcp_servers.context7]
command = "npx"
args = ["-y", "@upstash/context7-mcp"]

# the docs server
[mcp_servers.docs]
command = "docs-mcp"
env = { DOCS_TOKEN = "x" }

[mcp_servers.docs.tools]
enabled = true

[profiles.fast]
model = "gpt-5-mini"

[[skills]]
name = "review"
`,
	"no trailing newline":    "model = \"o3\"\n\n[mcp_servers.github]\ncommand = \"github-mcp\"\nargs = [\"stdio\"]",
	"blank lines at the end": "model = \"o3\"\n\n\n",
	"a header-like line in a multi-line string": `notes = """
[mcp_servers.ledger]
command = "not a table: a string"
"""

[mcp_servers]
`,
	"comment as the last line, no newline": "[tui]\nnotifications = true\n# end",
	"CRLF line breaks":                     "model = \"o3\"\r\n\r\n[mcp_servers.x]\r\ncommand = \"x\"\r\n",
}

func TestCodexInstallUninstallGivesTheFileBack(t *testing.T) {
	for name, file := range codexFiles {
		t.Run(name, func(t *testing.T) {
			installed, err := InstallCodexMCP([]byte(file), ledgerMCP)
			if err != nil {
				t.Fatal(err)
			}
			var cfg struct {
				MCPServers map[string]struct {
					Command string
					Args    []string
				} `toml:"mcp_servers"`
			}
			if err := toml.Unmarshal(installed, &cfg); err != nil {
				t.Fatalf("installed file is not TOML: %v\n%s", err, installed)
			}
			if s := cfg.MCPServers["ledger"]; s.Command != ledgerMCP.Command || strings.Join(s.Args, " ") != "mcp" {
				t.Errorf("installed server %+v\n%s", s, installed)
			}
			if !strings.HasPrefix(string(installed), file) {
				t.Errorf("install changed the user's bytes:\n%q\n%q", file, installed)
			}
			again, err := InstallCodexMCP(installed, ledgerMCP)
			if err != nil || string(again) != string(installed) {
				t.Errorf("a second install changed the file (%v):\n%s", err, again)
			}
			back, err := UninstallCodexMCP(installed)
			if err != nil {
				t.Fatal(err)
			}
			if string(back) != file {
				t.Errorf("uninstall did not give the file back:\n got %q\nwant %q", back, file)
			}
		})
	}
}

func TestCodexInstallUpdatesInPlace(t *testing.T) {
	file := "[mcp_servers.ledger]\ncommand = \"/old/ledger\"\nargs = [\"mcp\"]\nstartup_timeout_sec = 20\n\n# next\n[mcp_servers.other]\ncommand = \"o\"\n"
	got, err := InstallCodexMCP([]byte(file), ledgerMCP)
	if err != nil {
		t.Fatal(err)
	}
	want := "[mcp_servers.ledger]\ncommand = \"/usr/local/bin/ledger\"\nargs = [\"mcp\"]\nstartup_timeout_sec = 20\n\n# next\n[mcp_servers.other]\ncommand = \"o\"\n"
	if string(got) != want {
		t.Errorf("update in place:\n%s\nwant\n%s", got, want)
	}
	// The keys in another order, a multi-line args, no final line break.
	file = "[mcp_servers.ledger]\nargs = [\n  \"mcp\",\n]\nenabled = true\ncommand = \"/old/ledger\""
	got, err = InstallCodexMCP([]byte(file), ledgerMCP)
	if want := "[mcp_servers.ledger]\nargs = [\"mcp\"]\nenabled = true\ncommand = \"/usr/local/bin/ledger\""; err != nil || string(got) != want {
		t.Errorf("update in place: %v\n%q\nwant\n%q", err, got, want)
	}
	// Uninstall takes the table with the sub-table a user added to it,
	// and leaves the comment of the table after it.
	withEnv := strings.Replace(want, "\n\n# next", "\n\n[mcp_servers.ledger.env]\nLEDGER_DB = \"/x.db\"\n\n# next", 1)
	back, err := UninstallCodexMCP([]byte(withEnv))
	if err != nil {
		t.Fatal(err)
	}
	if string(back) != "# next\n[mcp_servers.other]\ncommand = \"o\"\n" {
		t.Errorf("uninstall with a sub-table:\n%q", back)
	}
}

func TestCodexLeavesOthersAlone(t *testing.T) {
	notOurs := "[mcp_servers.ledger]\ncommand = \"/opt/other-ledger-tool\"\nargs = [\"serve\"]\n"
	if _, err := InstallCodexMCP([]byte(notOurs), ledgerMCP); err == nil || !strings.Contains(err.Error(), "not ledger's") {
		t.Errorf("install over another program's \"ledger\" server: %v", err)
	}
	if back, err := UninstallCodexMCP([]byte(notOurs)); err != nil || string(back) != notOurs {
		t.Errorf("uninstall removed another program's server: %q %v", back, err)
	}
	dotted := "[mcp_servers]\nledger = { command = \"/usr/bin/ledger\", args = [\"mcp\", \"--db\", \"/x\"] }\n"
	if _, err := InstallCodexMCP([]byte(dotted), ledgerMCP); err == nil || !strings.Contains(err.Error(), "inline table") {
		t.Errorf("install over an inline table: %v", err)
	}
	if _, err := InstallCodexMCP([]byte("model = \n"), ledgerMCP); err == nil || !strings.Contains(err.Error(), "config.toml") {
		t.Errorf("install into a file that is not TOML: %v", err)
	}
}

func TestTOMLString(t *testing.T) {
	for _, s := range []string{`/usr/bin/ledger`, `C:\Program Files\ledger.exe`, `a "quoted" path`, "tab\tand\nnewline\x01", "ünïcode ✓"} {
		var v struct{ S string }
		if err := toml.Unmarshal([]byte("S = "+tomlString(s)), &v); err != nil || v.S != s {
			t.Errorf("tomlString(%q) = %s decodes to %q, %v", s, tomlString(s), v.S, err)
		}
	}
}

// claudeFiles are .mcp.json and ~/.claude.json files as they come.
var claudeFiles = map[string]string{
	"claude.json with user servers": `{
  "numStartups": 42,
  "projects": {
    "/home/me/app": {
      "allowedTools": [],
      "mcpServers": {}
    }
  },
  "mcpServers": {
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/"
    }
  },
  "hasCompletedOnboarding": true
}
`,
	"claude.json without mcpServers, tabs": "{\n\t\"numStartups\": 1,\n\t\"theme\": \"dark\"\n}\n",
	"mcp.json on one line, no newline":     `{"mcpServers": {"playwright": {"command": "npx", "args": ["@playwright/mcp@latest"]}}}`,
	"escapes and odd key order":            `{"z": "\u00e9", "mcpServers": {"a\/b": {"command": "x"}}, "a": [1]}` + "\n",
}

func TestClaudeMCPInstallUninstallGivesTheFileBack(t *testing.T) {
	for name, file := range claudeFiles {
		t.Run(name, func(t *testing.T) {
			installed, err := InstallClaudeMCP([]byte(file), ledgerMCP)
			if err != nil {
				t.Fatal(err)
			}
			e := gjson.GetBytes(installed, "mcpServers.ledger")
			if e.Get("type").String() != "stdio" || e.Get("command").String() != ledgerMCP.Command || e.Get("args.0").String() != "mcp" {
				t.Errorf("installed entry %s\n%s", e.Raw, installed)
			}
			again, err := InstallClaudeMCP(installed, ledgerMCP)
			if err != nil || string(again) != string(installed) {
				t.Errorf("a second install changed the file (%v):\n%s", err, again)
			}
			back, err := UninstallClaudeMCP(installed)
			if err != nil {
				t.Fatal(err)
			}
			if string(back) != file {
				t.Errorf("uninstall did not give the file back:\n got %q\nwant %q", back, file)
			}
		})
	}
}

func TestClaudeMCPLeavesOthersAlone(t *testing.T) {
	notOurs := `{"mcpServers": {"ledger": {"command": "/opt/ledger-cloud", "args": ["serve"]}}}`
	if _, err := InstallClaudeMCP([]byte(notOurs), ledgerMCP); err == nil || !strings.Contains(err.Error(), "not ledger's") {
		t.Errorf("install over another program's server: %v", err)
	}
	if back, err := UninstallClaudeMCP([]byte(notOurs)); err != nil || string(back) != notOurs {
		t.Errorf("uninstall removed another program's server: %q %v", back, err)
	}
	// An update changes the command and args, and keeps the rest.
	old := "{\n  \"mcpServers\": {\n    \"ledger\": {\n      \"command\": \"/old/ledger\",\n      \"args\": [\n        \"mcp\"\n      ],\n      \"env\": {\"LEDGER_DB\": \"/x.db\"}\n    },\n    \"x\": {\"command\": \"x\"}\n  }\n}\n"
	got, err := InstallClaudeMCP([]byte(old), MCPServer{Command: ledgerMCP.Command, Args: []string{"mcp", "--db", "/y.db"}})
	want := "{\n  \"mcpServers\": {\n    \"ledger\": {\n      \"command\": \"/usr/local/bin/ledger\",\n      \"args\": [\n        \"mcp\",\n        \"--db\",\n        \"/y.db\"\n      ],\n      \"env\": {\"LEDGER_DB\": \"/x.db\"}\n    },\n    \"x\": {\"command\": \"x\"}\n  }\n}\n"
	if err != nil || string(got) != want {
		t.Errorf("update of ledger's entry: %v\n%s\nwant\n%s", err, got, want)
	}
}

// TestMCPConfigFiles: the files of each agent and scope, and a file that
// install created is removed by uninstall, except Claude Code's own
// ~/.claude.json.
func TestMCPConfigFiles(t *testing.T) {
	home, wd := t.TempDir(), t.TempDir()
	for _, tc := range []struct {
		agent, scope, codexHome, want string
		removed                       bool
	}{
		{"claude", "user", "", filepath.Join(home, ".claude.json"), false},
		{"claude", "project", "", filepath.Join(wd, ".mcp.json"), true},
		{"codex", "user", "", filepath.Join(home, ".codex", "config.toml"), true},
		{"codex", "user", filepath.Join(home, "ch"), filepath.Join(home, "ch", "config.toml"), true},
	} {
		c, err := MCPConfigFile(tc.agent, tc.scope, home, wd, tc.codexHome)
		if err != nil || c.Path != tc.want {
			t.Errorf("%s %s: %q %v, want %s", tc.agent, tc.scope, c.Path, err, tc.want)
			continue
		}
		if changed, err := UpdateFile(c.Path, "", func(b []byte) ([]byte, error) { return c.Install(b, ledgerMCP) }); err != nil || !changed {
			t.Fatalf("install %s: %v %v", c.Path, changed, err)
		}
		if changed, err := UpdateFile(c.Path, "", c.Uninstall); err != nil || !changed {
			t.Fatalf("uninstall %s: %v %v", c.Path, changed, err)
		}
		_, err = os.Stat(c.Path)
		if gone := os.IsNotExist(err); gone != tc.removed {
			t.Errorf("%s after install and uninstall: removed %v, want %v", c.Path, gone, tc.removed)
		}
	}
	if _, err := MCPConfigFile("codex", "project", home, wd, ""); err == nil {
		t.Errorf("codex --scope project: no error")
	}
	if _, err := MCPConfigFile("gemini", "user", home, wd, ""); err == nil {
		t.Errorf("--agent gemini: no error")
	}
}

func TestIsLedgerMCP(t *testing.T) {
	for _, tc := range []struct {
		command string
		args    []string
		want    bool
	}{
		{"/usr/local/bin/ledger", []string{"mcp"}, true},
		{"ledger", []string{"mcp", "--db", "/x"}, true},
		{`C:\bin\ledger.exe`, []string{"mcp"}, true},
		{"/usr/local/bin/ledger", []string{"hook"}, false},
		{"/usr/local/bin/ledger", nil, false},
		{"/opt/ledger-cloud", []string{"mcp"}, false},
		{"ledger", []string{"--db", "/x.db", "mcp"}, true},
		{"ledger", []string{"--db=/x.db", "--no-redact", "mcp"}, true},
		{"ledger", []string{"--db", "mcp"}, false},
	} {
		if got := IsLedgerMCP(tc.command, tc.args); got != tc.want {
			t.Errorf("IsLedgerMCP(%q, %q) = %v", tc.command, tc.args, got)
		}
	}
}
