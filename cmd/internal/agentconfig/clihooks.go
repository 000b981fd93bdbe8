package agentconfig

// Gemini CLI, Qwen Code and GitHub Copilot CLI keep their command hooks in
// their settings.json, each in its own shape (read from their sources:
// Gemini CLI 0.61.0's hookRegistry, Qwen Code 0.24.4's, Copilot CLI
// 1.0.102's documented format):
//
//	Gemini CLI   ~/.gemini/settings.json ($GEMINI_CLI_HOME/.gemini), a
//	             project's .gemini/settings.json: Claude Code's shape,
//	             {"hooks": {EVENT: [{"matcher", "hooks": [{"type":
//	             "command", "command", "name", "timeout"}]}]}}, the timeout
//	             in milliseconds
//	Qwen Code    ~/.qwen/settings.json ($QWEN_HOME), .qwen/settings.json:
//	             Claude Code's shape, the timeout in seconds
//	Copilot CLI  ~/.copilot/settings.json ($COPILOT_HOME): {"hooks":
//	             {event: [{"type": "command", "bash", "timeoutSec"}]}}, no
//	             matcher groups; a repository's hooks are files of their own,
//	             .github/hooks/*.json ({"version": 1, "hooks": ...}), and
//	             ledger's is .github/hooks/ledger.json
//
// As for Claude Code and Codex, only ledger's own entries change: every
// other byte stays, a second install changes nothing, and uninstall gives
// the file back byte for byte, removing one that holds nothing else (an
// install made it).

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/tidwall/gjson"
)

// AgentHooksPath is the file ledger's hooks go in for agent ("gemini",
// "qwen" or "copilot") and scope ("user" or "project", the folder wd),
// home being the user's home and getenv their environment.
func AgentHooksPath(agent, scope, home, wd string, getenv func(string) string) (string, error) {
	if scope != "user" && scope != "project" {
		return "", fmt.Errorf("--scope %q: want user or project", scope)
	}
	abs := func(name, def string) string {
		if v := getenv(name); v != "" && filepath.IsAbs(v) {
			return filepath.Clean(v)
		}
		return def
	}
	switch agent {
	case "gemini":
		if scope == "project" {
			return filepath.Join(wd, ".gemini", "settings.json"), nil
		}
		return filepath.Join(abs("GEMINI_CLI_HOME", home), ".gemini", "settings.json"), nil
	case "qwen":
		if scope == "project" {
			return filepath.Join(wd, ".qwen", "settings.json"), nil
		}
		return filepath.Join(abs("QWEN_HOME", filepath.Join(home, ".qwen")), "settings.json"), nil
	case "copilot":
		if scope == "project" {
			return filepath.Join(wd, ".github", "hooks", "ledger.json"), nil
		}
		return filepath.Join(abs("COPILOT_HOME", filepath.Join(home, ".copilot")), "settings.json"), nil
	}
	return "", fmt.Errorf("no hooks file for agent %q", agent)
}

// geminiEntry is a Gemini CLI command hook.
type geminiEntry struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Name    string `json:"name"`
	Timeout int    `json:"timeout"` // milliseconds
}

// InstallGeminiHooks returns Gemini CLI's settings.json with ledger's
// hooks replaced by hooks (their Timeout in seconds, written in
// milliseconds), each named "ledger" (the name Gemini CLI shows, and the
// one hooksConfig.disabled takes).
func InstallGeminiHooks(settings []byte, hooks []Hook) ([]byte, error) {
	return installHookGroups(settings, hooks, func(h Hook) any {
		return geminiEntry{Type: "command", Command: h.Command, Name: "ledger", Timeout: h.Timeout * 1000}
	})
}

// InstallQwenHooks returns Qwen Code's settings.json with ledger's hooks
// replaced by hooks: Claude Code's shape, the timeout in seconds.
func InstallQwenHooks(settings []byte, hooks []Hook) ([]byte, error) {
	return InstallClaudeHooks(settings, hooks)
}

// UninstallGroupHooks returns a settings.json of Claude Code's hook shape
// (Gemini CLI's, Qwen Code's) without ledger's hooks, everything else byte
// for byte; nil (remove the file) when nothing but an empty object is left.
func UninstallGroupHooks(settings []byte) ([]byte, error) {
	out, err := UninstallClaudeHooks(settings)
	if err != nil || bytes.Equal(out, settings) {
		return out, err
	}
	return nothingLeft(out, nil), nil
}

// GeminiHooksDisabled tells whether a Gemini CLI settings.json turns every
// hook off (hooksConfig.enabled false): ledger's would not run.
func GeminiHooksDisabled(settings []byte) bool {
	v := gjson.GetBytes(settings, "hooksConfig.enabled")
	return v.Exists() && v.Type == gjson.False
}

