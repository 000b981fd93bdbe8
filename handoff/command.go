package handoff

import (
	"path"
	"strings"
	"sync"

	"github.com/agentledger/ledger/handoff/shell"
)

// A shell command line is read just well enough to answer the handoff's
// questions: does it run tests, which command is it "the same as" (or
// narrower than) for deciding that a failure was later fixed, does its exit
// status speak for the test runner or for something piped after it, is it
// only looking around, and which files does it move, delete or write.
// Quotes and heredocs are honoured; subshells stay inside one word.

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

// A testRule tells whether a command (its words, and its first argument
// that is not a flag) runs tests.
type testRule func(w []string, sub string) bool

func always(w []string, sub string) bool  { return true }
func subTest(w []string, sub string) bool { return isTestWord(sub) }
func isTestWord(a string) bool            { return a == "test" || a == "tests" }
func argIs(ok func(string) bool) testRule {
	return func(w []string, _ string) bool { return hasArg(w, ok) }
}
func subIn(subs ...string) testRule {
	return func(_ []string, sub string) bool {
		for _, s := range subs {
			if sub == s {
				return true
			}
		}
		return false
	}
}

// testRunners are the programs that run tests, each with its rule.
var testRunners = map[string]testRule{
	// test runners themselves
	"pytest": always, "py.test": always, "jest": always, "vitest": always, "mocha": always, "rspec": always,
	"phpunit": always, "ctest": always, "tox": always, "nox": always, "bats": always, "ava": always,
	"karma": always, "unittest": always, "nosetests": always, "gotestsum": always, "ginkgo": always,
	"cargo-nextest": always, "pest": always,
	// tools whose test subcommand runs tests
	"go": subTest, "mix": subTest, "dotnet": subTest, "swift": subTest, "deno": subTest, "flutter": subTest,
	"dart": subTest, "lein": subTest, "sbt": subTest, "stack": subTest, "cabal": subTest, "bazel": subTest,
	"bazelisk": subTest, "just": subTest, "task": subTest, "rails": subTest, "richgo": subTest,
	"zig":        func(w []string, sub string) bool { return isTestWord(sub) || hasArg(w, isTestWord) },
	"cargo":      subIn("test", "t", "nextest"),
	"playwright": subIn("test"),
	"cypress":    subIn("run"),
	"rake": func(_ []string, sub string) bool {
		return sub == "test" || sub == "spec" || strings.HasPrefix(sub, "test:")
	},
	"php":   func(w []string, sub string) bool { return sub == "artisan" && hasArg(w[1:], isTestWord) },
	"make":  argIs(func(a string) bool { return a == "check" || strings.HasPrefix(a, "test") }),
	"gmake": argIs(func(a string) bool { return a == "check" || strings.HasPrefix(a, "test") }),
	"mvn": argIs(func(a string) bool {
		return a == "test" || a == "verify" || a == "integration-test" || strings.HasSuffix(a, ":test")
	}),
	"mvnw":    argIs(func(a string) bool { return a == "test" || a == "verify" || strings.HasSuffix(a, ":test") }),
	"gradle":  argIs(func(a string) bool { return a == "check" || strings.HasSuffix(strings.ToLower(a), "test") }),
	"gradlew": argIs(func(a string) bool { return a == "check" || strings.HasSuffix(strings.ToLower(a), "test") }),
	"nx":      argIs(func(a string) bool { return a == "test" || strings.HasSuffix(a, ":test") || a == "--target=test" }),
	"turbo":   argIs(func(a string) bool { return a == "test" || strings.HasSuffix(a, ":test") }),
}

func init() {
	// These rules call runsTests on the package binary they run: set here,
	// apart from the table's initializer, which they would otherwise loop
	// back into.
	for _, pm := range []string{"npm", "pnpm", "yarn"} {
		testRunners[pm] = packageScripts
	}
	testRunners["bun"] = bunTests
}

// bunTests is bun test, bun run test*, and a test runner run by bun.
func bunTests(w []string, sub string) bool {
	if len(w) > 1 && !strings.HasPrefix(w[1], "-") && w[1] != "test" && w[1] != "run" && runsTests(w[1:]) {
		return true // bun vitest: a package binary
	}
	return sub == "test" || (sub == "run" && hasArg(w[1:], func(a string) bool { return strings.HasPrefix(a, "test") }))
}

