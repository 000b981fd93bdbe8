package handoff

import (
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/handoff/shell"
)

// The working set is what the agent had in hand when the work stopped,
// and what it was about to take up: what a resumed agent reaches for
// first.
//   - the files it read or changed lately, the latest first, with the
//     lines it read where it read only part of a file;
//   - the files named as next: by the tracker item in progress and the next
//     ones (their descriptions), by the rest of a list it was working
//     through (a search result, or a list in its own words, partly done),
//     by a plan the user approved, by its last words;
//   - the commands it runs again and again as part of its loop (build,
//     test, lint, format, its tracker's CLI), as it runs them.
//
// Only the main conversation counts: a subagent's reads are its own.
// Each call costs a few map operations; the texts that may name files
// (descriptions, plans, last words, lists in prose) are read once, at the
// end.

// Limits of a working set.
const (
	maxWorkFiles   = 16 // recent files
	maxNextFiles   = 16 // files named as next, all groups together
	maxNextGroup   = 10 // files of one group
	maxCommands    = 8  // commands of the loop
	recentCalls    = 40 // a command run once counts when it ran this recently
	maxListPaths   = 200
	maxListsKept   = 6
	maxRanges      = 6
	listStaleCalls = 60 // a list nobody touched for this many calls is dropped
)

// workUse is what the agent did with one file.
type workUse struct {
	last    int // call index of the latest use
	lastSeq int // message index of the latest use
	uses    int
	edited  bool
	whole   bool        // read whole at least once
	ranges  []lineRange // parts read, merged, in line order
}

// lineRange is lines from..to read (to 0: to the end).
type lineRange struct{ from, to int }

// cmdUse is one command of the loop.
type cmdUse struct {
	count, last int
	words       []string // what every run had in common, from the start
}

// fileList is a list of files the agent was given or wrote: a search
// result, or a list in its own prose.
type fileList struct {
	at    int    // call index when it appeared
	prose string // whose list it is, when it is one in prose ("your list")
	paths []string
}

// workTracker follows the working set through the messages.
type workTracker struct {
	calls    int // main-conversation tool calls so far
	files    map[string]*workUse
	deleted  map[string]bool // files deleted since their last use
	cmds     map[string]*cmdUse
	cmdOrder []string
	lists    []fileList
	prose    []proseText // texts of the agent's that hold lists
}

// proseText is an agent text that holds a list, kept to read at the end.
type proseText struct {
	at    int
	text  string
	whose string // "your list", "the subagent's list"
}

func newWorkTracker() workTracker {
	return workTracker{files: map[string]*workUse{}, cmds: map[string]*cmdUse{}, deleted: map[string]bool{}}
}

func (w *workTracker) use(p string, seq int) *workUse {
	u := w.files[p]
	if u == nil {
		u = &workUse{}
		w.files[p] = u
	}
	u.last, u.lastSeq = w.calls, seq
	u.uses++
	delete(w.deleted, p)
	return u
}

// remove records that p (a file, or a folder and what is under it) was
// deleted.
func (w *workTracker) remove(p string) {
	if _, ok := w.files[p]; ok {
		w.deleted[p] = true
	}
	for q := range w.files {
		if strings.HasPrefix(q, p+"/") {
			w.deleted[q] = true
		}
	}
}

// edit records a change of p.
func (w *workTracker) edit(p string, seq int) {
	if scratchFile(p) {
		return
	}
	w.use(p, seq).edited = true
}

// read records a read of p: lines from..to, or all of it (from 0).
func (w *workTracker) read(p string, from, to int, seq int) {
	if scratchFile(p) {
		return
	}
	u := w.use(p, seq)
	if from <= 0 && to <= 0 {
		u.whole = true
		return
	}
	u.ranges = mergeRange(u.ranges, lineRange{max(from, 1), to})
}

// mergeRange adds r to rs, sorted and merged; past maxRanges the two
// closest ranges are joined.
func mergeRange(rs []lineRange, r lineRange) []lineRange {
	rs = append(rs, r)
	sort.Slice(rs, func(i, j int) bool { return rs[i].from < rs[j].from })
	out := rs[:1]
	for _, x := range rs[1:] {
		last := &out[len(out)-1]
		if last.to == 0 || x.from <= last.to+1 {
			if last.to != 0 && (x.to == 0 || x.to > last.to) {
				last.to = x.to
			}
			continue
		}
		out = append(out, x)
	}
	for len(out) > maxRanges {
		best, gap := 0, -1
		for i := 0; i+1 < len(out); i++ {
			if g := out[i+1].from - out[i].to; gap < 0 || g < gap {
				best, gap = i, g
			}
		}
		out[best].to = out[best+1].to
		out = append(out[:best+1], out[best+2:]...)
	}
	return out
}

