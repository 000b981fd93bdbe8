package handoff

import (
	"fmt"
	"strings"
)

// A failed run is summed up in one line that says what failed: the failing
// tests by name and place for the test runners agents use, the first
// compiler error with its place, the check a pre-commit hook reports, and
// the message. Never a literal "\n", never a bare "1 failing".

// failedItem is one failing test or one error a tool reported.
type failedItem struct {
	name string // a test name; "" for a compiler error
	loc  string // file:line
	msg  string
}

// A failureReader reads the failures of one kind of output from its
// trimmed, non-empty lines.
type failureReader func(lines []string) []failedItem

// failureReaders are tried in order; the first that finds anything wins.
var failureReaders = []failureReader{
	goTestFailures, pytestFailures, playwrightFailures, vitestFailures, jestFailures, mochaFailures,
	exunitFailures, cargoTestFailures, rspecFailures, tscErrors, rustcErrors, dialyzerErrors, goBuildErrors,
	credoIssues, locatedErrors,
}

var (
	reGoFail        = lazyRegexp(`^--- FAIL: (\S+)`)
	reGoTestLoc     = lazyRegexp(`^(\S+_test\.go:\d+): (.+)$`)
	rePytestFailed  = lazyRegexp(`^(?:FAILED|ERROR) (\S+?)(?: - (.+))?$`)
	reJestBullet    = lazyRegexp(`^● (.+ › .+)$`)
	reJSAt          = lazyRegexp(`\(([^()\s]+\.(?:[cm]?[jt]sx?):\d+:\d+)\)`)
	reVitestFail    = lazyRegexp(`^(?:FAIL|×|✗|❯)\s+(\S+\.(?:test|spec)\.[cm]?[jt]sx?)\s+>\s+(.+?)(?:\s+\d+ms)?$`)
	reVitestLoc     = lazyRegexp(`^❯ (\S+:\d+:\d+)$`)
	reMochaFailing  = lazyRegexp(`^\d+ failing$`)
	reMochaItem     = lazyRegexp(`^(\d+)\) (.+)$`)
	rePlaywright    = lazyRegexp(`^\d+\) \[[^\]]+\] › (\S+:\d+:\d+) › (.+?)[\s─]*$`)
	reExUnitTest    = lazyRegexp(`^\d+\) test (.+) \(([\w.]+)\)$`)
	reExUnitLoc     = lazyRegexp(`^(\S+\.exs:\d+)$`)
	reCargoStdout   = lazyRegexp(`^---- (\S+) stdout ----$`)
	rePanickedAt    = lazyRegexp(`panicked at (\S+:\d+:\d+)`)
	reRspecExample  = lazyRegexp(`^rspec (\./\S+:\d+) # (.+)$`)
	reTscParen      = lazyRegexp(`^(\S+\.[cm]?tsx?)\((\d+),(\d+)\): error (TS\d+): (.+)$`)
	reTscColon      = lazyRegexp(`^(\S+\.[cm]?tsx?):(\d+):(\d+) - error (TS\d+): (.+)$`)
	reRustError     = lazyRegexp(`^error(?:\[E\d+\])?: (.+)$`)
	reRustLoc       = lazyRegexp(`^--> (\S+:\d+:\d+)$`)
	reDialyzer      = lazyRegexp(`^(\S+\.(?:exs?|erl)):(\d+)(?::(\d+))?:(\w+)$`)
	reGoBuild       = lazyRegexp(`^(\S+\.go):(\d+):(\d+): (.+)$`)
	reCredoIssue    = lazyRegexp(`^\[[A-Z]\] [↗→↘↑↓] (.+)$`)
	reCredoLoc      = lazyRegexp(`^(\S+\.exs?:\d+(?::\d+)?)`)
	reLocated       = lazyRegexp(`^(?:\*\* \(\w+\) )?(\S+\.\w{1,5}):(\d+)(?::(\d+))?:? (.+)$`)
	reCheckMarker   = lazyRegexp(`^\[([A-Z][A-Z0-9_ -]{1,30})\](?:\s+(.+))?$`)
	reErrorWords    = lazyRegexp(`(?i)error|fatal|fail|denied|not found|no such|cannot|can't|unable|invalid|panic|exception|refused|timed? ?out|never match|not recognized`)
	reSummaryCount  = lazyRegexp(`(?i)\b[1-9]\d* (?:failures?|failed|failing|errors?)\b`)
	reSummaryField  = lazyRegexp(`(?i)\b(?:failures|errors|failed): *[1-9]`)
	reBoxDrawing    = lazyRegexp(`^[┃│|]\s*`)
	reTruncatedNote = lazyRegexp(`^\[Output truncated.*\]$`)
)

