package handoff

import (
	"fmt"
	"strings"
	"sync"
)

// Errors still open at the cut. A failure stays open until something later
// shows it fixed:
//   - the same command passes again, or a broader run of it that covers it
//     (go test ./... covers go test ./pkg/x -run T; mix test covers
//     mix test test/x_test.exs:12);
//   - the same file tool call on the same file succeeds;
//   - a command the agent described the same way (a rerun) succeeds, or a
//     later successful command contains the failed one (rerun under
//     bash -c, or with more around it).
// Commands that only look (grep with no match, ls of a missing path,
// which, test -f, git status) are not failures at all.

// failure is one open error.
type failure struct {
	key   string // what must pass again: "file:<path>", a command key, "tool:<name>"
	scope scope  // for commands: what the failed run covered
	desc  string // the agent's own description of the call
	core  string // the failed command line, normalized, for containment
	text  string // the error line the handoff shows
	label string // what ran, as text shows it
	seq   int
}

type errorTracker struct {
	open []failure
}

// fail records a failure; it replaces an older failure of the same key.
func (e *errorTracker) fail(f failure) {
	e.drop(func(o failure) bool {
		return o.key == f.key && o.scope.filter == f.scope.filter && samePaths(o.scope, f.scope)
	})
	e.open = append(e.open, f)
}

// succeed resolves every open failure that a success shows fixed.
func (e *errorTracker) succeed(key string, sc scope, desc, core string) {
	e.drop(func(o failure) bool {
		switch {
		case o.key == key && (o.scope.key == "" || sc.covers(o.scope)):
			return true
		case buildCovers(key, o.key):
			return true
		case desc != "" && o.desc == desc && (len(strings.Fields(desc)) >= 3 || sameProgram(o.key, key)):
			// the agent ran "the same thing" again, its own words say so
			return true
		case len(o.core) >= 16 && core != "" && strings.Contains(core, o.core):
			return true
		}
		return false
	})
}

func (e *errorTracker) drop(match func(failure) bool) {
	kept := e.open[:0]
	for _, o := range e.open {
		if !match(o) {
			kept = append(kept, o)
		}
	}
	e.open = kept
}

// buildVerbs build a project; runVerbs build it and then do more: a
// build that failed is fixed when the same tool builds, tests or runs
// the project again without failing (cargo test builds what cargo build
// did, mix test compiles).
var (
	buildVerbs = map[string]bool{"build": true, "compile": true, "check": true, "assemble": true}
	runVerbs   = map[string]bool{"build": true, "compile": true, "check": true, "assemble": true, "test": true,
		"run": true, "t": true}
)

// buildCovers tells whether a success of key shows the failed build
// failedKey fixed.
func buildCovers(key, failedKey string) bool {
	prog, verb, ok := strings.Cut(strings.TrimPrefix(key, "cmd:"), " ")
	fprog, fverb, fok := strings.Cut(strings.TrimPrefix(failedKey, "cmd:"), " ")
	if !ok || !fok || prog != fprog || packageManagers()[prog] {
		return false
	}
	verb, _, _ = strings.Cut(verb, " ")
	fverb, _, _ = strings.Cut(fverb, " ")
	return buildVerbs[fverb] && runVerbs[verb]
}

// packageManagers run a project's scripts: their subcommands are names
// the project chose, which say nothing of what they cover.
var packageManagers = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"npm": true, "pnpm": true, "yarn": true, "bun": true, "just": true,
		"make": true, "task": true, "rake": true}
})

func sameProgram(a, b string) bool {
	pa, _, _ := strings.Cut(a, " ")
	pb, _, _ := strings.Cut(b, " ")
	return pa == pb
}

func samePaths(a, b scope) bool {
	if len(a.paths) != len(b.paths) {
		return false
	}
	for i := range a.paths {
		if a.paths[i] != b.paths[i] {
			return false
		}
	}
	return true
}