// rangesText shows the parts of a file read: "lines 120-240, 400-".
func rangesText(rs []lineRange) string {
	if len(rs) == 0 {
		return ""
	}
	parts := make([]string, 0, min(len(rs), 3))
	for i, r := range rs {
		if i == 3 {
			parts = append(parts, "…")
			break
		}
		s := strconv.Itoa(r.from) + "-"
		if r.to > 0 {
			s += strconv.Itoa(r.to)
		}
		parts = append(parts, s)
	}
	return "lines " + strings.Join(parts, ", ")
}

// scratchFile tells files that are not the work's: temporary files and
// the agent's own (plans, memories, tool output it saved).
func scratchFile(p string) bool {
	return p == "" || agentFile(p) || strings.HasPrefix(p, "/tmp/") || strings.HasPrefix(p, "/private/tmp/") ||
		strings.HasPrefix(p, "/var/folders/") || strings.HasPrefix(p, "/dev/") || strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/sys/") ||
		strings.Contains(p, "/.claude/projects/") || strings.Contains(p, "/tool-results/") ||
		strings.Contains(p, `\AppData\Local\Temp\`) || strings.Contains(p, `\.claude\projects\`)
}

// loopSkip are programs whose runs say nothing of the project's loop:
// moving files around, processes, fetching URLs, opening things, and git,
// which every project uses the same way.
var loopSkip = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"mkdir": true, "rm": true, "rmdir": true, "cp": true, "mv": true, "touch": true,
		"chmod": true, "chown": true, "ln": true, "tee": true, "unlink": true, "kill": true, "pkill": true,
		"killall": true, "open": true, "xdg-open": true, "curl": true, "wget": true, "git": true, "source": true,
		".": true, "cd": true, "tar": true, "unzip": true, "zip": true, "xargs": true, "bash": true, "sh": true,
		"zsh": true, "python": true, "python3": true, "node": true, "ruby": true, "perl": true, "osascript": true,
		"firefox": true, "chromium": true, "google-chrome": true, "code": true, "base64": true, "md5sum": true, "shasum": true, "sha256sum": true, "history": true, "alias": true,
		"unset": true, "read": true, "eval": true, "local": true, "return": true, "then": true, "do": true,
		"done": true, "fi": true, "else": true, "if": true, "for": true, "while": true, "case": true, "esac": true}
})

// readers are programs whose file operands are files read.
var readers = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"cat": true, "nl": true, "head": true, "tail": true, "sed": true, "bat": true,
		"less": true, "more": true}
})

// workShell reads a shell line for the working set: the files it reads
// (cat, sed -n, nl, head) and the commands of the loop it runs. Only the
// first command of a pipe can be one of the loop: what follows it
// filters or formats its output.
func (x *extractor) workShell(pipes []shell.Pipeline) {
	dir := x.project
	for _, p := range pipes {
		for i, words := range p {
			w := shell.Program(words)
			if len(w) == 0 {
				continue
			}
			base := strings.TrimSuffix(path.Base(w[0]), ".exe")
			switch {
			case base == "cd":
				dir = x.cd(dir, operands(w))
				continue
			case readers()[base]:
				if (base == "sed" && hasFlag(w, "-i")) || heredoc(words) {
					continue
				}
				x.shellReads(w, p[i+1:], dir)
				continue
			case i > 0:
				continue
			}
			if looks(w) || trivial()[base] || loopSkip()[base] || !commandWord(base) {
				// a script run by an interpreter is one of the loop's
				if interpreters()[base] && len(w) > 1 && !strings.HasPrefix(w[1], "-") && reExt.MatchString(w[1]) &&
					!scratchFile(x.workPath(dir, w[1])) {
					x.loopCommand(w[:2], base+" "+w[1])
				}
				continue
			}
			x.loopCommand(displayWords(unwrapLight(words)), loopKey(w))
		}
	}
}

// interpreters run a script named by their first operand.
var interpreters = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"python": true, "python3": true, "node": true, "bash": true, "sh": true,
		"zsh": true, "ruby": true, "perl": true, "deno": true, "bun": true, "tsx": true, "ts-node": true}
})

// heredoc tells whether a command reads a heredoc (cat << EOF > file
// writes a file, it reads none).
func heredoc(words []string) bool {
	for _, w := range words {
		if strings.HasPrefix(w, "<<") {
			return true
		}
	}
	return false
}

// loopKey names a command of the loop: its program, and its subcommand
// when it has one ("mix ecto.migrate", "bd update"; "import" for import
// -window root).
func loopKey(w []string) string {
	key := path.Base(w[0])
	if len(w) > 1 && stableWord(w[1], true) && !strings.HasPrefix(w[1], "-") {
		key += " " + w[1]
	}
	return key
}

// unwrapLight drops what only times, elevates or sets the environment of
// a command (sudo, time, timeout 60, env X=1), and keeps what says how it
// runs (python -m, npx, bundle exec): the command as it is shown.
func unwrapLight(words []string) []string {
	w := shell.DropRedirects(words)
	for len(w) > 0 {
		base := path.Base(w[0])
		switch {
		case shell.IsAssignment(w[0]):
			w = w[1:]
			continue
		case base == "sudo" || base == "time" || base == "nohup" || base == "env" || base == "nice" || base == "exec" || base == "command":
			w = w[1:]
			for len(w) > 0 && (strings.HasPrefix(w[0], "-") || shell.IsAssignment(w[0])) {
				w = w[1:]
			}
			continue
		case base == "timeout":
			w = w[1:]
			for len(w) > 0 && strings.HasPrefix(w[0], "-") {
				w = w[1:]
			}
			if len(w) > 0 {
				w = w[1:]
			}
			continue
		}
		return w
	}
	return w
}

// commandWord tells a program name from what is not one: a path to a
// temporary script, a variable, a quoted string.
func commandWord(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._+-", c)) {
			return false
		}
	}
	return true
}

// displayWords is a command as it is shown: the program and its words up
// to the first that changes from run to run (a path, an id, a value), a
// flag whose value that is dropped with it.
func displayWords(w []string) []string {
	out := []string{w[0]}
	for i, a := range w[1:] {
		if len(out) == 6 {
			break
		}
		if !stableWord(a, i == 0) {
			if n := len(out); n > 1 && valueLike(a) && strings.HasPrefix(out[n-1], "-") && !strings.Contains(out[n-1], "=") {
				out = out[:n-1] // -n 5, --seed 0, -m "msg": the flag goes with its value
			}
			break
		}
		out = append(out, a)
	}
	for len(out) > 1 && out[len(out)-1] == "--" {
		out = out[:len(out)-1]
	}
	return out
}

// valueLike tells a flag's value (a number, a message) from an operand.
func valueLike(a string) bool {
	if strings.ContainsAny(a, " \t\n") {
		return true
	}
	for _, c := range a {
		if !(c >= '0' && c <= '9' || c == '.' || c == 'm' || c == 's') {
			return false
		}
	}
	return a != ""
}

// stableWord is a word a command keeps from one run to the next: a
// subcommand or a flag, not a path, an id, a variable or a message.
func stableWord(a string, sub bool) bool {
	if a == "" || len(a) > 40 || strings.ContainsAny(a, " /$`'\"*?[]{}()<>|;&\\~@#") {
		return false
	}
	name, _, _ := strings.Cut(a, "=")
	if strings.HasPrefix(a, "-") {
		return !strings.ContainsAny(name, ".:")
	}
	for _, c := range a {
		if c >= '0' && c <= '9' {
			return false // an id, a count, a version
		}
	}
	if sub && !strings.ContainsAny(a, ":,=") {
		if dot := strings.LastIndexByte(a, '.'); dot < 0 || !codeExt()[strings.ToLower(a[dot+1:])] {
			return true // a subcommand: ecto.migrate, not a file: seed.py
		}
	}
	return !strings.ContainsAny(a, ".:,=") // not a file, an id, a host:port
}

