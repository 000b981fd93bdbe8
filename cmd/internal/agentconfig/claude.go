package agentconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// Hook is one command hook for Claude Code's settings.json.
type Hook struct {
	Event   string
	Matcher string
	Command string
	Timeout int // seconds
}

// matcherGroup and hookEntry are how settings.json holds a hook.
type matcherGroup struct {
	Matcher string `json:"matcher"`
	Hooks   []any  `json:"hooks"`
}

type hookEntry struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout,omitempty"`
}

// ClaudeSettingsPath is the settings.json of a scope: "user"
// (~/.claude/settings.json) or "project" (.claude/settings.json in the
// folder wd).
func ClaudeSettingsPath(scope, home, wd string) (string, error) {
	switch scope {
	case "user":
		return filepath.Join(home, ".claude", "settings.json"), nil
	case "project":
		return filepath.Join(wd, ".claude", "settings.json"), nil
	}
	return "", fmt.Errorf("--scope %q: want user or project", scope)
}

// IsLedgerHook tells ledger's own hook commands from everyone else's: the
// program is a "ledger" binary and its first argument is "hook".
func IsLedgerHook(command string) bool {
	f := shellWords(command, 2)
	return len(f) == 2 && strings.TrimSuffix(filepath.Base(f[0]), ".exe") == "ledger" && f[1] == "hook"
}

// shellWords splits the first n words off a command line as sh would,
// near enough for the commands hooks hold: quotes group (and go), a
// backslash outside quotes escapes.
func shellWords(s string, n int) []string {
	var words []string
	var w strings.Builder
	inWord := false
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			w.WriteRune(r)
			escaped = false
		case r == '\\' && quote == 0:
			escaped, inWord = true, true
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				if words = append(words, w.String()); len(words) == n {
					return words
				}
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// HookCommand is the command line written into settings.json: the ledger
// binary at exe (an absolute path, so that hooks work whatever PATH Claude
// Code has) and its arguments, quoted for sh where they need it.
func HookCommand(exe string, args ...string) (string, error) {
	if exe == PathProgram {
		// Found on each user's PATH: a project's shared settings.
	} else if abs, err := filepath.EvalSymlinks(exe); err == nil {
		exe = abs
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		// `go run` builds into a temporary folder that is gone when it exits:
		// hooks pointing there would all fail (quietly: hooks fail open).
		return "", fmt.Errorf("ledger is running from a temporary build (%s), which hooks cannot call later: install it first (go install ./cmd/ledger) and run the installed ledger", exe)
	}
	parts := []string{shellQuote(exe), "hook"}
	for _, a := range args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " "), nil
}

// PathProgram is the hook program of a project's shared settings: the
// ledger every user who clones the project has on their PATH, not the
// absolute path of one user's binary.
const PathProgram = "ledger"

// shellQuote quotes s for sh when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// InstallClaudeHooks returns settings with ledger's hooks replaced by
// hooks: each in a matcher group of its own at the end of its event's
// list, in the order given. Everything else is kept byte for byte, and
// installing the same hooks again changes nothing. Empty settings (a file
// not there yet) become an object holding the hooks.
func InstallClaudeHooks(settings []byte, hooks []Hook) ([]byte, error) {
	return installHookGroups(settings, hooks, func(h Hook) any {
		return hookEntry{Type: "command", Command: h.Command, Timeout: h.Timeout}
	})
}

// installHookGroups is InstallClaudeHooks with each hook's entry in the
// group made by entry: the agents that took Claude Code's shape differ in
// the entry (Gemini CLI's timeout is in milliseconds, and names the hook).
func installHookGroups(settings []byte, hooks []Hook, entry func(Hook) any) ([]byte, error) {
	doc, err := UninstallClaudeHooks(settings)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(doc)) == 0 {
		doc = []byte("{}\n")
	}
	r, _ := root(doc)
	s := styleOf(doc, r)
	if !r.Get("hooks").Exists() {
		if doc, err = insert(doc, s, "", "hooks", struct{}{}); err != nil {
			return nil, err
		}
	}
	for _, h := range hooks {
		group := matcherGroup{Matcher: h.Matcher, Hooks: []any{entry(h)}}
		event := "hooks." + pathKey(h.Event)
		if gjson.GetBytes(doc, event).Exists() {
			doc, err = insert(doc, s, event, "", group)
		} else {
			doc, err = insert(doc, s, "hooks", h.Event, []matcherGroup{group})
		}
		if err != nil {
			return nil, fmt.Errorf("settings hooks.%s: %w", h.Event, err)
		}
	}
	return doc, nil
}

