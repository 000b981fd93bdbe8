package handoff

import (
	"path"
	"strings"
	"sync"

	"github.com/agentledger/ledger/handoff/shell"
)

// The files a session really changed: from its file tools (Edit, Write,
// MultiEdit, NotebookEdit, apply_patch) and from what its shell commands do
// to files (mv, git mv, rm, git rm, cp, sed -i, redirections, tee, touch).
// A moved file is shown at its new path, a deleted one as deleted. Commits
// are followed too, so that the handoff can tell what is still uncommitted.

// fileInfo is what the session did to one file.
type fileInfo struct {
	status  string // FileModified, FileAdded, FileDeleted, FileMoved
	from    string // the old path of a moved file
	state   fileState
	changed int // the message index of the latest change
}

// fileState tracks whether a change really happened: a call whose result
// is an error (or that the user rejected) changed nothing.
type fileState int

const (
	filePending fileState = iota // call seen, result not (yet) seen
	fileChanged
	fileFailed
)

type fileTracker struct {
	order []string // paths, first-seen order; a moved file takes its old place
	files map[string]*fileInfo
	// committed is the message index of the latest successful commit of
	// each file; gitSeen says the session works in a git checkout.
	committed map[string]int
	staged    map[string]bool
	gitSeen   bool
}

func newFileTracker() fileTracker {
	return fileTracker{files: map[string]*fileInfo{}, committed: map[string]int{}, staged: map[string]bool{}}
}

// touch records a tool's pending change of p.
func (f *fileTracker) touch(p string, seq int) {
	if _, ok := f.files[p]; !ok {
		f.order = append(f.order, p)
		f.files[p] = &fileInfo{status: FileModified, state: filePending, changed: seq}
	}
}

// settle applies a tool's result to the files it named.
func (f *fileTracker) settle(paths []string, failed bool, status string, seq int) {
	for _, p := range paths {
		fi := f.files[p]
		if fi == nil {
			continue
		}
		switch {
		case !failed:
			if fi.state != fileChanged && status != "" {
				fi.status = status
			} else if status == FileDeleted {
				fi.status = FileDeleted
			} else if fi.status == FileDeleted && status != FileDeleted {
				fi.status = FileModified // written again after a delete
			}
			fi.state, fi.changed = fileChanged, seq
		case fi.state == filePending:
			fi.state = fileFailed
		}
	}
}

// change records a change a shell command made (it already succeeded).
func (f *fileTracker) change(p, status string, seq int) {
	fi, ok := f.files[p]
	if !ok {
		f.order = append(f.order, p)
		fi = &fileInfo{status: status}
		f.files[p] = fi
	} else if status == FileDeleted {
		fi.status = FileDeleted
	} else if fi.status == FileDeleted || fi.state != fileChanged {
		fi.status = status
	}
	fi.state, fi.changed = fileChanged, seq
}

// move records `mv from to`: the file keeps its place in the list and is
// shown at its new path.
func (f *fileTracker) move(from, to string, seq int) {
	fi, ok := f.files[from]
	if !ok {
		fi = &fileInfo{status: FileMoved, from: from}
		f.order = append(f.order, to)
	} else {
		for i, p := range f.order {
			if p == from {
				f.order[i] = to
			}
		}
		delete(f.files, from)
		switch {
		case fi.status == FileAdded:
			// a file the session created and then renamed is simply new
		case fi.status == FileMoved:
			// moved twice: from its first place
		default:
			fi.status, fi.from = FileMoved, from
		}
	}
	if old, dup := f.files[to]; dup && old != fi {
		// moved over a file the list already had: one entry
		f.order = removeFirst(f.order, to)
	}
	fi.state, fi.changed = fileChanged, seq
	f.files[to] = fi
}

func removeFirst(list []string, s string) []string {
	for i, x := range list {
		if x == s {
			return append(list[:i:i], list[i+1:]...)
		}
	}
	return list
}