// loopCommand counts one run of a command.
func (x *extractor) loopCommand(words []string, key string) {
	if key == "" || len(words) == 0 {
		return
	}
	c := x.work.cmds[key]
	if c == nil {
		c = &cmdUse{words: append([]string(nil), words...)}
		x.work.cmds[key] = c
		x.work.cmdOrder = append(x.work.cmdOrder, key)
	} else {
		n := 0
		for n < len(c.words) && n < len(words) && c.words[n] == words[n] {
			n++
		}
		if n > 0 {
			c.words = c.words[:n]
		}
	}
	c.count++
	c.last = x.work.calls
}

var reSedRange = lazyRegexp(`^(\d+)(?:,(\d+))?p$`)

// shellReads records the files a reader command reads, and which lines
// when it says (sed -n 'a,bp', head -n N, or such a command after it in
// the pipe).
func (x *extractor) shellReads(w []string, after [][]string, dir string) {
	base := path.Base(w[0])
	from, to := lineSpan(base, w)
	if from == 0 && to == 0 {
		for _, next := range after {
			nw := shell.Program(next)
			if len(nw) > 0 {
				from, to = lineSpan(path.Base(nw[0]), nw)
			}
			break
		}
	}
	ops := operands(w)
	if base == "sed" && len(ops) > 0 && !hasFlag(w, "-e") && !hasFlag(w, "-f") {
		ops = ops[1:] // the script
	}
	if (base == "head" || base == "tail") && len(ops) > 0 {
		if _, err := strconv.Atoi(ops[0]); err == nil {
			ops = ops[1:] // head -n 20 file: the count is an operand here
		}
	}
	for _, a := range ops {
		if !strings.Contains(a, "/") && !reExt.MatchString(a) && !bareNames()[a] {
			continue // not a file name: a word of a script, a heredoc's end
		}
		if p := x.workPath(dir, a); p != "" {
			x.work.read(p, from, to, x.seq)
		}
	}
}

