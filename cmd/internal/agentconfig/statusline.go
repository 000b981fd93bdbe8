package agentconfig

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"
)

// statusLine is how settings.json holds a command status line.
type statusLine struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Padding int    `json:"padding"`
}

// IsLedgerStatusLine tells ledger's status line command from everyone
// else's: a "ledger" binary whose first argument is "statusline".
func IsLedgerStatusLine(command string) bool {
	f := shellWords(command, 2)
	return len(f) == 2 && strings.TrimSuffix(filepath.Base(f[0]), ".exe") == "ledger" && f[1] == "statusline"
}

// StatusLineCommand is ledger's status line command: the binary at exe
// (absolute) running `statusline` with args (--db PATH: the ledger the
// hooks write), chaining the command chain ("" for none), each word
// quoted for sh where it needs it.
func StatusLineCommand(exe, chain string, args ...string) string {
	if exe == PathProgram {
		// Found on each user's PATH (a project's shared settings).
	} else if abs, err := filepath.EvalSymlinks(exe); err == nil {
		exe = abs
	}
	c := shellQuote(exe) + " statusline"
	for _, a := range args {
		c += " " + shellQuote(a)
	}
	if chain != "" {
		c += " --chain " + shellQuote(chain)
	}
	return c
}

// chainOf is the command a ledger status line chains ("" for none).
func chainOf(command string) string {
	words := shellWords(command, 1<<20)
	for i := 0; i+1 < len(words); i++ {
		if words[i] == "--chain" {
			return words[i+1]
		}
	}
	return ""
}

// InstallStatusLine returns settings with ledger's status line set. A
// status line the user already has (a command that is not ledger's) is
// chained: ledger's runs it and shows its line first, and uninstall puts
// it back. Only the statusLine command changes; its other keys (padding,
// refreshInterval) stay. exe is the ledger binary, args the flags it runs
// statusline with (--db PATH).
func InstallStatusLine(settings []byte, exe string, args ...string) ([]byte, error) {
	doc := settings
	if len(bytes.TrimSpace(doc)) == 0 {
		doc = []byte("{}\n")
	}
	r, err := root(doc)
	if err != nil {
		return nil, fmt.Errorf("read settings: %w", err)
	}
	sl := r.Get("statusLine")
	if !sl.Exists() {
		return insert(doc, styleOf(doc, r), "", "statusLine", statusLine{Type: "command", Command: StatusLineCommand(exe, "", args...)})
	}
	cmd := sl.Get("command")
	if !sl.IsObject() || sl.Get("type").String() != "command" || cmd.Type != gjson.String {
		return nil, fmt.Errorf("statusLine is not a command status line: left as it is (remove it, or set it to %q yourself)", StatusLineCommand(exe, ""))
	}
	chain := cmd.String()
	if IsLedgerStatusLine(chain) {
		chain = chainOf(chain)
	}
	return setString(doc, cmd, StatusLineCommand(exe, chain, args...)), nil
}

// UninstallStatusLine returns settings without ledger's status line: the
// status line it chained comes back in its place, else statusLine goes.
// Anything else, and a status line that is not ledger's, stays as it is.
func UninstallStatusLine(settings []byte) ([]byte, error) {
	if len(bytes.TrimSpace(settings)) == 0 {
		return settings, nil
	}
	r, err := root(settings)
	if err != nil {
		return nil, fmt.Errorf("read settings: %w", err)
	}
	cmd := r.Get("statusLine.command")
	if cmd.Type != gjson.String || !IsLedgerStatusLine(cmd.String()) {
		return settings, nil
	}
	if chain := chainOf(cmd.String()); chain != "" {
		return setString(settings, cmd, chain), nil
	}
	return remove(settings, "statusLine")
}

// setString replaces the string value v found in doc with s.
func setString(doc []byte, v gjson.Result, s string) []byte {
	enc := style{}.encode(s, "")
	if string(enc) == v.Raw {
		return doc
	}
	return splice(doc, v.Index, v.Index+len(v.Raw), string(enc))
}