// packageScripts is npm, pnpm and yarn: their test scripts, and (pnpm,
// yarn) a test runner called as a package binary.
func packageScripts(w []string, sub string) bool {
	if path.Base(w[0]) != "npm" && len(w) > 1 && !strings.HasPrefix(w[1], "-") && runsTests(w[1:]) {
		return true // pnpm vitest run, yarn jest
	}
	if sub == "test" || sub == "t" || sub == "tst" || (path.Base(w[0]) != "npm" && strings.HasPrefix(sub, "test")) {
		return true
	}
	if sub == "run" || sub == "run-script" {
		script := firstArg(w[1:])
		return strings.HasPrefix(script, "test") || strings.HasSuffix(script, ":test")
	}
	return false
}

// runsTests reports whether one command (not a whole line) runs a test
// suite.
func runsTests(words []string) bool {
	w := shell.Program(words)
	if len(w) == 0 {
		return false
	}
	rule := testRunners[strings.TrimSuffix(path.Base(w[0]), ".exe")]
	return rule != nil && rule(w, firstArg(w))
}

// shellInfo is what ledger needs to know about a command line.
type shellInfo struct {
	// pipes is the line, parsed.
	pipes []shell.Pipeline
	// test is true when some command of the line runs tests.
	test bool
	// key names the line for deciding whether a later success resolves
	// its failure: the program and first argument of its test command, or
	// of its last real command ("git push", "mix compile").
	key string
	// scope is what the keyed command runs on, to tell a broader run
	// (go test ./...) from a narrower one (go test ./pkg -run TestX).
	scope scope
	// masked is true when the line's exit status may not be the test
	// runner's: something runs after it or is piped from it.
	masked bool
	// exploratory is true when the line only looks (grep, ls, test -f,
	// which, git status): a non-zero exit is an answer, not a failure.
	exploratory bool
}

// trivial programs do not decide what a line was for: `cmd; echo done`
// is about cmd.
var trivial = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"echo": true, "printf": true, "true": true, "false": true, ":": true,
		"exit": true, "cd": true, "export": true, "set": true, "sleep": true,
		"wait": true, "pwd": true, "clear": true}
})

// lookers only look: they exit non-zero to say "no match", "no such file"
// or "differs", which is information, not a failure of the work.
var lookers = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"grep": true, "egrep": true, "fgrep": true, "rg": true, "ag": true, "ack": true,
		"ls": true, "test": true, "[": true, "[[": true, "which": true, "type": true, "whereis": true, "command": true,
		"find": true, "fd": true, "diff": true, "cmp": true, "stat": true, "file": true, "readlink": true,
		"realpath": true, "cat": true, "head": true, "tail": true, "wc": true, "pgrep": true, "pidof": true,
		"ps": true, "lsof": true, "tree": true, "du": true, "df": true, "less": true, "more": true, "sort": true,
		"uniq": true, "cut": true, "awk": true, "sed": true, "jq": true, "xxd": true, "od": true, "env": true,
		"printenv": true, "id": true, "whoami": true, "uname": true, "date": true, "nproc": true, "free": true}
})

// gitLookers are the git subcommands that only read.
var gitLookers = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"status": true, "diff": true, "log": true, "show": true, "branch": true,
		"rev-parse": true, "ls-files": true, "remote": true, "config": true, "describe": true, "blame": true,
		"grep": true, "cat-file": true, "reflog": true, "tag": true, "shortlog": true, "ls-tree": true,
		"merge-base": true, "rev-list": true, "check-ignore": true}
})

// looks tells whether one command only looks around.
func looks(w []string) bool {
	if len(w) == 0 {
		return true
	}
	base := path.Base(w[0])
	switch base {
	case "git":
		return gitLookers()[firstArg(w)]
	case "sed":
		return !hasFlag(w, "-i") // sed -i writes
	}
	return lookers()[base] || trivial()[base]
}

func hasFlag(w []string, flag string) bool {
	for _, a := range w[1:] {
		if a == flag || (strings.HasPrefix(flag, "-") && !strings.HasPrefix(flag, "--") && strings.HasPrefix(a, flag)) {
			return true
		}
	}
	return false
}