// commit records a successful commit of the given paths (all: every
// change so far).
func (f *fileTracker) commit(paths []string, all bool, seq int) {
	f.gitSeen = true
	if all {
		for p, fi := range f.files {
			if fi.state == fileChanged {
				f.committed[p] = seq
			}
		}
		clear(f.staged)
		return
	}
	for p := range f.staged {
		paths = append(paths, p)
	}
	clear(f.staged)
	for p, fi := range f.files {
		if fi.state != fileChanged {
			continue
		}
		for _, q := range paths {
			if p == q || strings.HasPrefix(p, strings.TrimSuffix(q, "/")+"/") {
				f.committed[p] = seq
				break
			}
		}
	}
}

// result lists the changes, in order, with their git state.
func (f *fileTracker) result() []FileChange {
	var out []FileChange
	for _, p := range f.order {
		fi := f.files[p]
		if fi == nil || fi.state == fileFailed {
			continue
		}
		c := FileChange{Path: p, Status: fi.status, From: fi.from}
		if f.gitSeen {
			c.Git = GitUncommitted
			if at, ok := f.committed[p]; ok && at >= fi.changed {
				c.Git = GitCommitted
			}
		}
		out = append(out, c)
	}
	return out
}

// shellCmd is one command of a line, as a file effect sees it.
type shellCmd struct {
	w       []string // the command's words (after program)
	args    []string // its operands
	seq     int
	resolve func(string) string // a path as the project's file, "" when not one
}

// fileEffects says what each command does to files, by program name.
var fileEffects = sync.OnceValue(func() map[string]func(x *extractor, c shellCmd) {
	return map[string]func(x *extractor, c shellCmd){
		"mkdir": func(x *extractor, c shellCmd) {
			for _, a := range c.args {
				if p := c.resolve(a); p != "" {
					x.hist.newDirs[p] = true
				}
			}
		},
		"mv":     func(x *extractor, c shellCmd) { x.shellMove(c.args, c.resolve, c.seq) },
		"rm":     deleteEffect,
		"unlink": deleteEffect,
		"cp":     copyEffect,
		"touch": func(x *extractor, c shellCmd) {
			for _, a := range c.args {
				if p := c.resolve(a); p != "" {
					if _, known := x.files.files[p]; !known {
						x.files.change(p, FileAdded, c.seq)
					}
				}
			}
		},
		"tee": func(x *extractor, c shellCmd) {
			for _, a := range c.args {
				if p := c.resolve(a); p != "" {
					x.files.change(p, x.newOrModified(p), c.seq)
				}
			}
		},
		"sed":  inPlaceEffect,
		"perl": inPlaceEffect,
		"git":  gitEffect,
	}
})

func deleteEffect(x *extractor, c shellCmd) {
	for _, a := range c.args {
		if p := c.resolve(a); p != "" {
			x.shellDelete(p, c.seq)
		}
	}
}

func copyEffect(x *extractor, c shellCmd) {
	if len(c.args) < 2 {
		return
	}
	last := c.args[len(c.args)-1]
	dst := c.resolve(last)
	if dst == "" {
		return
	}
	if len(c.args) == 2 && !strings.HasSuffix(last, "/") {
		x.files.change(dst, x.newOrModified(dst), c.seq)
		return
	}
	for _, src := range c.args[:len(c.args)-1] { // into a folder
		p := path.Join(dst, path.Base(src))
		x.files.change(p, x.newOrModified(p), c.seq)
	}
}

// inPlaceEffect is sed -i and perl -pi: the files after the script.
func inPlaceEffect(x *extractor, c shellCmd) {
	if !hasFlag(c.w, "-i") && !hasFlag(c.w, "-pi") {
		return
	}
	for _, a := range inPlaceFiles(c.w) {
		if p := c.resolve(a); p != "" {
			x.files.change(p, FileModified, c.seq)
		}
	}
}