// isOpen tells whether the failure at message index seq is still open.
func (e *errorTracker) isOpen(seq int) bool {
	for _, f := range e.open {
		if f.seq == seq {
			return true
		}
	}
	return false
}

// texts lists the open errors' lines, oldest first. Failures that say
// the same thing (four commands refused for want of a password) are one
// line, at the place of the latest, naming the commands.
func (e *errorTracker) texts() []string {
	var out []string
	seen := map[string]bool{}
	for i, f := range e.open {
		detail := f.detail()
		if detail == "" {
			out = appendUnique(out, seen, f.text)
			continue
		}
		later := false
		for _, g := range e.open[i+1:] {
			if g.detail() == detail {
				later = true
				break
			}
		}
		if later {
			continue
		}
		var labels []string
		for _, g := range e.open[:i+1] {
			if g.detail() == detail {
				labels = appendUnique(labels, map[string]bool{}, g.label)
			}
		}
		if len(labels) == 1 {
			out = appendUnique(out, seen, f.text)
			continue
		}
		names := labels[max(len(labels)-2, 0):]
		s := strings.Join(names, ", ")
		if more := len(labels) - len(names); more > 0 {
			s += fmt.Sprintf(" and %d more", more)
		}
		out = appendUnique(out, seen, shorten(oneLine(s+": "+detail), maxError))
	}
	return out
}

// detail is what a failure's line says after naming what ran; "" when it
// says only that it failed.
func (f failure) detail() string {
	if f.label == "" {
		return ""
	}
	d, ok := strings.CutPrefix(f.text, f.label+": ")
	if !ok {
		return ""
	}
	return d
}

// errorText is the line an error gets: what ran, then what failed.
func errorText(label, output string, test bool, sc scope) string {
	dir := ""
	if len(sc.paths) == 1 && !strings.Contains(sc.paths[0], "...") && !reExt.MatchString(sc.paths[0]) {
		dir = sc.paths[0]
	}
	msg := label + " failed"
	if detail := describeFailure(output, test, dir); detail != "" {
		msg = label + ": " + detail
	}
	msg = oneLine(msg)
	// The error's class names it where its message does not
	// (CommandNotFoundException on a PowerShell error's last lines).
	if name := errorClass(output); name != "" && !strings.Contains(msg, name) {
		return shorten(msg, maxError-len(name)-3) + " (" + name + ")"
	}
	return shorten(msg, maxError)
}

var reErrorClass = lazyRegexp(`\b[A-Z][A-Za-z0-9]*(?:Error|Exception)\b`)

// errorClass is the first error or exception class an output names
// (TypeError, CommandNotFoundException), read at its two ends.
func errorClass(output string) string {
	const end = 4096
	first := func(s string) string {
		for _, m := range reErrorClass.FindAllString(s, 8) {
			if m != "Error" && m != "Exception" {
				return m
			}
		}
		return ""
	}
	if len(output) > 2*end {
		if m := first(output[:end]); m != "" {
			return m
		}
		output = output[len(output)-end:]
	}
	return first(output)
}

// commandLabel names a command line in an error: the whole (normalized)
// line when it is short; else, for a test run, the runner and what it ran;
// else the command and its first operand.
func commandLabel(cmd string, sc scope, test bool) string {
	if len([]rune(cmd)) <= 60 || sc.key == "" {
		return "`" + shorten(oneLine(cmd), maxLabel) + "`"
	}
	label := sc.key
	switch {
	case test:
		if len(sc.paths) > 0 {
			label += " " + strings.Join(sc.paths, " ")
		}
		if sc.filter != "" {
			label += " " + sc.filter
		}
	case len(sc.paths) > 0 && len(sc.paths[0]) <= 40 && !strings.ContainsAny(sc.paths[0], " \n"):
		label += " " + sc.paths[0]
	}
	return "`" + shorten(label, maxLabel) + "`"
}