// copilotEntry is a Copilot CLI command hook.
type copilotEntry struct {
	Type       string `json:"type"`
	Bash       string `json:"bash"`
	TimeoutSec int    `json:"timeoutSec"`
}

// copilotProjectHead is how a repository hooks file of Copilot CLI starts.
const copilotProjectHead = "{\n  \"version\": 1\n}\n"

// InstallCopilotHooks returns Copilot CLI's hooks document (settings.json,
// or with project the repository file .github/hooks/ledger.json) with
// ledger's hooks replaced by hooks: each an entry at the end of its
// event's list.
func InstallCopilotHooks(doc []byte, hooks []Hook, project bool) ([]byte, error) {
	doc, err := UninstallCopilotHooks(doc)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(doc)) == 0 {
		doc = []byte("{}\n")
		if project {
			doc = []byte(copilotProjectHead)
		}
	}
	r, err := root(doc)
	if err != nil {
		return nil, err
	}
	s := styleOf(doc, r)
	if hs := r.Get("hooks"); !hs.Exists() {
		if doc, err = insert(doc, s, "", "hooks", struct{}{}); err != nil {
			return nil, err
		}
	} else if !hs.IsObject() {
		return nil, fmt.Errorf("hooks is not an object")
	}
	for _, h := range hooks {
		e := copilotEntry{Type: "command", Bash: h.Command, TimeoutSec: h.Timeout}
		event := "hooks." + pathKey(h.Event)
		switch v := gjson.GetBytes(doc, event); {
		case !v.Exists():
			doc, err = insert(doc, s, "hooks", h.Event, []copilotEntry{e})
		case v.IsArray():
			doc, err = insert(doc, s, event, "", e)
		default:
			err = fmt.Errorf("not a list")
		}
		if err != nil {
			return nil, fmt.Errorf("hooks.%s: %w", h.Event, err)
		}
	}
	return doc, nil
}

// UninstallCopilotHooks returns Copilot CLI's hooks document without
// ledger's entries (a "bash" command running ledger's hook): an event left
// with none goes, and so does a hooks object left empty; nil (remove the
// file) when nothing is left but an empty object or a repository file's
// bare {"version": 1}. Everything else stays byte for byte.
func UninstallCopilotHooks(doc []byte) ([]byte, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return doc, nil
	}
	r, err := root(doc)
	if err != nil {
		return nil, fmt.Errorf("read settings: %w", err)
	}
	hooks := r.Get("hooks")
	if !hooks.IsObject() {
		return doc, nil
	}
	var events []string
	hooks.ForEach(func(k, _ gjson.Result) bool {
		events = append(events, k.String())
		return true
	})
	out := doc
	for i := len(events) - 1; i >= 0; i-- {
		path := "hooks." + pathKey(events[i])
		list := gjson.GetBytes(out, path)
		if !list.IsArray() {
			continue
		}
		entries := list.Array()
		var ours []int
		for j, e := range entries {
			if e.IsObject() && IsLedgerHook(e.Get("bash").String()) {
				ours = append(ours, j)
			}
		}
		if len(ours) == 0 {
			continue
		}
		if len(ours) == len(entries) {
			if out, err = remove(out, path); err != nil {
				return nil, err
			}
			continue
		}
		for k := len(ours) - 1; k >= 0; k-- {
			if out, err = remove(out, path+"."+strconv.Itoa(ours[k])); err != nil {
				return nil, err
			}
		}
	}
	if bytes.Equal(out, doc) {
		return doc, nil
	}
	if len(gjson.GetBytes(out, "hooks").Map()) == 0 {
		if out, err = remove(out, "hooks"); err != nil {
			return nil, err
		}
	}
	return nothingLeft(out, []byte(copilotProjectHead)), nil
}

// nothingLeft is nil when doc is an empty object (or, byte for byte, the
// head an install starts a file of its own with), else doc.
func nothingLeft(doc, head []byte) []byte {
	t := bytes.TrimSpace(doc)
	if len(t) == 0 || bytes.Equal(t, []byte("{}")) || head != nil && bytes.Equal(t, bytes.TrimSpace(head)) {
		return nil
	}
	return doc
}

// LedgerCopilotHookCommands lists, by event, ledger's hook commands in a
// Copilot CLI hooks document (entries with a "bash" command).
func LedgerCopilotHookCommands(doc []byte) (map[string][]string, error) {
	out := map[string][]string{}
	if len(doc) == 0 {
		return out, nil
	}
	if !gjson.ValidBytes(doc) {
		return nil, fmt.Errorf("not valid JSON")
	}
	gjson.GetBytes(doc, "hooks").ForEach(func(event, list gjson.Result) bool {
		list.ForEach(func(_, e gjson.Result) bool {
			if cmd := e.Get("bash").String(); IsLedgerHook(cmd) {
				out[event.String()] = append(out[event.String()], cmd)
			}
			return true
		})
		return true
	})
	return out, nil
}