// lineSpan is the lines a reader prints: sed -n 'a,bp', head -n N;
// 0, 0 when it prints them all (or it cannot be told).
func lineSpan(base string, w []string) (int, int) {
	switch base {
	case "sed":
		if !hasFlag(w, "-n") {
			return 0, 0
		}
		for _, a := range w[1:] {
			if m := reSedRange.FindStringSubmatch(a); m != nil {
				from, _ := strconv.Atoi(m[1])
				to := from
				if m[2] != "" {
					to, _ = strconv.Atoi(m[2])
				}
				return from, to
			}
		}
	case "head":
		for i, a := range w[1:] {
			n := ""
			switch {
			case a == "-n" && i+2 < len(w):
				n = w[i+2]
			case strings.HasPrefix(a, "-n"):
				n = a[2:]
			case len(a) > 1 && a[0] == '-' && a[1] >= '0' && a[1] <= '9':
				n = a[1:]
			}
			if k, err := strconv.Atoi(n); err == nil && k > 0 {
				return 1, k
			}
		}
	}
	return 0, 0
}

// workPath is a shell operand as a file of the working set, seen from
// dir; "" when it is not one (a glob, a variable, a flag, scratch).
func (x *extractor) workPath(dir, p string) string {
	p = strings.Trim(p, `"'`)
	if p == "" || p == "-" || strings.ContainsAny(p, "*?[]{}$`") || strings.HasPrefix(p, "~") {
		return ""
	}
	if !isAbs(p) {
		if dir == "" {
			return path.Clean(p)
		}
		p = path.Join(dir, p)
	}
	p = path.Clean(p)
	if scratchFile(p) {
		return ""
	}
	return p
}

// workResult reads a result for the working set: a file read, and the
// files a search listed.
func (x *extractor) workResult(u use, b compact.Block) {
	switch u.name {
	case "Read", "NotebookRead":
		if b.IsError {
			return
		}
		p := firstNonEmpty(u.input.str("file_path"), u.input.str("notebook_path"))
		if p == "" {
			return
		}
		from, to := 0, 0
		if off, lim := intInput(u.input, "offset"), intInput(u.input, "limit"); off > 0 || lim > 0 {
			from = max(off, 1)
			if lim > 0 {
				to = from + lim - 1
			}
		}
		x.work.read(x.resolve(p), from, to, x.seq)
	case "Grep", "Glob":
		if !b.IsError {
			x.workList(b.Text, u.input.str("path"))
		}
	case "Task", "Agent":
		if !b.IsError {
			x.proseList(b.Text, "the subagent's list")
		}
	default:
		if !b.IsError && len(u.files) == 0 && !u.isShell && callReaders()[u.name] == nil {
			x.otherFileTool(u)
		}
	}
}