// gitEffect is git mv, git rm (not --cached, which only untracks), and
// the staging and commits gitCommand follows.
func gitEffect(x *extractor, c shellCmd) {
	x.files.gitSeen = true
	if len(c.args) == 0 {
		return
	}
	sub := c.args[0]
	c.args = c.args[1:]
	switch {
	case sub == "mv":
		x.shellMove(c.args, c.resolve, c.seq)
	case sub == "rm" && !hasFlag(c.w, "--cached"):
		deleteEffect(x, c)
	default:
		x.gitCommand(c.w, append([]string{sub}, c.args...), c.resolve, c.seq)
	}
}

// shellFiles applies what a successful command line does to files: its
// redirections, then each command's effect (fileEffects). Paths are
// relative to the folder it runs in, the project, which a leading cd
// moves.
func (x *extractor) shellFiles(pipes []shell.Pipeline, seq int) {
	dir := x.project
	resolve := func(p string) string { return x.projectFile(dir, p) }
	for _, pipe := range pipes {
		for _, words := range pipe {
			for _, t := range shell.RedirectTargets(words) {
				if p := resolve(t); p != "" {
					x.files.change(p, x.newOrModified(p), seq)
				}
			}
			w := shell.Program(words)
			if len(w) == 0 {
				continue
			}
			c := shellCmd{w: w, args: operands(w), seq: seq, resolve: resolve}
			if base := path.Base(w[0]); base == "cd" {
				dir = x.cd(dir, c.args)
			} else if effect := fileEffects()[base]; effect != nil {
				effect(x, c)
			}
		}
	}
	// A file the line wrote resolves a file tool's failure on it: the
	// agent wrote it another way (cat > f after a refused Write).
	for p, fi := range x.files.files {
		if fi.changed == seq && fi.state == fileChanged && fi.status != FileDeleted {
			x.errs.succeed("file:"+p, scope{}, "", "")
		}
	}
}

// cd is the folder a `cd` moves to from dir.
func (x *extractor) cd(dir string, args []string) string {
	if len(args) != 1 {
		return dir
	}
	d := strings.Trim(args[0], `"'`)
	switch {
	case isAbs(d):
		return path.Clean(d)
	case dir != "":
		return path.Join(dir, d)
	}
	return dir
}

// projectFile is a shell path as one of the project's files, seen from
// dir; "" for what is not one: globs and variables (unknown), ~ (home),
// and files outside the project (scratch files in /tmp are not work).
func (x *extractor) projectFile(dir, p string) string {
	p = strings.Trim(p, `"'`)
	if p == "" || strings.ContainsAny(p, "*?[]{}$`") || strings.HasPrefix(p, "~") {
		return ""
	}
	if !isAbs(p) {
		if dir == "" {
			return path.Clean(p)
		}
		p = path.Join(dir, p)
	}
	p = path.Clean(p)
	if x.project != "" && !strings.HasPrefix(p, projectPrefix(x.project)) {
		return ""
	}
	return p
}

// newOrModified is the status of a file written by the shell: what the
// session knew of it, new in a folder the session made, else modified (the
// shell does not say whether it was there before).
func (x *extractor) newOrModified(p string) string {
	if fi, ok := x.files.files[p]; ok && fi.status != FileDeleted {
		return fi.status
	}
	for d := path.Dir(p); d != "/" && d != "." && d != x.project; d = path.Dir(d) {
		if x.hist.newDirs[d] {
			return FileAdded
		}
	}
	return FileModified
}

func (x *extractor) shellMove(args []string, resolve func(string) string, seq int) {
	if len(args) < 2 {
		return
	}
	dstArg := args[len(args)-1]
	dst := resolve(dstArg)
	if dst == "" {
		return
	}
	srcs := args[:len(args)-1]
	intoDir := len(srcs) > 1 || strings.HasSuffix(dstArg, "/") || x.isKnownDir(dst)
	for _, s := range srcs {
		src := resolve(s)
		if src == "" {
			continue
		}
		to := dst
		if intoDir {
			to = path.Join(dst, path.Base(src))
		}
		// A folder moved: every known file under it moves with it.
		moved := false
		for _, p := range append([]string(nil), x.files.order...) {
			if rest, ok := strings.CutPrefix(p, src+"/"); ok {
				x.files.move(p, path.Join(to, rest), seq)
				moved = true
			}
		}
		if !moved {
			x.files.move(src, to, seq)
		}
	}
}

