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
//
// Where path leads through symbolic links (the file, or a folder on its
// way), the file it leads to is the one edited, its backup beside it:
// a settings file kept in a dotfiles repository stays a link to it.
// within, when not empty (a project-scope install: the checkout), is the
// folder the file must really be in: a checkout whose link leads
// elsewhere (to the user's own settings, to a file in the user's HOME) is
// refused, so that installing in a checkout never copies a file of the
// user's into it nor writes one outside it.
func UpdateFile(path, within string, edit func([]byte) ([]byte, error)) (changed bool, err error) {
	if path, err = RealFile(path, within); err != nil {
		return false, err
	}
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

// RealFile is path with every symbolic link on it followed, the file's
// own included, for a file that may not exist yet (its nearest existing
// folder is followed). With within set, the result must be inside
// within (followed too), or it is an error that names the link.
func RealFile(path, within string) (string, error) {
	real, err := followExisting(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if within == "" {
		return real, nil
	}
	root, err := filepath.EvalSymlinks(within)
	if err != nil {
		return "", fmt.Errorf("%s: %w", within, err)
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s leads through a symbolic link to %s, outside %s: not read or written (remove the link, or install at user scope)", path, real, root)
	}
	return real, nil
}

// followExisting is filepath.EvalSymlinks for a path whose end may not
// exist yet: the part that exists is followed, the rest appended; a link
// to a file that does not exist (a settings file an uninstall emptied and
// removed, in a dotfiles repository) leads to where that file would be.
func followExisting(path string) (string, error) {
	return follow(path, 0)
}

// maxLinks is how many links follow follows before it calls them a loop
// (Linux's own limit).
const maxLinks = 40

func follow(path string, links int) (string, error) {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		dir, base := filepath.Split(filepath.Clean(path))
		dir = filepath.Clean(dir)
		if dir == path || base == "" {
			return path, nil
		}
		d, err := follow(dir, links)
		if err != nil {
			return "", err
		}
		return filepath.Join(d, base), nil
	case err != nil:
		return "", err
	case fi.Mode()&fs.ModeSymlink == 0:
		return filepath.EvalSymlinks(path)
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real, nil
	}
	if links >= maxLinks {
		return "", fmt.Errorf("too many symbolic links (a loop?)")
	}
	to, err := os.Readlink(path)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(to) {
		to = filepath.Join(filepath.Dir(path), to)
	}
	return follow(to, links+1)
}