func analyzeShell(line string) shellInfo {
	var info shellInfo
	pipes := shell.Parse(line)
	info.pipes = pipes
	testAt := -1
	var testCmd []string
	info.exploratory = len(pipes) > 0
	for i, p := range pipes {
		for _, c := range p {
			w := shell.Program(c)
			if runsTests(c) {
				info.test = true
				testAt, testCmd = i, w
			}
			if !looks(w) {
				info.exploratory = false
			}
		}
	}
	// A pipeline's status is its last command's: `make | grep error` that
	// finds nothing exits 1 and says all is well.
	if n := len(pipes); n > 0 && !info.exploratory {
		last := pipes[n-1]
		if w := shell.Program(last[len(last)-1]); len(last) > 1 && looks(w) && !runsTests(last[0]) {
			info.exploratory = true
		}
	}
	keyed := testCmd
	if keyed == nil {
		for i := len(pipes) - 1; i >= 0 && keyed == nil; i-- {
			if w := shell.Program(pipes[i][0]); len(w) > 0 && !trivial()[path.Base(w[0])] {
				keyed = w
			}
		}
	}
	if keyed != nil {
		info.scope = commandScope(keyed, info.test)
		info.key = info.scope.key
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

// A scope is what one command runs on: its program and subcommand, the
// paths (or packages, or test files) it names, and a filter that narrows
// it to some tests (-run, -k, -t, --grep, a line number).
type scope struct {
	key    string
	paths  []string
	filter string
	test   bool // a test run: its paths and filter say what it covered
}

// filterFlags take a value that narrows a run to some tests.
var filterFlags = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"-run": true, "--run": true, "-k": true, "-t": true, "--testNamePattern": true,
		"--test-name-pattern": true, "--grep": true, "-g": true, "--filter": true, "--only": true, "-e": true,
		"--example": true, "-m": true, "--match": true, "--name": true, "--test": true, "-only-testing": true}
})

// valueFlags take a value that says nothing about what runs.
var valueFlags = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"-timeout": true, "--timeout": true, "-count": true, "-p": true, "-parallel": true,
		"--reporter": true, "--seed": true, "-n": true, "--maxfail": true, "--max-failures": true, "--config": true,
		"-c": true, "--project": true, "--workers": true, "-j": true, "--jobs": true, "-tags": true, "--tags": true,
		"--features": true, "--package": true, "-C": true, "--cwd": true, "--prefix": true, "-o": true, "--out": true,
		"-coverprofile": true, "--bin": true, "-ldflags": true, "--dir": true, "--env": true, "--retries": true}
})

var reExt = lazyRegexp(`\.[A-Za-z]\w*$`)

var reLineSuffix = lazyRegexp(`^(.+\.\w+):(\d+(?::\d+)?)$`)

// commandScope reads the scope of one command (words after program). Only
// a test run has a filter: other commands' flags (git commit -m) take
// values that say nothing about what ran.
func commandScope(w []string, test bool) scope {
	if len(w) == 0 {
		return scope{}
	}
	key, rest := commandKey(w)
	s := scope{key: key, test: test}
	var filters []string
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "--":
		case strings.HasPrefix(a, "-"):
			var f string
			f, i = flagFilter(rest, i, test)
			if f != "" {
				filters = append(filters, f)
			}
		case reLineSuffix.MatchString(a): // mix test file.exs:12, rspec ./x_spec.rb:3
			m := reLineSuffix.FindStringSubmatch(a)
			s.paths = append(s.paths, cleanScopePath(m[1]))
			filters = append(filters, ":"+m[2])
		case key == "cargo test" && test && !looksLikePath(a):
			filters = append(filters, a) // cargo test NAME filters by name
		default:
			s.paths = append(s.paths, cleanScopePath(a))
		}
	}
	s.filter = strings.Join(filters, " ")
	if p := s.paths; !test && len(p) > 0 && runsFile(key) && (strings.Contains(p[0], "/") || reExt.MatchString(p[0])) &&
		!strings.ContainsAny(p[0], " *") && !strings.Contains(p[0], "...") {
		// python manage.py and python other.py are different commands;
		// git add a.txt and git add b.txt are the same one
		s.key += " " + s.paths[0]
	}
	return s
}