// isKnownDir tells whether p is a folder holding files the session knows.
func (x *extractor) isKnownDir(p string) bool {
	for _, q := range x.files.order {
		if strings.HasPrefix(q, p+"/") {
			return true
		}
	}
	return false
}

func (x *extractor) shellDelete(p string, seq int) {
	x.work.remove(p)
	deleted := false
	for _, q := range x.files.order {
		if strings.HasPrefix(q, p+"/") {
			x.files.change(q, FileDeleted, seq)
			deleted = true
		}
	}
	if deleted {
		return // a folder: its files are marked
	}
	if fi, ok := x.files.files[p]; ok && fi.status == FileAdded {
		// created and deleted in the same session: nothing changed
		x.files.order = removeFirst(x.files.order, p)
		delete(x.files.files, p)
		return
	}
	x.files.change(p, FileDeleted, seq)
}

// gitCommand follows what git does to the list: staging and commits.
func (x *extractor) gitCommand(w, args []string, resolve func(string) string, seq int) {
	x.files.gitSeen = true
	if len(args) == 0 {
		return
	}
	switch args[0] {
	case "add":
		if hasAnyFlag(w, "-A", "--all", "-u", "--update") {
			x.hist.stageAll = true
			return
		}
		for _, a := range args[1:] {
			if a == "." || a == ":/" {
				x.hist.stageAll = true
				return
			}
			if p := resolve(a); p != "" {
				x.files.staged[p] = true
			}
		}
	case "commit":
		all := x.hist.stageAll || hasAnyFlag(w, "-a", "--all") || hasCombinedFlag(w, 'a')
		var paths []string
		for _, a := range args[1:] { // git commit -- paths, or git commit paths
			if p := resolve(a); p != "" && !x.commitMessageWord(w, a) {
				paths = append(paths, p)
			}
		}
		x.files.commit(paths, all, seq)
		x.hist.stageAll = false
	}
}

// commitMessageWord tells whether a is the value of -m / -F / --author...
func (x *extractor) commitMessageWord(w []string, a string) bool {
	for i := 1; i < len(w)-1; i++ {
		switch w[i] {
		case "-m", "--message", "-F", "--file", "--author", "-C", "--reuse-message", "--date", "--fixup", "--squash":
			if w[i+1] == a {
				return true
			}
		}
	}
	return strings.ContainsAny(a, " \n")
}

func hasAnyFlag(w []string, flags ...string) bool {
	for _, a := range w[1:] {
		for _, f := range flags {
			if a == f {
				return true
			}
		}
	}
	return false
}

// hasCombinedFlag tells whether a short flag appears in a group (-am).
func hasCombinedFlag(w []string, c byte) bool {
	for _, a := range w[1:] {
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a[1:], c) >= 0 {
			return true
		}
	}
	return false
}

// operands are a command's arguments that are not flags (after --, all).
func operands(w []string) []string {
	var out []string
	dashdash := false
	for _, a := range w[1:] {
		switch {
		case dashdash:
			out = append(out, a)
		case a == "--":
			dashdash = true
		case strings.HasPrefix(a, "-") && a != "-":
		default:
			out = append(out, a)
		}
	}
	return out
}

// inPlaceFiles are the files sed -i / perl -pi edit: the operands after the
// script (sed's first operand, unless given with -e/-f).
func inPlaceFiles(w []string) []string {
	var ops []string
	script := false // the script came as -e/-f
	for i := 1; i < len(w); i++ {
		a := w[i]
		switch {
		case a == "-e" || a == "-f" || a == "--expression" || a == "--file":
			script = true
			i++
		case strings.HasPrefix(a, "-"), a == "":
			// flags, and BSD sed's empty backup suffix (-i '')
		default:
			ops = append(ops, a)
		}
	}
	if !script && len(ops) > 0 {
		ops = ops[1:] // the script itself
	}
	return ops
}
