package agentconfig

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// ledgerHooks are hooks as `ledger hooks install` writes them.
var ledgerHooks = []Hook{
	{Event: "SessionStart", Command: "/usr/local/bin/ledger hook", Timeout: 10},
	{Event: "PreCompact", Command: "/usr/local/bin/ledger hook", Timeout: 60},
	{Event: "PostToolUse", Command: "/usr/local/bin/ledger hook", Timeout: 5},
	{Event: "Stop", Command: "/usr/local/bin/ledger hook", Timeout: 15},
	{Event: "SessionEnd", Command: "/usr/local/bin/ledger hook", Timeout: 5},
}

// userFiles are settings files as people write them: every layout the
// edits must leave alone.
var userFiles = map[string]string{
	"two spaces": `{
  "model": "opus",
  "permissions": {
    "allow": ["Bash(go test:*)"]
  }
}
`,
	"four spaces, hooks of the user's in the same events": `{
    "hooks": {
        "PreCompact": [
            {
                "matcher": "auto",
                "hooks": [
                    {"type": "command", "command": "~/bin/save.sh"}
                ]
            }
        ],
        "Stop": [
            {
                "hooks": [
                    {"type": "command", "command": "say done", "timeout": 3}
                ]
            }
        ]
    },
    "model": "sonnet"
}
`,
	"tabs, no trailing newline":     "{\n\t\"env\": {\n\t\t\"FOO\": \"b\\u00e9r\"\n\t},\n\t\"statusLine\": {\"type\": \"command\", \"command\": \"echo \\/ok\"}\n}",
	"unusual key order and escapes": `{"zeta": 1, "hooks": {"SessionEnd": [{"matcher": "", "hooks": [{"type": "command", "command": "logger \"bye\u00e9\""}]}]}, "alpha": [1, 2, {"x": "\/"}]}`,
	"a ledger hook sharing the user's matcher group": `{
  "hooks": {
    "Stop": [
      {
        "matcher": "",
        "hooks": [
          {"type": "command", "command": "say done"}
        ]
      }
    ]
  }
}
`,
	"empty object": "{}\n",
	"hooks object with other events only": `{
  "hooks": {
    "Notification": [
      {"matcher": "", "hooks": [{"type": "command", "command": "notify-send hi"}]}
    ]
  }
}
`,
}

func TestInstallUninstallGivesTheFileBack(t *testing.T) {
	for name, file := range userFiles {
		t.Run(name, func(t *testing.T) {
			installed, err := InstallClaudeHooks([]byte(file), ledgerHooks)
			if err != nil {
				t.Fatal(err)
			}
			if !gjson.ValidBytes(installed) {
				t.Fatalf("install made invalid JSON:\n%s", installed)
			}
			for _, h := range ledgerHooks {
				if n := countLedger(installed, h.Event); n != 1 {
					t.Errorf("%s: %d ledger hooks after install, want 1:\n%s", h.Event, n, installed)
				}
			}
			again, err := InstallClaudeHooks(installed, ledgerHooks)
			if err != nil || string(again) != string(installed) {
				t.Errorf("a second install changed the file (%v):\n%s\nwant\n%s", err, again, installed)
			}
			back, err := UninstallClaudeHooks(installed)
			if err != nil {
				t.Fatal(err)
			}
			if string(back) != file {
				t.Errorf("install then uninstall:\n%q\nwant the original\n%q", back, file)
			}
			if twice, _ := UninstallClaudeHooks(back); string(twice) != file {
				t.Errorf("uninstall of a file without ledger's hooks changed it:\n%q", twice)
			}
		})
	}
}

// countLedger counts ledger's hooks in an event.
func countLedger(doc []byte, event string) int {
	n := 0
	for _, g := range gjson.GetBytes(doc, "hooks."+event).Array() {
		for _, h := range g.Get("hooks").Array() {
			if IsLedgerHook(h.Get("command").String()) {
				n++
			}
		}
	}
	return n
}

