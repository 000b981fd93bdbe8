package handoff

import (
	"path"
	"strings"
)

// Settings the session established are decisions the next session must
// keep: a change to a configuration file (config/test.exs, .env.example,
// vite.config.ts, a CI workflow, settings.json, ...) or a dependency added
// to a manifest (package.json, go.mod, mix.exs, ...). A changed file is
// summed up by the lines the changes added (a comment among them first, as
// the why), one item per file.

// maxSettings is how many settings items a handoff keeps.
const maxSettings = 3

// scoreSetting ranks a settings item among the inferred decisions.
const scoreSetting = 5

var (
	reConfigDir  = lazyRegexp(`(?:^|/)(?:config|conf|configs|settings|\.config|\.github/workflows)/`)
	reConfigName = lazyRegexp(`(?i)(?:\.(?:toml|ini|cfg|conf|ya?ml|properties|env)$|^\.env|\.config\.[cm]?[jt]s$|\.config\.json$|^tsconfig.*\.json$|^\.\w+rc(?:\.json|\.ya?ml|\.js)?$|^settings\.\w+$|^docker-compose.*\.ya?ml$|^Dockerfile)`)
	reManifest   = lazyRegexp(`^(?:package\.json|go\.mod|mix\.exs|Cargo\.toml|pyproject\.toml|requirements.*\.txt|Gemfile|composer\.json|build\.gradle(?:\.kts)?|pom\.xml|deno\.json)$`)
	reCommentPre = lazyRegexp(`^(?:#+|//+|--|;+|/\*+|\*+)\s*`)
	reNoise      = lazyRegexp(`^[\[\]{}(),;]*$|^(?:end|do|fi|done|\*/)$`)
)

// reSettingLine is a line that sets something: key: value, key = value,
// a dependency tuple, a config call, an environment assignment.
var reSettingLine = lazyRegexp(`^(?:[\w.@"'\[\]{}/-]+\s*[:=]|- [\w.@"'-]+\s*:|\{:|config\s|export\s+\w+=)`)

// reNotSetting are lines shaped like settings that set nothing: a key that
// opens a block (run: |), a step's or a job's name.
var reNotSetting = lazyRegexp(`^(?:- )?[\w.@"'-]+\s*:\s*[|>]?[-+]?\s*$|^- name\s*:`)

// reSource is code, even in a config folder (internal/config/config.go).
var reSource = lazyRegexp(`\.(?:go|[cm]?[jt]sx?|py|rb|rs|java|kt|kts|c|h|cc|cpp|hpp|cs|swift|php|m|scala|ex|sh)$`)

// settingsFile tells whether p is a configuration file or a manifest.
func settingsFile(p string) bool {
	base := path.Base(p)
	return reConfigName.MatchString(base) || reManifest.MatchString(base) ||
		(reConfigDir.MatchString(p) && !reSource.MatchString(base))
}

// addedLines are the lines of after that before does not have, trimmed.
func addedLines(before, after string) []string {
	had := map[string]bool{}
	for _, l := range strings.Split(before, "\n") {
		had[strings.TrimSpace(l)] = true
	}
	var out []string
	for _, l := range strings.Split(after, "\n") {
		t := strings.TrimSpace(l)
		if t != "" && !had[t] && !reNoise.MatchString(t) {
			out = append(out, t)
		}
	}
	return out
}

// settingsEdit is what one change does to a file's lines.
type settingsEdit struct {
	added, removed []string
	whole          bool // the file was written whole: what it had is gone
}

// settingsChange reads what a file tool call adds to and removes from a
// file.
func settingsChange(tool string, in input, patch string) settingsEdit {
	var e settingsEdit
	switch tool {
	case "Edit":
		e.added = addedLines(in.str("old_string"), in.str("new_string"))
		e.removed = addedLines(in.str("new_string"), in.str("old_string"))
	case "edit":
		// OpenCode's and Kilo's {oldString, newString}, Qwen Code's
		// {old_string, new_string}, Copilot CLI's {old_str, new_str}; Pi's
		// {edits: [{oldText, newText}]}.
		old := firstNonEmpty(in.str("oldString"), in.str("old_string"), in.str("old_str"))
		nw := firstNonEmpty(in.str("newString"), in.str("new_string"), in.str("new_str"))
		e.added = addedLines(old, nw)
		e.removed = addedLines(nw, old)
		if edits, ok := in["edits"].([]any); ok {
			for _, x := range edits {
				if m, ok := x.(map[string]any); ok {
					old, _ := m["oldText"].(string)
					nw, _ := m["newText"].(string)
					e.added = append(e.added, addedLines(old, nw)...)
					e.removed = append(e.removed, addedLines(nw, old)...)
				}
			}
		}
	case "Write", "write":
		e.added, e.whole = addedLines("", in.str("content")), true
	case "MultiEdit":
		if edits, ok := in["edits"].([]any); ok {
			for _, x := range edits {
				if m, ok := x.(map[string]any); ok {
					old, _ := m["old_string"].(string)
					nw, _ := m["new_string"].(string)
					e.added = append(e.added, addedLines(old, nw)...)
					e.removed = append(e.removed, addedLines(nw, old)...)
				}
			}
		}
	case "apply_patch":
		for _, l := range strings.Split(patch, "\n") {
			if len(l) == 0 || strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "---") {
				continue
			}
			t := strings.TrimSpace(l[1:])
			if t == "" || reNoise.MatchString(t) {
				continue
			}
			switch l[0] {
			case '+':
				e.added = append(e.added, t)
			case '-':
				e.removed = append(e.removed, t)
			}
		}
	}
	return e
}

// settingsTracker keeps, per settings file, what the session set there.
type settingsTracker struct {
	order []string
	lines map[string][]string
	seq   map[string]int
}

// apply records an edit: lines it removed are no longer settings the
// session made; lines it added are.
func (s *settingsTracker) apply(p string, e settingsEdit, seq int) {
	if len(e.added) == 0 && len(e.removed) == 0 && !e.whole {
		return
	}
	if s.lines == nil {
		s.lines, s.seq = map[string][]string{}, map[string]int{}
	}
	if _, ok := s.lines[p]; !ok {
		s.order = append(s.order, p)
	}
	gone := map[string]bool{}
	for _, l := range e.removed {
		gone[l] = true
	}
	var kept []string
	if !e.whole {
		for _, l := range s.lines[p] {
			if !gone[l] {
				kept = append(kept, l)
			}
		}
	}
	seen := map[string]bool{}
	for _, l := range kept {
		seen[l] = true
	}
	for _, l := range e.added {
		if !seen[l] {
			kept = append(kept, l)
			seen[l] = true
		}
	}
	s.lines[p] = kept
	s.seq[p] = seq
}

// summary sums up what the session set in one file: the newest settings,
// then a comment that explains them.
func (s *settingsTracker) summary(p, shown string) string {
	manifest := reManifest.MatchString(path.Base(p))
	var why string
	var set []string
	for _, l := range s.lines[p] {
		if reCommentPre.MatchString(l) {
			if c := strings.TrimSpace(reCommentPre.ReplaceAllString(l, "")); c != "" && why == "" {
				why = c
			}
			continue
		}
		if !manifest && (!reSettingLine.MatchString(l) || reNotSetting.MatchString(l)) {
			continue // a script's line in a workflow, a template: not a setting
		}
		set = append(set, shorten(strings.TrimRight(l, ","), 90))
	}
	if len(set) > 3 {
		set = set[len(set)-3:]
	}
	if len(set) == 0 {
		return ""
	}
	out := shown + ": " + strings.Join(set, "; ")
	if why != "" {
		out += " — " + why
	}
	return out
}