// fileKeys are the inputs other agents' file tools name their file with.
var fileKeys = []string{"file_path", "filePath", "absolute_path", "notebook_path", "path", "target_file"}

// writeWords in a tool's name say that it changes the file it names.
var writeWords = []string{"edit", "write", "replace", "create", "patch", "insert", "append", "rename", "move"}

// searchWords in a tool's name say that it searches, or lists a folder.
var searchWords = []string{"grep", "glob", "search", "find", "list", "ls"}

// otherFileTool reads the call of a file tool this package does not know
// by name (another agent's read_file, an MCP server's write_file): the
// file it names, read or changed by what its name says.
func (x *extractor) otherFileTool(u use) {
	p := ""
	for _, k := range fileKeys {
		if v := u.input.str(k); v != "" {
			p = v
			break
		}
	}
	if p == "" || strings.ContainsAny(p, "*?\n") {
		return
	}
	if base := path.Base(p); !reExt.MatchString(base) && !bareNames()[base] {
		return // a folder, most likely
	}
	name := strings.ToLower(u.name)
	for _, w := range searchWords {
		if strings.Contains(name, w) {
			return
		}
	}
	p = x.resolve(p)
	for _, w := range writeWords {
		if strings.Contains(name, w) {
			x.work.edit(p, x.seq)
			return
		}
	}
	from, to := intInput(u.input, "offset"), 0
	if lim := intInput(u.input, "limit"); lim > 0 {
		from = max(from, 1)
		to = from + lim - 1
	}
	if s, e := intInput(u.input, "start_line"), intInput(u.input, "end_line"); s > 0 {
		from, to = s, e
	}
	x.work.read(p, from, to, x.seq)
}

func intInput(in input, key string) int {
	n, err := strconv.Atoi(in.str(key))
	if err != nil {
		return 0
	}
	return n
}

// listers are commands whose output lists files.
var listers = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"grep": true, "egrep": true, "rg": true, "ag": true, "ack": true, "find": true,
		"fd": true, "ls-files": true}
})

// shellList reads the files a successful search command listed.
func (x *extractor) shellList(pipes []shell.Pipeline, output string) {
	for _, p := range pipes {
		last := p[len(p)-1]
		w := shell.Program(p[0])
		if len(w) == 0 {
			continue
		}
		base := path.Base(w[0])
		if base == "git" && (firstArg(w) == "grep" || firstArg(w) == "ls-files") {
			base = "ls-files"
		}
		if !listers()[base] {
			continue
		}
		// a count or a pager after the search hides the list
		if lw := shell.Program(last); len(p) > 1 && len(lw) > 0 && path.Base(lw[0]) == "wc" {
			continue
		}
		x.workList(output, "")
		return
	}
}