func TestInstallKeepsTheFileStyle(t *testing.T) {
	got, err := InstallClaudeHooks([]byte(userFiles["four spaces, hooks of the user's in the same events"]), ledgerHooks[:2])
	if err != nil {
		t.Fatal(err)
	}
	want := `{
    "hooks": {
        "PreCompact": [
            {
                "matcher": "auto",
                "hooks": [
                    {"type": "command", "command": "~/bin/save.sh"}
                ]
            },
            {
                "matcher": "",
                "hooks": [
                    {
                        "type": "command",
                        "command": "/usr/local/bin/ledger hook",
                        "timeout": 60
                    }
                ]
            }
        ],
        "Stop": [
            {
                "hooks": [
                    {"type": "command", "command": "say done", "timeout": 3}
                ]
            }
        ],
        "SessionStart": [
            {
                "matcher": "",
                "hooks": [
                    {
                        "type": "command",
                        "command": "/usr/local/bin/ledger hook",
                        "timeout": 10
                    }
                ]
            }
        ]
    },
    "model": "sonnet"
}
`
	if string(got) != want {
		t.Errorf("install:\n%s\nwant\n%s", got, want)
	}
	oneLine, err := InstallClaudeHooks([]byte(`{"model":"opus"}`), ledgerHooks[:1])
	if err != nil || string(oneLine) != `{"model":"opus","hooks":{"SessionStart":[{"matcher":"","hooks":[{"type":"command","command":"/usr/local/bin/ledger hook","timeout":10}]}]}}` {
		t.Errorf("one-line file: %s (%v)", oneLine, err)
	}
}

func TestUninstallRemovesOnlyLedgersHooks(t *testing.T) {
	// An old install's ledger hook in the user's own group, and one in a
	// group of its own with an unknown key.
	in := `{
  "hooks": {
    "Stop": [
      {
        "matcher": "",
        "hooks": [
          {"type": "command", "command": "say done"},
          {"type": "command", "command": "'/opt/my tools/ledger' hook --mode clear"}
        ]
      },
      {"matcher": "", "hooks": [{"type": "command", "command": "ledger hook"}], "x": 1}
    ],
    "Odd": "not a list"
  }
}
`
	want := `{
  "hooks": {
    "Stop": [
      {
        "matcher": "",
        "hooks": [
          {"type": "command", "command": "say done"}
        ]
      }
    ],
    "Odd": "not a list"
  }
}
`
	got, err := UninstallClaudeHooks([]byte(in))
	if err != nil || string(got) != want {
		t.Errorf("uninstall = %v\n%s\nwant\n%s", err, got, want)
	}
}

func TestBadSettings(t *testing.T) {
	for _, bad := range []string{`{"model": "opus",`, `[1, 2]`, `"x"`, `{"a": 1} {"b": 2}`} {
		if _, err := InstallClaudeHooks([]byte(bad), ledgerHooks); err == nil {
			t.Errorf("install into %q: no error", bad)
		}
	}
	if _, err := InstallClaudeHooks([]byte(`{"hooks": {"Stop": {"not": "a list"}}}`), ledgerHooks); err == nil ||
		!strings.Contains(err.Error(), "hooks.Stop") {
		t.Errorf("install into hooks.Stop that is not a list: %v", err)
	}
}

func TestIsLedgerHookAndHookCommand(t *testing.T) {
	for cmd, want := range map[string]bool{
		"/usr/local/bin/ledger hook": true, "ledger hook --mode clear": true, "'/opt/my tools/ledger' hook": true,
		`"/opt/x/ledger.exe" hook`: true, "ledger ingest": false, "/usr/bin/ledgerx hook": false, "say done": false, "": false,
	} {
		if got := IsLedgerHook(cmd); got != want {
			t.Errorf("IsLedgerHook(%q) = %v", cmd, got)
		}
	}
	got, err := HookCommand("/opt/my tools/ledger", "--db", "/tmp/it's.db")
	if err != nil || got != `'/opt/my tools/ledger' hook --db '/tmp/it'\''s.db'` || !IsLedgerHook(got) {
		t.Errorf("HookCommand = %q, %v", got, err)
	}
	if _, err := HookCommand("/tmp/go-build123/b001/exe/ledger"); err == nil {
		t.Error("HookCommand accepted a go run build")
	}
}
