package handoff

import (
	"encoding/json"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// A shell command line is read just well enough to answer three questions:
// does it run tests, which command is it "the same as" for deciding that a
// failure was later fixed, and does its exit status speak for the test
// runner or for something piped after it. Quotes are honoured; heredocs and
// subshells are not parsed (they stay inside one segment).

// pipeline is one command list element: commands joined by pipes.
type pipeline [][]string

// parseShell splits a command line into pipelines (separated by &&, ||, ;,
// & and newlines) of commands (separated by |), each a list of words with
// quotes removed.
func parseShell(line string) []pipeline {
	var (
		out   []pipeline
		cur   pipeline
		words []string
		word  strings.Builder
		inW   bool // a word has started (possibly empty: "")
		depth int  // ( ) nesting, $( ) included
	)
	endWord := func() {
		if inW {
			words = append(words, word.String())
			word.Reset()
			inW = false
		}
	}
	endCmd := func() {
		endWord()
		if len(words) > 0 {
			cur = append(cur, words)
		}
		words = nil
	}
	endPipe := func() {
		endCmd()
		if len(cur) > 0 {
			out = append(out, cur)
		}
		cur = nil
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\' && i+1 < len(line):
			if line[i+1] == '\n' { // line continuation
				i++
				endWord()
				continue
			}
			word.WriteByte(line[i+1])
			inW = true
			i++
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				word.WriteString(line[i+1:])
				i = len(line)
			} else {
				word.WriteString(line[i+1 : i+1+j])
				i += j + 1
			}
			inW = true
		case c == '"':
			j := i + 1
			for j < len(line) && line[j] != '"' {
				if line[j] == '\\' && j+1 < len(line) {
					j++
				}
				j++
			}
			word.WriteString(strings.ReplaceAll(line[i+1:min(j, len(line))], `\"`, `"`))
			i = j
			inW = true
		case c == '(':
			depth++
			word.WriteByte(c)
			inW = true
		case c == ')':
			if depth > 0 {
				depth--
			}
			word.WriteByte(c)
			inW = true
		case depth > 0:
			word.WriteByte(c)
			inW = true
		case c == ' ' || c == '\t':
			endWord()
		case c == '\n' || c == ';':
			endPipe()
		case c == '&':
			if i+1 < len(line) && line[i+1] == '&' {
				endPipe()
				i++
			} else if (i > 0 && (line[i-1] == '>' || line[i-1] == '<')) || (i+1 < len(line) && line[i+1] == '>') {
				word.WriteByte(c) // redirection: 2>&1, &>file
				inW = true
			} else {
				endPipe() // background
			}
		case c == '|':
			if i+1 < len(line) && line[i+1] == '|' {
				endPipe()
				i++
			} else {
				endCmd()
				if i+1 < len(line) && line[i+1] == '&' {
					i++
				}
			}
		default:
			word.WriteByte(c)
			inW = true
		}
	}
	endPipe()
	return out
}

var envAssign = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// program strips what only runs another command (environment assignments,
// time, timeout, npx, bundle exec, python -m, ...) and returns the words of
// the command that does the work. Redirections are dropped.
func program(words []string) []string {
	var w []string
	for _, x := range words {
		if isRedirect(x) {
			continue
		}
		w = append(w, x)
	}
	for len(w) > 0 {
		switch base := path.Base(w[0]); {
		case envAssign.MatchString(w[0]):
			w = w[1:]
		case base == "env" || base == "time" || base == "sudo" || base == "nohup" || base == "nice" ||
			base == "command" || base == "exec" || base == "xvfb-run" || base == "npx" || base == "bunx" ||
			base == "pnpx" || base == "dotenv":
			w = w[1:]
			for len(w) > 0 && (strings.HasPrefix(w[0], "-") || envAssign.MatchString(w[0])) {
				w = w[1:]
			}
		case base == "timeout":
			w = w[1:]
			for len(w) > 0 && strings.HasPrefix(w[0], "-") {
				w = w[1:]
			}
			if len(w) > 0 {
				w = w[1:] // the duration
			}
		case (base == "bundle" || base == "pnpm" || base == "poetry" || base == "uv" || base == "pipenv" ||
			base == "hatch" || base == "pdm") && len(w) > 1 && (w[1] == "exec" || w[1] == "run") &&
			!(base == "pnpm" && w[1] == "run"):
			w = w[2:]
		case strings.HasPrefix(base, "python") && len(w) > 2 && w[1] == "-m":
			w = w[2:]
		default:
			return w
		}
	}
	return w
}