// envelope lines carry no information about what went wrong.
var reEnvelope = lazyRegexp(`^(?:Exit code:? -?\d+|Process exited with code -?\d+|Chunk ID:.*|Wall time:.*|` +
	`Original token count:.*|Output:|Total output lines:.*|</?tool_use_error>|<retrieval_status>.*|<task_id>.*|` +
	`<task_type>.*|<status>.*|<exit_code>.*|</?output>|</?stdout>|</?stderr>)$`)

// failureLines are the meaningful lines of a tool's output: trimmed,
// without envelopes, box drawing or empty lines. An output that escaped
// its newlines ("\n" as two characters) is split on them too. Huge outputs
// are read at both ends only: the head says what went wrong for most
// tools, a test runner sums up at the end.
func failureLines(text string) []string {
	if strings.Contains(text, `\n`) {
		text = strings.ReplaceAll(text, `\n`, "\n")
	}
	all := strings.Split(text, "\n")
	if len(all) > 600 {
		all = append(all[:300:300], all[len(all)-300:]...)
	}
	var lines []string
	for _, l := range all {
		l = strings.TrimSpace(l)
		l = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(l, "<tool_use_error>"), "</tool_use_error>"))
		l = strings.TrimSpace(reBoxDrawing.ReplaceAllString(l, ""))
		if l == "" || reEnvelope.MatchString(l) || reTruncatedNote.MatchString(l) {
			continue
		}
		lines = append(lines, l)
	}
	return lines
}