// workList keeps the files a search result lists, in order: bare paths,
// or the path before "path:12:" of each matching line. dir is the folder
// searched (relative paths are under it).
func (x *extractor) workList(out, dir string) {
	if dir == "" || !isAbs(dir) {
		dir = x.project
	}
	var paths []string
	seen := map[string]bool{}
	lines := 0
	for len(out) > 0 && lines < 2000 && len(paths) < maxListPaths {
		line, rest, _ := strings.Cut(out, "\n")
		out = rest
		lines++
		line = strings.TrimSpace(line)
		if i := strings.IndexByte(line, ':'); i > 0 && i+1 < len(line) && line[i+1] >= '0' && line[i+1] <= '9' {
			line = line[:i]
		}
		if line == "" || len(line) > 300 || strings.ContainsAny(line, " \t") || !strings.Contains(line, ".") {
			continue
		}
		if !reExt.MatchString(path.Base(line)) {
			continue
		}
		p := x.workPath(dir, line)
		if p != "" && !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	if len(paths) < 3 {
		return
	}
	x.work.lists = append(x.work.lists, fileList{at: x.work.calls, paths: paths})
	if len(x.work.lists) > maxListsKept {
		x.work.lists = x.work.lists[1:]
	}
}

// listLines counts the lines of text that are list items, up to 3.
func listLines(text string) int {
	n := 0
	for len(text) > 0 && n < 3 {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		line = strings.TrimLeft(line, " \t")
		if len(line) < 3 {
			continue
		}
		switch c := line[0]; {
		case (c == '-' || c == '*' || c == '+') && line[1] == ' ':
			n++
		case c >= '0' && c <= '9':
			i := 1
			for i < len(line) && line[i] >= '0' && line[i] <= '9' {
				i++
			}
			if i+1 < len(line) && (line[i] == '.' || line[i] == ')') && line[i+1] == ' ' {
				n++
			}
		}
	}
	return n
}

// proseList keeps an agent text that holds a list, to read at the end:
// the agent's own, or a subagent's report.
func (x *extractor) proseList(text, whose string) {
	if listLines(text) < 3 {
		return
	}
	x.work.prose = append(x.work.prose, proseText{at: x.work.calls, text: text, whose: whose})
	if len(x.work.prose) > maxListsKept {
		x.work.prose = x.work.prose[1:]
	}
}

// codeExt are extensions that make a bare name a file when a text names
// it without a folder.
var codeExt = sync.OnceValue(func() map[string]bool {
	exts := map[string]bool{}
	for _, e := range strings.Fields(`go rs py ts tsx js jsx mjs cjs ex exs heex eex leex rb java kt kts swift c h
		cc cpp hpp cs php md mdx json jsonl yaml yml toml ini cfg sql html htm css scss sass less vue svelte sh bash
		zsh lua dart proto graphql gql tf r ipynb csv xml gradle erl hrl hs ml clj scala m mm pl sol zig nim txt lock
		env`) {
		exts[e] = true
	}
	return exts
})

// bareNames are files commonly named without an extension.
var bareNames = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"Makefile": true, "Dockerfile": true, "Justfile": true, "Gemfile": true,
		"Rakefile": true, "Procfile": true, "Containerfile": true, "Vagrantfile": true}
})