func isRedirect(w string) bool {
	return w == "2>&1" || w == "1>&2" || w == "&>/dev/null" || w == ">/dev/null" || w == "2>/dev/null" ||
		strings.HasPrefix(w, ">") || strings.HasPrefix(w, "2>") || strings.HasPrefix(w, "&>")
}

// firstArg is the first argument of w that is not a flag.
func firstArg(w []string) string {
	for _, a := range w[1:] {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

func hasArg(w []string, ok func(string) bool) bool {
	for _, a := range w[1:] {
		if !strings.HasPrefix(a, "-") && ok(a) {
			return true
		}
	}
	return false
}

// runsTests reports whether one command (not a whole line) runs a test
// suite.
func runsTests(words []string) bool {
	w := program(words)
	if len(w) == 0 {
		return false
	}
	base := strings.TrimSuffix(path.Base(w[0]), ".exe")
	sub := firstArg(w)
	isTest := func(a string) bool { return a == "test" || a == "tests" }
	switch base {
	case "pytest", "py.test", "jest", "vitest", "mocha", "rspec", "phpunit", "ctest", "tox", "nox", "bats",
		"ava", "karma", "unittest", "nosetests", "gotestsum", "ginkgo", "cargo-nextest", "pest":
		return true
	case "go", "mix", "dotnet", "swift", "deno", "flutter", "dart", "lein", "sbt", "stack", "cabal",
		"bazel", "bazelisk", "just", "task", "rails", "richgo", "zig":
		return isTest(sub) || (base == "zig" && hasArg(w, isTest))
	case "cargo":
		return sub == "test" || sub == "t" || sub == "nextest"
	case "bun":
		if len(w) > 1 && !strings.HasPrefix(w[1], "-") && w[1] != "test" && w[1] != "run" && runsTests(w[1:]) {
			return true
		}
		return sub == "test" || (sub == "run" && hasArg(w[1:], func(a string) bool { return strings.HasPrefix(a, "test") }))
	case "npm", "pnpm", "yarn":
		if base != "npm" && len(w) > 1 && !strings.HasPrefix(w[1], "-") && runsTests(w[1:]) {
			return true // pnpm vitest run, yarn jest: a package binary
		}
		if sub == "test" || sub == "t" || sub == "tst" || (base != "npm" && strings.HasPrefix(sub, "test")) {
			return true
		}
		if sub == "run" || sub == "run-script" {
			script := firstArg(w[1:])
			return strings.HasPrefix(script, "test") || strings.HasSuffix(script, ":test")
		}
	case "make", "gmake":
		return hasArg(w, func(a string) bool { return a == "check" || strings.HasPrefix(a, "test") })
	case "mvn", "mvnw":
		return hasArg(w, func(a string) bool {
			return a == "test" || a == "verify" || a == "integration-test" || strings.HasSuffix(a, ":test")
		})
	case "gradle", "gradlew":
		return hasArg(w, func(a string) bool { return a == "check" || strings.HasSuffix(strings.ToLower(a), "test") })
	case "rake":
		return sub == "test" || sub == "spec" || strings.HasPrefix(sub, "test:")
	case "playwright":
		return sub == "test"
	case "cypress":
		return sub == "run"
	case "php":
		return sub == "artisan" && hasArg(w[1:], isTest)
	case "nx", "turbo":
		return hasArg(w, func(a string) bool { return a == "test" || strings.HasSuffix(a, ":test") || a == "--target=test" })
	}
	return false
}

// shellInfo is what ledger needs to know about a command line.
type shellInfo struct {
	// test is true when some command of the line runs tests.
	test bool
	// key names the line for deciding whether a later success resolves
	// its failure: the program and first argument of its last real
	// command ("git push", "mix compile").
	key string
	// masked is true when the line's exit status may not be the test
	// runner's: something runs after it or is piped from it.
	masked bool
}

// trivial programs do not decide what a line was for: `cmd; echo done`
// is about cmd.
var trivial = map[string]bool{"echo": true, "printf": true, "true": true, "false": true, ":": true,
	"exit": true, "cd": true, "export": true, "source": true, ".": true, "set": true, "sleep": true,
	"wait": true, "pwd": true, "clear": true}

func analyzeShell(line string) shellInfo {
	var info shellInfo
	pipes := parseShell(line)
	testAt := -1
	for i, p := range pipes {
		for _, c := range p {
			if runsTests(c) {
				info.test = true
				testAt = i
			}
		}
	}
	for i := len(pipes) - 1; i >= 0; i-- {
		w := program(pipes[i][0])
		if len(w) == 0 || trivial[path.Base(w[0])] {
			continue
		}
		info.key = path.Base(w[0])
		if a := firstArg(w); a != "" {
			info.key += " " + a
			// "npm run build" and "npm run lint" are different commands.
			switch info.key {
			case "npm run", "npm run-script", "pnpm run", "pnpm exec", "yarn run", "bun run":
				if b := firstArg(w[1:]); b != "" {
					info.key += " " + b
				}
			}
		}
		break
	}
	if info.key == "" {
		info.key = oneLine(line)
	}
	if info.test {
		last := pipes[testAt]
		info.masked = testAt != len(pipes)-1 || len(last) > 1
	}
	return info
}

var (
	reTrailingFilter = regexp.MustCompile(`\s*\|\s*(?:tail|head)(?:\s+-[nc])?(?:\s+[-+]?\d+)?\s*$`)
	reRedirAll       = regexp.MustCompile(`\s+2>&1\b`)
	reContinuation   = regexp.MustCompile(`[ \t]*\\\n\s*`)
)

// normCommand is the command line as a handoff shows it: on one line,
// without the noise agents add to keep output short (2>&1, | tail -30) and
// without a leading cd into the project itself. Two runs that differ only
// by that noise are the same test command.
func normCommand(line, project string) string {
	line = reContinuation.ReplaceAllString(clean(line), " ")
	var b strings.Builder
	for _, l := range strings.Split(line, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if b.Len() > 0 {
			prev := b.String()
			if strings.HasSuffix(prev, "&&") || strings.HasSuffix(prev, "||") || strings.HasSuffix(prev, "|") ||
				strings.HasSuffix(prev, ";") {
				b.WriteByte(' ')
			} else {
				b.WriteString("; ")
			}
		}
		b.WriteString(l)
	}
	line = reRedirAll.ReplaceAllString(b.String(), "")
	for {
		next := reTrailingFilter.ReplaceAllString(line, "")
		if next == line {
			break
		}
		line = next
	}
	if project != "" {
		for _, q := range []string{project, `"` + project + `"`, `'` + project + `'`} {
			if rest, ok := strings.CutPrefix(line, "cd "+q+" && "); ok {
				line = rest
				break
			}
		}
	}
	return strings.TrimSpace(line)
}

// An outcome is what a tool result says about the command that produced it.
type outcome struct {
	exit      int
	exitKnown bool
	// background is the id of a command still running in the background.
	background string
	// text is the result's text with terminal escapes and wrappers
	// (Codex JSON envelopes) removed.
	text string
}

var (
	reExitLine    = regexp.MustCompile(`(?m)^(?:Exit code:?|Process exited with code) (-?\d+)\s*$`)
	reExitTag     = regexp.MustCompile(`<exit_code>(-?\d+)</exit_code>`)
	reExitParen   = regexp.MustCompile(`\(exit code (-?\d+)\)`)
	reBackground  = regexp.MustCompile(`(?:running in background with ID|Process running with session ID):? *([\w-]+)`)
	reStatusTag   = regexp.MustCompile(`<status>(\w+)</status>`)
	reTaskID      = regexp.MustCompile(`<task-id>([\w-]+)</task-id>`)
	reFailCount   = regexp.MustCompile(`(?i)\b[1-9]\d* (?:failures?|failed|failing|errors?)\b`)
	reFailField   = regexp.MustCompile(`(?i)\b(?:failures|errors|failed): *[1-9]`)
	reFailMarkers = regexp.MustCompile(`(?m)^\s*(?:--- )?FAIL\b|\bFAILED\b|^error(?:\[E\d+\])?:|^npm (?:ERR!|error)|` +
		`^make(?:\[\d+\])?: \*\*\* .*Error \d+|^\*\* \(\w+Error\)|^panic: |^Exit code [1-9]`)
)

// readOutcome reads a tool result's text.
func readOutcome(text string) outcome {
	var o outcome
	text = stripANSI(text)
	// Older Codex shell outputs are JSON: {"output": ..., "metadata": {"exit_code": n}}.
	if t := strings.TrimSpace(text); strings.HasPrefix(t, "{") && strings.Contains(t, `"exit_code"`) {
		var env struct {
			Output   string `json:"output"`
			Metadata struct {
				ExitCode *int `json:"exit_code"`
			} `json:"metadata"`
		}
		if json.Unmarshal([]byte(t), &env) == nil && env.Metadata.ExitCode != nil {
			o.exit, o.exitKnown = *env.Metadata.ExitCode, true
			text = env.Output
		}
	}
	o.text = text
	if !o.exitKnown {
		for _, re := range []*regexp.Regexp{reExitLine, reExitTag, reExitParen} {
			if m := re.FindStringSubmatch(text); m != nil {
				o.exit, _ = strconv.Atoi(m[1])
				o.exitKnown = true
				break
			}
		}
	}
	if !o.exitKnown {
		if m := reBackground.FindStringSubmatch(text); m != nil {
			o.background = m[1]
		}
	}
	return o
}

// testFailed reads a test runner's output for a failure its exit status may
// hide.
func testFailed(text string) bool {
	return reFailCount.MatchString(text) || reFailField.MatchString(text) || reFailMarkers.MatchString(text)
}

// envelope lines carry no information about what went wrong.
var reEnvelope = regexp.MustCompile(`^(?:Exit code:? -?\d+|Process exited with code -?\d+|Chunk ID:.*|Wall time:.*|` +
	`Original token count:.*|Output:|Total output lines:.*|</?tool_use_error>|<retrieval_status>.*|<task_id>.*|` +
	`<task_type>.*|<status>.*|<exit_code>.*|</?output>|</?stdout>|</?stderr>)$`)

var reErrorWords = regexp.MustCompile(`(?i)error|fatal|fail|denied|not found|no such|cannot|can't|unable|invalid|panic|exception|refused|timed? ?out`)

// errorLine picks the line of a failed tool's output that best says what
// went wrong: for tests the runner's summary, else the first line that
// sounds like an error, else the first line.
func errorLine(text string, test bool) string {
	// The head says what went wrong for most tools; a test runner sums up
	// at the end. Huge outputs are read at both ends only.
	all := strings.Split(text, "\n")
	if len(all) > 400 {
		all = append(all[:200:200], all[len(all)-200:]...)
	}
	var lines []string
	for _, l := range all {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSuffix(strings.TrimSpace(l), "</tool_use_error>"), "<tool_use_error>"))
		if l == "" || reEnvelope.MatchString(l) {
			continue
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		return ""
	}
	if test {
		for i := len(lines) - 1; i >= 0; i-- {
			if reFailCount.MatchString(lines[i]) || reFailField.MatchString(lines[i]) {
				return lines[i]
			}
		}
		for _, l := range lines {
			if reFailMarkers.MatchString(l) {
				return l
			}
		}
	}
	for _, l := range lines {
		if reErrorWords.MatchString(l) {
			return l
		}
	}
	return lines[0]
}