// runsFile tells a command whose first operand is the program it runs
// (an interpreter, go run, cargo run --bin) from one whose operands are
// what it works on.
func runsFile(key string) bool {
	prog, sub, _ := strings.Cut(key, " ")
	switch prog {
	case "python", "python3", "node", "ruby", "perl", "php", "bash", "sh", "zsh", "deno", "bun", "tsx", "ts-node",
		"elixir", "Rscript", "lua", "swift", "java", "dotnet":
		return true
	}
	return sub == "run" || sub == "exec" || strings.HasPrefix(prog, "./") || strings.Contains(prog, "/")
}

// scriptRunners take a script name after their subcommand: "npm run build"
// and "npm run lint" are different commands.
var scriptRunners = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"npm run": true, "npm run-script": true, "pnpm run": true, "pnpm exec": true,
		"yarn run": true, "bun run": true}
})

// commandKey is a command's program and subcommand ("go test", "npm run
// build"), and the words after them.
func commandKey(w []string) (string, []string) {
	key := strings.TrimSuffix(path.Base(w[0]), ".exe")
	rest := w[1:]
	if len(rest) == 0 || strings.HasPrefix(rest[0], "-") || looksLikePath(rest[0]) {
		return key, rest
	}
	key, rest = key+" "+rest[0], rest[1:]
	if scriptRunners()[key] && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		key, rest = key+" "+rest[0], rest[1:]
		if k, ok := strings.CutPrefix(key, "pnpm run "); ok {
			key = "pnpm " + k // pnpm build is pnpm run build
		} else if k, ok := strings.CutPrefix(key, "yarn run "); ok {
			key = "yarn " + k
		} else if k, ok := strings.CutPrefix(key, "bun run "); ok {
			key = "bun " + k
		}
	}
	return key, rest
}

// flagFilter reads the flag at rest[i]: for a test run, a filter flag
// (-run X, -k X, --grep X) is returned as "name=value"; a flag's value
// is skipped. It returns the index of the last word it used.
func flagFilter(rest []string, i int, test bool) (string, int) {
	name, value, hasValue := strings.Cut(rest[i], "=")
	takesValue := (valueFlags()[name] || filterFlags()[name]) && !hasValue && i+1 < len(rest)
	if takesValue {
		i++
		value = rest[i]
	}
	if filterFlags()[name] && test {
		return name + "=" + value, i
	}
	return "", i
}

func looksLikePath(a string) bool {
	return strings.ContainsAny(a, "/.*") || strings.Contains(a, "::")
}

func cleanScopePath(p string) string {
	p = strings.TrimPrefix(p, "./")
	if p != "/" {
		p = strings.TrimSuffix(p, "/")
	}
	return p
}

// covers tells whether a successful run of s also ran everything o ran,
// so that o's failure is resolved: the same command, no narrower filter,
// and paths that contain o's (go test ./... covers go test ./pkg/x -run T;
// mix test covers mix test test/x_test.exs:12).
func (s scope) covers(o scope) bool {
	if s.key == "" || s.key != o.key {
		return false
	}
	if !o.test {
		return true // git push -u origin x fixes git push
	}
	if s.filter != "" && s.filter != o.filter {
		return false
	}
	if len(s.paths) == 0 {
		return true
	}
	if len(o.paths) == 0 {
		return false
	}
	for _, op := range o.paths {
		covered := false
		for _, sp := range s.paths {
			if pathCovers(sp, op) {
				covered = true
				break
			}
		}
		if !covered {
			return false
		}
	}
	return true
}

func pathCovers(s, o string) bool {
	if s == "" || s == "." || s == "..." {
		return true
	}
	if dir, ok := strings.CutSuffix(s, "/..."); ok {
		return o == dir || strings.HasPrefix(o, dir+"/")
	}
	return o == s || strings.HasPrefix(o, s+"/") || strings.HasPrefix(o, s+"::")
}

var (
	reTrailingFilter = lazyRegexp(`\s*\|\s*(?:tail|head)(?:\s+-[nc])?(?:\s+[-+]?\d+)?\s*$`)
	reRedirAll       = lazyRegexp(`\s+2>&1\b`)
	reContinuation   = lazyRegexp(`[ \t]*\\\n\s*`)
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