// pathsIn lists the file paths a text names, in order: words with a
// folder and an extension (lib/a/b.ex, ./x.ts:12), or a bare name with a
// code extension (router.ex). URLs, versions and abbreviations are not.
func pathsIn(text string) []string {
	var out []string
	seen := map[string]bool{}
	isPathChar := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80 ||
			strings.IndexByte("_./@+-~:", c) >= 0
	}
	for i := 0; i < len(text); {
		if !isPathChar(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && isPathChar(text[j]) {
			j++
		}
		tok := text[i:j]
		i = j
		if strings.Contains(tok, "://") || strings.HasPrefix(tok, "www.") {
			continue
		}
		tok = strings.TrimRight(tok, ".:,-")
		if k := strings.IndexByte(tok, ':'); k >= 0 {
			tok = tok[:k] // file.go:12
		}
		if p := fileToken(tok); p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// fileToken is tok when it names a file.
func fileToken(tok string) string {
	tok = strings.TrimPrefix(tok, "@") // @docs/design.md: a file the user attached
	if len(tok) < 3 || len(tok) > 200 || strings.HasPrefix(tok, "@") {
		return ""
	}
	base := path.Base(tok)
	if bareNames()[base] && strings.Contains(tok, "/") {
		return tok
	}
	dot := strings.LastIndexByte(base, '.')
	if dot <= 0 || dot == len(base)-1 {
		return ""
	}
	ext := base[dot+1:]
	if len(ext) > 8 || !(ext[0] >= 'a' && ext[0] <= 'z' || ext[0] >= 'A' && ext[0] <= 'Z') {
		return ""
	}
	for _, c := range ext {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return ""
		}
	}
	if strings.Contains(tok, "/") {
		return tok
	}
	if codeExt()[strings.ToLower(ext)] {
		return tok
	}
	return ""
}

// namedPath resolves a path a text names: a file the session used or
// changed whose path ends with it, else the path under the project.
func (x *extractor) namedPath(p string) string {
	p = strings.TrimPrefix(p, "./")
	if isAbs(p) {
		return path.Clean(p)
	}
	if strings.HasPrefix(p, "~") {
		return p // the home folder: not known here
	}
	suffix := "/" + p
	found := ""
	check := func(q string) bool {
		if strings.HasSuffix(q, suffix) {
			if found != "" && found != q {
				found = "\x00" // more than one: ambiguous
				return false
			}
			found = q
		}
		return true
	}
	for q := range x.work.files {
		if !check(q) {
			break
		}
	}
	if found != "\x00" {
		for _, q := range x.files.order {
			if !check(q) {
				break
			}
		}
	}
	if found != "" && found != "\x00" {
		return found
	}
	if x.project == "" {
		return p
	}
	return path.Join(x.project, p)
}

// workingSet builds the working set at the end of the messages.
func (x *extractor) workingSet(tasks []*trackedTask) WorkingSet {
	ws := WorkingSet{}
	// Where files went since: a moved file under its new path, a deleted
	// one not at all.
	moved := map[string]string{}
	for p, fi := range x.files.files {
		if fi.from != "" {
			moved[fi.from] = p
		}
	}
	gone := func(p string) bool {
		fi := x.files.files[p]
		return x.work.deleted[p] || (fi != nil && fi.status == FileDeleted)
	}
	type ranked struct {
		p string
		u *workUse
	}
	var recent []ranked
	for p, u := range x.work.files {
		if to, ok := moved[p]; ok {
			p = to
		}
		if gone(p) {
			continue
		}
		recent = append(recent, ranked{p, u})
	}
	sort.Slice(recent, func(i, j int) bool {
		a, b := recent[i].u, recent[j].u
		if a.last != b.last {
			return a.last > b.last
		}
		if a.uses != b.uses {
			return a.uses > b.uses
		}
		return recent[i].p < recent[j].p
	})
	shown := map[string]bool{}
	var files []WorkFile
	for _, r := range recent {
		if len(files) == maxWorkFiles {
			break
		}
		if shown[r.p] {
			continue
		}
		shown[r.p] = true
		f := WorkFile{Path: r.p, Edited: r.u.edited}
		if !r.u.whole {
			f.Lines = rangesText(r.u.ranges)
		}
		files = append(files, f)
	}
	ws.Files = groupByFolder(files)

	total := 0
	addGroup := func(why string, paths []string, since int, bySeq bool) {
		var keep []string
		for _, p := range paths {
			if total+len(keep) >= maxNextFiles || len(keep) >= maxNextGroup {
				break
			}
			if to, ok := moved[p]; ok {
				p = to
			}
			if shown[p] || gone(p) || scratchFile(p) {
				continue
			}
			if u := x.work.files[p]; u != nil && ((bySeq && u.lastSeq > since) || (!bySeq && u.last > since)) {
				continue // done since it was named
			}
			shown[p] = true
			keep = append(keep, p)
		}
		if len(keep) > 0 {
			total += len(keep)
			ws.Next = append(ws.Next, NextFiles{Why: why, Paths: keep})
		}
	}
	resolve := func(names []string) []string {
		pathed := map[string]bool{}
		for _, n := range names {
			if strings.Contains(n, "/") {
				pathed[path.Base(n)] = true
			}
		}
		out := make([]string, 0, len(names))
		for _, n := range names {
			if !strings.Contains(n, "/") && pathed[n] {
				continue // the same file, named with its folder elsewhere
			}
			out = append(out, x.namedPath(n))
		}
		return out
	}
	// The item in progress, then what is left of a list being worked
	// through, then the approved plan, then the next items, then the
	// agent's last words.
	for _, it := range tasks {
		if it.Status == TaskInProgress && !x.tracker.hasChildren(it.ID) && it.description != "" {
			addGroup("next, for "+taskName(it.Task), resolve(pathsIn(it.description)), it.started, true)
		}
	}
	x.listGroups(addGroup)
	if x.plan.text != "" {
		addGroup("next, from the approved plan", resolve(pathsIn(x.plan.text)), x.plan.seq, true)
	}
	// What the user named: a design document, a data file handed over.
	var asked []string
	for i, r := range x.requests {
		if i == 0 || i >= len(x.requests)-maxAskedRequests {
			asked = append(asked, askedFiles(r)...)
		}
	}
	addGroup(namedByUser, resolve(asked), -1, true)
	pending := 0
	for _, it := range tasks {
		if pending == 2 {
			break
		}
		if it.Status == TaskPending && !x.tracker.hasChildren(it.ID) {
			pending++
			if it.description != "" {
				addGroup("next, for "+taskName(it.Task), resolve(pathsIn(it.description)), -1, true)
			}
		}
	}
	if x.prose.lastWords != "" && x.prose.last != "" {
		addGroup("next, named last", resolve(pathsIn(x.prose.lastWords)), x.prose.at, true)
	}
	ws.Commands = x.loopCommands()
	return ws
}

// namedByUser is the group of files the user's requests name.
const namedByUser = "named by the user"

// maxAskedRequests is how many of the latest requests (beside the first)
// are read for the files the user named.
const maxAskedRequests = 8

// reKeepOff marks a clause that tells the agent to stay away from what it
// names ("don't touch csv.py, Jonas is rewriting it").
var reKeepOff = lazyRegexp(`(?i)\b(?:don'?t|do not|never|avoid|except|without touching|leave\b.*\balone|not touch|stay away)\b`)

// askedFiles are the files a request names, but those it says to keep
// away from.
func askedFiles(req string) []string {
	var out []string
	req = strings.ReplaceAll(req, ". ", "\n") // sentences; a file's dot is not followed by a space
	for _, clause := range strings.FieldsFunc(req, func(r rune) bool { return r == ';' || r == '!' || r == '?' || r == '\n' }) {
		if !reKeepOff.MatchString(clause) {
			out = append(out, pathsIn(clause)...)
		}
	}
	return out
}

// taskName names a task in a working set line: its id, or its subject.
func taskName(t Task) string {
	if t.ID != "" {
		if _, err := strconv.Atoi(t.ID); err == nil {
			return "#" + t.ID
		}
		return t.ID
	}
	return shorten(t.Subject, 60)
}

// listGroups adds what is left of each list the agent was working
// through, the latest first: a list some of whose files it changed after
// the list appeared (one of its own list, two of a search result), the
// last of them lately.
func (x *extractor) listGroups(add func(why string, paths []string, since int, bySeq bool)) {
	var lists []fileList
	for _, t := range x.work.prose {
		var paths []string
		seen := map[string]bool{}
		for _, line := range strings.Split(t.text, "\n") {
			if listLines(line) == 0 {
				continue
			}
			for _, n := range pathsIn(line) {
				if p := x.namedPath(n); !seen[p] {
					seen[p] = true
					paths = append(paths, p)
				}
				break // the first path of an item is the one it is about
			}
		}
		if len(paths) >= 3 {
			lists = append(lists, fileList{at: t.at, prose: t.whose, paths: paths})
		}
	}
	lists = append(lists, x.work.lists...)
	sort.SliceStable(lists, func(i, j int) bool { return lists[i].at > lists[j].at })
	for _, l := range lists {
		done, latest := 0, -1
		for _, p := range l.paths {
			if u := x.work.files[p]; u != nil && u.last > l.at && u.edited {
				done++
				latest = max(latest, u.last)
			}
		}
		need := 2
		if l.prose != "" {
			need = 1 // a list written for the work, not every match of a search
		}
		if done < need || done == len(l.paths) || x.work.calls-latest > listStaleCalls {
			continue
		}
		why := "next, rest of the search result"
		if l.prose != "" {
			why = "next, rest of " + l.prose
		}
		why += " (" + strconv.Itoa(done) + " of " + strconv.Itoa(len(l.paths)) + " done)"
		add(why, l.paths, l.at, false)
	}
}

// loopCommands are the commands of the agent's loop: run twice or more,
// or once lately; the most run first, then the latest.
func (x *extractor) loopCommands() []string {
	type cand struct {
		c     *cmdUse
		score int
	}
	var cands []cand
	for _, k := range x.work.cmdOrder {
		c := x.work.cmds[k]
		recent := x.work.calls-c.last < recentCalls
		if c.count < 2 && !recent {
			continue
		}
		score := min(c.count, 6)
		if recent {
			score += 3
		}
		cands = append(cands, cand{c, score})
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].score != cands[j].score {
			return cands[i].score > cands[j].score
		}
		return cands[i].c.last > cands[j].c.last
	})
	var out []string
	seen := map[string]bool{}
	for _, c := range cands {
		if len(out) == maxCommands {
			break
		}
		s := strings.Join(c.c.words, " ")
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// groupByFolder orders files so that those of a folder are together, the
// folders in the order of their latest file.
func groupByFolder(files []WorkFile) []WorkFile {
	if len(files) == 0 {
		return nil
	}
	var order []string
	by := map[string][]WorkFile{}
	for _, f := range files {
		d := path.Dir(f.Path)
		if _, ok := by[d]; !ok {
			order = append(order, d)
		}
		by[d] = append(by[d], f)
	}
	out := make([]WorkFile, 0, len(files))
	for _, d := range order {
		out = append(out, by[d]...)
	}
	return out
}