// UninstallClaudeHooks returns settings without ledger's hooks: a matcher
// group that held only ledger's hooks goes, one that held others too keeps
// them; an event left with no group goes, and so does a hooks object left
// empty. Anything not ledger's stays byte for byte; what is not shaped like
// a hook is left alone. Empty settings stay empty.
func UninstallClaudeHooks(settings []byte) ([]byte, error) {
	if len(bytes.TrimSpace(settings)) == 0 {
		return settings, nil
	}
	r, err := root(settings)
	if err != nil {
		return nil, fmt.Errorf("read settings: %w", err)
	}
	hooks := r.Get("hooks")
	if !hooks.IsObject() {
		return settings, nil
	}
	var events []string
	hooks.ForEach(func(k, _ gjson.Result) bool {
		events = append(events, k.String())
		return true
	})
	doc := settings
	// From the end backwards, so that each deletion leaves the paths of
	// those still to come as they were.
	for i := len(events) - 1; i >= 0; i-- {
		path := "hooks." + pathKey(events[i])
		if doc, err = removeFromEvent(doc, path); err != nil {
			return nil, err
		}
	}
	if n := len(gjson.GetBytes(doc, "hooks").Map()); n == 0 && !bytes.Equal(doc, settings) {
		return remove(doc, "hooks")
	}
	return doc, nil
}

// removeFromEvent removes ledger's hooks from one event's list of matcher
// groups, and the event when no group is left.
func removeFromEvent(doc []byte, event string) ([]byte, error) {
	groups := gjson.GetBytes(doc, event)
	if !groups.IsArray() {
		return doc, nil // not ours to judge
	}
	list := groups.Array()
	changed := false
	var err error
	for gi := len(list) - 1; gi >= 0; gi-- {
		entries := list[gi].Get("hooks")
		if !list[gi].IsObject() || !entries.IsArray() {
			continue
		}
		hs := entries.Array()
		var ours []int
		for hi, h := range hs {
			if h.IsObject() && IsLedgerHook(h.Get("command").String()) {
				ours = append(ours, hi)
			}
		}
		if len(ours) == 0 {
			continue
		}
		changed = true
		groupPath := event + "." + strconv.Itoa(gi)
		if len(ours) == len(hs) {
			if doc, err = remove(doc, groupPath); err != nil {
				return nil, err
			}
			continue
		}
		for k := len(ours) - 1; k >= 0; k-- {
			if doc, err = remove(doc, groupPath+".hooks."+strconv.Itoa(ours[k])); err != nil {
				return nil, err
			}
		}
	}
	if changed && len(gjson.GetBytes(doc, event).Array()) == 0 {
		return remove(doc, event)
	}
	return doc, nil
}

// UpdateFile applies edit to the file at path (nil bytes when there is
// none yet) and, when that changes it, writes the result atomically and
// durably (renameio: a temporary file in the same folder, synced, renamed
// over path; then the folder synced, so that the rename survives a crash
// too), keeping the previous file as path.bak. A new file is owner-only;
// an existing one keeps its mode. An edit that returns nil removes the
// file, with no backup: it held nothing but what the edit took out.
func UpdateFile(path string, edit func([]byte) ([]byte, error)) (changed bool, err error) {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	updated, err := edit(old)
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	if bytes.Equal(old, updated) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	if old != nil && updated != nil {
		// Atomically too: the backup's name may be a symbolic link (a
		// checkout's, at project scope), which must be replaced, never
		// written through.
		if err := writeAtomic(path+".bak", old, 0o600); err != nil {
			return false, fmt.Errorf("back up %s: %w", path, err)
		}
	}
	if updated == nil {
		if err := os.Remove(path); err != nil {
			return false, fmt.Errorf("remove %s: %w", path, err)
		}
		return true, nil
	}
	if err := writeAtomic(path, updated, 0o600); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	return true, nil
}