// describeFailure sums up a failed tool's output in one line: the first
// line that says it failed, the checks a wrapper names ([DIALYZER]), then
// the failing tests or errors with their places and the first message.
//
// dir is the folder the command ran its tests in, when it names exactly
// one: go test prints bare file names, which it makes whole.
func describeFailure(text string, test bool, dir string) string {
	lines := failureLines(text)
	if len(lines) == 0 {
		return ""
	}
	var items []failedItem
	for _, read := range failureReaders {
		if items = read(lines); len(items) > 0 {
			break
		}
	}
	for i, it := range items {
		if dir != "" && it.name != "" && it.loc != "" && !strings.Contains(it.loc, "/") && strings.Contains(it.loc, "_test.go:") {
			items[i].loc = dir + "/" + it.loc
		}
	}
	if len(items) == 0 {
		h := headlineOf(lines, test)
		if checks := checkMarkers(lines); checks != "" && !strings.Contains(h, checks) {
			h = strings.TrimSuffix(h, ":") + ": " + checks
		}
		return h
	}
	var b strings.Builder
	if h := contextLine(lines, items); h != "" {
		b.WriteString(strings.TrimSuffix(h, ":") + ": ")
	}
	if checks := checkMarkers(lines); checks != "" {
		b.WriteString(checks + " ")
	}
	if len(items) > 1 && items[0].name != "" {
		fmt.Fprintf(&b, "%d failed: ", len(items))
	}
	for i, it := range items {
		if i == 3 {
			fmt.Fprintf(&b, ", +%d more", len(items)-3)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(it.String())
	}
	if items[0].name != "" {
		for _, it := range items {
			if it.msg != "" {
				b.WriteString(" — " + it.msg)
				break
			}
		}
	}
	return oneLine(b.String())
}

// contextLine is what goes before the failures themselves: for failing
// tests nothing (their names say it), for errors the first line that says
// something failed when it is not one of the errors (a wrapper's
// "Pre-commit validation failed").
func contextLine(lines []string, items []failedItem) string {
	if items[0].name != "" {
		return ""
	}
	for _, l := range lines {
		if !reErrorWords.MatchString(l) {
			continue
		}
		for _, it := range items {
			if (it.loc != "" && strings.Contains(l, it.loc)) || (it.msg != "" && strings.Contains(l, it.msg)) {
				return ""
			}
		}
		return l
	}
	return ""
}

func (it failedItem) String() string {
	switch {
	case it.name != "" && it.loc != "":
		return it.name + " (" + it.loc + ")"
	case it.name != "":
		return it.name
	case it.loc != "" && it.msg != "":
		return it.loc + ": " + it.msg
	}
	return it.loc + it.msg
}

// headlineOf is the line that best says a run failed: a test runner's
// summary (the last one), else the first line that sounds like an error.
func headlineOf(lines []string, test bool) string {
	if test {
		for i := len(lines) - 1; i >= 0; i-- {
			if reSummaryCount.MatchString(lines[i]) || reSummaryField.MatchString(lines[i]) {
				return lines[i]
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

// checkMarkers lists the "[NAME]" lines a wrapper (a pre-commit script)
// prints before each check's output.
func checkMarkers(lines []string) string {
	var out []string
	seen := map[string]bool{}
	for _, l := range lines {
		if m := reCheckMarker.FindStringSubmatch(l); m != nil {
			s := "[" + m[1] + "]"
			if m[2] != "" {
				s += " " + m[2] // "[GOFMT] x.go is not gofmt-formatted."
			}
			out = appendUnique(out, seen, s)
		}
	}
	return strings.Join(out, " ")
}

func goTestFailures(lines []string) []failedItem {
	var out []failedItem
	for i, l := range lines {
		m := reGoFail.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		it := failedItem{name: m[1]}
		// The test's log follows its FAIL line; with -v it comes before it.
		if i+1 < len(lines) {
			if loc := reGoTestLoc.FindStringSubmatch(lines[i+1]); loc != nil {
				it.loc, it.msg = loc[1], loc[2]
			}
		}
		for j := i - 1; it.loc == "" && j >= 0 && j >= i-5 && !strings.HasPrefix(lines[j], "=== RUN"); j-- {
			if loc := reGoTestLoc.FindStringSubmatch(lines[j]); loc != nil {
				it.loc, it.msg = loc[1], loc[2]
			}
		}
		out = append(out, it)
	}
	// A parent test fails with its subtests: keep the most precise names.
	var kept []failedItem
	for i, it := range out {
		parent := false
		for _, o := range out[i+1:] {
			if strings.HasPrefix(o.name, it.name+"/") {
				parent = true
				break
			}
		}
		if !parent {
			kept = append(kept, it)
		}
	}
	return kept
}

func pytestFailures(lines []string) []failedItem {
	var out []failedItem
	for _, l := range lines {
		if m := rePytestFailed.FindStringSubmatch(l); m != nil && strings.Contains(m[1], "::") {
			name := m[1]
			loc := ""
			if file, test, ok := strings.Cut(name, "::"); ok {
				name, loc = test, file
				if line := pytestLine(lines, file, test); line != "" {
					loc += ":" + line
				}
			}
			out = append(out, failedItem{name: name, loc: loc, msg: m[2]})
		}
	}
	return out
}

var (
	rePytestSection = lazyRegexp(`^_{3,} (\S+) _{3,}$`)
	rePytestWhere   = lazyRegexp(`^(\S+\.py):(\d+): `)
)

// pytestLine finds where a test failed: the "file:line: Error" line of its
// section of the traceback, else the first one of its file.
func pytestLine(lines []string, file, test string) string {
	base := test
	if i := strings.IndexByte(base, '['); i > 0 {
		base = base[:i]
	}
	in, first := false, ""
	for _, l := range lines {
		if m := rePytestSection.FindStringSubmatch(l); m != nil {
			in = strings.TrimSuffix(strings.SplitN(m[1], "[", 2)[0], "") == base || m[1] == test
			continue
		}
		if m := rePytestWhere.FindStringSubmatch(l); m != nil && (m[1] == file || strings.HasSuffix(file, "/"+m[1])) {
			if in {
				return m[2]
			}
			if first == "" {
				first = m[2]
			}
		}
	}
	return first
}

func jestFailures(lines []string) []failedItem {
	var out []failedItem
	for i, l := range lines {
		m := reJestBullet.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		it := failedItem{name: m[1]}
		for _, next := range lines[i+1 : min(i+30, len(lines))] {
			if reJestBullet.MatchString(next) {
				break
			}
			if it.msg == "" && !strings.HasPrefix(next, "at ") && !strings.HasPrefix(next, ">") {
				it.msg = next
			}
			if at := reJSAt.FindStringSubmatch(next); at != nil && !strings.Contains(next, "node_modules") {
				it.loc = at[1]
				break
			}
		}
		out = append(out, it)
	}
	return out
}

func vitestFailures(lines []string) []failedItem {
	var out []failedItem
	seen := map[string]bool{}
	for i, l := range lines {
		m := reVitestFail.FindStringSubmatch(l)
		if m == nil || seen[m[2]] {
			continue
		}
		seen[m[2]] = true
		it := failedItem{name: m[2], loc: m[1]}
		for _, next := range lines[i+1 : min(i+30, len(lines))] {
			if reVitestFail.MatchString(next) {
				break
			}
			if it.msg == "" && reErrorWords.MatchString(next) {
				it.msg = next
			}
			// The test file's own frame, not a library's.
			if loc := reVitestLoc.FindStringSubmatch(next); loc != nil && !strings.Contains(loc[1], "node_modules/") &&
				strings.HasPrefix(loc[1], m[1]+":") {
				it.loc = loc[1]
				break
			}
		}
		out = append(out, it)
	}
	return out
}

func mochaFailures(lines []string) []failedItem {
	start := -1
	for i, l := range lines {
		if reMochaFailing.MatchString(l) {
			start = i + 1
			break
		}
	}
	if start < 0 {
		return nil
	}
	var out []failedItem
	for i := start; i < len(lines); i++ {
		m := reMochaItem.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		// "1) Suite" then "test name:" lines up to the one ending in ':'.
		name := strings.TrimSuffix(m[2], ":")
		j := i + 1
		for ; j < len(lines) && !strings.HasSuffix(m[2], ":") && j < i+4; j++ {
			name += " " + strings.TrimSuffix(lines[j], ":")
			if strings.HasSuffix(lines[j], ":") {
				j++
				break
			}
		}
		it := failedItem{name: name}
		if j < len(lines) {
			it.msg = lines[j]
		}
		for _, next := range lines[j:min(j+10, len(lines))] {
			if at := reJSAt.FindStringSubmatch(next); at != nil && !strings.Contains(next, "node_modules") {
				it.loc = at[1]
				break
			}
		}
		out = append(out, it)
		i = j
	}
	return out
}

func playwrightFailures(lines []string) []failedItem {
	var out []failedItem
	seen := map[string]bool{}
	for i, l := range lines {
		m := rePlaywright.FindStringSubmatch(l)
		if m == nil || seen[m[1]] {
			continue
		}
		seen[m[1]] = true
		it := failedItem{name: m[2], loc: m[1]}
		if i+1 < len(lines) {
			it.msg = lines[i+1]
		}
		out = append(out, it)
	}
	return out
}

func exunitFailures(lines []string) []failedItem {
	var out []failedItem
	for i, l := range lines {
		m := reExUnitTest.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		it := failedItem{name: "test " + m[1]}
		if i+1 < len(lines) {
			if loc := reExUnitLoc.FindStringSubmatch(lines[i+1]); loc != nil {
				it.loc = loc[1]
				if i+2 < len(lines) {
					it.msg = lines[i+2]
				}
			}
		}
		out = append(out, it)
	}
	return out
}

func cargoTestFailures(lines []string) []failedItem {
	var out []failedItem
	for i, l := range lines {
		m := reCargoStdout.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		it := failedItem{name: m[1]}
		for j, next := range lines[i+1 : min(i+6, len(lines))] {
			if p := rePanickedAt.FindStringSubmatch(next); p != nil {
				it.loc = strings.TrimSuffix(p[1], ":")
				if k := i + 2 + j; k < len(lines) {
					it.msg = lines[k]
				}
				break
			}
		}
		out = append(out, it)
	}
	return out
}

func rspecFailures(lines []string) []failedItem {
	var out []failedItem
	for _, l := range lines {
		if m := reRspecExample.FindStringSubmatch(l); m != nil {
			out = append(out, failedItem{name: m[2], loc: strings.TrimPrefix(m[1], "./")})
		}
	}
	return out
}

func tscErrors(lines []string) []failedItem {
	var out []failedItem
	for _, l := range lines {
		m := reTscParen.FindStringSubmatch(l)
		if m == nil {
			m = reTscColon.FindStringSubmatch(l)
		}
		if m != nil {
			out = append(out, failedItem{loc: m[1] + ":" + m[2] + ":" + m[3], msg: m[4] + ": " + m[5]})
		}
	}
	return out
}

func rustcErrors(lines []string) []failedItem {
	var out []failedItem
	for i, l := range lines {
		m := reRustError.FindStringSubmatch(l)
		if m == nil || strings.HasPrefix(m[1], "could not compile") || strings.HasPrefix(m[1], "aborting") {
			continue
		}
		for _, next := range lines[i+1 : min(i+3, len(lines))] {
			if loc := reRustLoc.FindStringSubmatch(next); loc != nil {
				out = append(out, failedItem{loc: loc[1], msg: m[1]})
				break
			}
		}
	}
	return out
}

func dialyzerErrors(lines []string) []failedItem {
	var out []failedItem
	for i, l := range lines {
		m := reDialyzer.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		loc := m[1] + ":" + m[2]
		if m[3] != "" {
			loc += ":" + m[3]
		}
		it := failedItem{loc: loc, msg: m[4]}
		if i+1 < len(lines) {
			it.msg += " — " + lines[i+1]
		}
		out = append(out, it)
	}
	return out
}

func goBuildErrors(lines []string) []failedItem {
	var out []failedItem
	for _, l := range lines {
		if m := reGoBuild.FindStringSubmatch(l); m != nil {
			out = append(out, failedItem{loc: m[1] + ":" + m[2] + ":" + m[3], msg: m[4]})
		}
	}
	return out
}

func credoIssues(lines []string) []failedItem {
	var out []failedItem
	for i, l := range lines {
		m := reCredoIssue.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		it := failedItem{msg: m[1]}
		if i+1 < len(lines) {
			if loc := reCredoLoc.FindStringSubmatch(lines[i+1]); loc != nil {
				it.loc = loc[1]
			}
		}
		out = append(out, it)
	}
	return out
}

// locatedErrors is the last resort: compiler-style "file:line: message"
// lines that sound like errors.
func locatedErrors(lines []string) []failedItem {
	var out []failedItem
	for _, l := range lines {
		m := reLocated.FindStringSubmatch(l)
		if m == nil || !reErrorWords.MatchString(m[4]) {
			continue
		}
		loc := m[1] + ":" + m[2]
		if m[3] != "" {
			loc += ":" + m[3]
		}
		out = append(out, failedItem{loc: loc, msg: m[4]})
	}
	return out
}
