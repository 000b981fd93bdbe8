// Package shell reads a shell command line just well enough for a
// handoff: its pipelines, each command's words with quotes removed, the
// command that does the work under its wrappers (env, sudo, timeout, npx,
// bundle exec, python -m, ...), and where its output is redirected.
// Quotes and heredocs are honoured; subshells stay inside one word. It
// runs nothing: it only reads the text.
package shell

import (
	"path"
	"strings"
)

// Pipeline is one command list element: commands joined by pipes.
type Pipeline [][]string

// Parse splits a command line into pipelines (separated by &&, ||, ;,
// & and newlines) of commands (separated by |), each a list of words with
// quotes removed. A heredoc's body is skipped: its lines are data.
func Parse(line string) []Pipeline {
	l := lexer{line: line}
	for l.i = 0; l.i < len(line); l.i++ {
		l.step(line[l.i])
	}
	l.endPipe()
	return l.out
}

// lexer is Parse's state: the pipelines so far, the one being
// read, its command's words, the word being read.
type lexer struct {
	line    string
	i       int
	out     []Pipeline
	cur     Pipeline
	words   []string
	word    strings.Builder
	inWord  bool     // a word has started (possibly empty: "")
	depth   int      // ( ) nesting, $( ) included
	heredoc []string // delimiters of heredocs whose bodies follow the line
}

// step reads the byte at l.i (and what it takes with it).
func (l *lexer) step(c byte) {
	switch {
	case c == '\\' && l.i+1 < len(l.line):
		l.escape()
	case c == '\'':
		l.singleQuoted()
	case c == '"':
		l.doubleQuoted()
	case c == '(' || c == ')' || l.depth > 0:
		l.nested(c)
	case c == ' ' || c == '\t':
		l.endWord()
	case c == '\n':
		l.endPipe()
		for len(l.heredoc) > 0 { // skip each pending heredoc's body
			l.i = skipHeredoc(l.line, l.i+1, l.heredoc[0])
			l.heredoc = l.heredoc[1:]
		}
	case c == ';':
		l.endPipe()
	case c == '&':
		l.ampersand()
	case c == '|':
		l.bar()
	default:
		l.add(string(c))
	}
}

func (l *lexer) add(s string) {
	l.word.WriteString(s)
	l.inWord = true
}

// escape is a backslash: a line continuation, or the next byte as is.
func (l *lexer) escape() {
	l.i++
	if l.line[l.i] == '\n' {
		l.endWord()
		return
	}
	l.add(l.line[l.i : l.i+1])
}

// singleQuoted takes '...' as it is.
func (l *lexer) singleQuoted() {
	rest := l.line[l.i+1:]
	j := strings.IndexByte(rest, '\'')
	if j < 0 {
		l.add(rest)
		l.i = len(l.line)
		return
	}
	l.add(rest[:j])
	l.i += j + 1
}

// doubleQuoted takes "..." with its escaped quotes.
func (l *lexer) doubleQuoted() {
	j := l.i + 1
	for j < len(l.line) && l.line[j] != '"' {
		if l.line[j] == '\\' && j+1 < len(l.line) {
			j++
		}
		j++
	}
	l.add(strings.ReplaceAll(l.line[l.i+1:min(j, len(l.line))], `\"`, `"`))
	l.i = j
}

// nested keeps a subshell, $( ), inside the word.
func (l *lexer) nested(c byte) {
	switch {
	case c == '(':
		l.depth++
	case c == ')' && l.depth > 0:
		l.depth--
	}
	l.add(string(c))
}

// ampersand is && (a new pipeline), a redirection (2>&1, &>file), or a
// background job (a new pipeline).
func (l *lexer) ampersand() {
	next := byte(0)
	if l.i+1 < len(l.line) {
		next = l.line[l.i+1]
	}
	switch {
	case next == '&':
		l.endPipe()
		l.i++
	case (l.i > 0 && (l.line[l.i-1] == '>' || l.line[l.i-1] == '<')) || next == '>':
		l.add("&")
	default:
		l.endPipe()
	}
}

// bar is || (a new pipeline) or | and |& (the next command of the pipe).
func (l *lexer) bar() {
	if l.i+1 < len(l.line) && l.line[l.i+1] == '|' {
		l.endPipe()
		l.i++
		return
	}
	l.endCmd()
	if l.i+1 < len(l.line) && l.line[l.i+1] == '&' {
		l.i++
	}
}

func (l *lexer) endWord() {
	if !l.inWord {
		return
	}
	l.words = append(l.words, l.word.String())
	if d, ok := heredocMarker(l.words); ok {
		l.heredoc = append(l.heredoc, d)
	}
	l.word.Reset()
	l.inWord = false
}

func (l *lexer) endCmd() {
	l.endWord()
	if len(l.words) > 0 {
		l.cur = append(l.cur, l.words)
	}
	l.words = nil
}

func (l *lexer) endPipe() {
	l.endCmd()
	if len(l.cur) > 0 {
		l.out = append(l.out, l.cur)
	}
	l.cur = nil
}

// heredocMarker tells whether the words so far end in a heredoc operator
// and its delimiter (<<EOF, << 'EOF', <<-EOF), and returns the delimiter.
func heredocMarker(words []string) (string, bool) {
	n := len(words)
	last := words[n-1]
	for _, op := range []string{"<<-", "<<"} {
		if rest, ok := strings.CutPrefix(last, op); ok && rest != "" && !strings.HasPrefix(rest, "<") {
			return rest, true
		}
	}
	if n >= 2 && (words[n-2] == "<<" || words[n-2] == "<<-") && last != "" {
		return last, true
	}
	return "", false
}

// skipHeredoc skips the body of a heredoc that starts at i and returns the
// index of the newline that ends its delimiter line (or the end of line).
func skipHeredoc(line string, i int, delim string) int {
	for i < len(line) {
		end := strings.IndexByte(line[i:], '\n')
		if end < 0 {
			return len(line)
		}
		end += i
		if strings.TrimSpace(line[i:end]) == delim {
			return end
		}
		i = end + 1
	}
	return len(line)
}

// IsAssignment tells an environment assignment (NAME=value) that leads
// a command from a word of the command.
func IsAssignment(w string) bool {
	i := strings.IndexByte(w, '=')
	if i <= 0 {
		return false
	}
	for j := 0; j < i; j++ {
		c := w[j]
		if c != '_' && (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') && (j == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// wrappers only run another command: the words after them (and their own
// flags) are the command that does the work.
var wrappers = map[string]bool{"env": true, "time": true, "sudo": true, "nohup": true, "nice": true,
	"command": true, "exec": true, "xvfb-run": true, "npx": true, "bunx": true, "pnpx": true, "dotenv": true}

// program strips what only runs another command (environment assignments,
// time, timeout, npx, bundle exec, python -m, ...) and returns the words of
// the command that does the work. Redirections are dropped.
func Program(words []string) []string {
	w := DropRedirects(words)
	for len(w) > 0 {
		next, ok := Unwrap(w)
		if !ok {
			return w
		}
		w = next
	}
	return w
}

// DropRedirects leaves out redirections and their targets.
func DropRedirects(words []string) []string {
	var w []string
	for i := 0; i < len(words); i++ {
		switch x := words[i]; {
		case x == ">" || x == ">>" || x == "<" || x == "2>" || x == "2>>" || x == "&>":
			i++ // and its target
		case IsRedirect(x):
		default:
			w = append(w, x)
		}
	}
	return w
}

// runVia are tools whose exec or run subcommand runs another program.
var runVia = map[string]bool{"bundle": true, "pnpm": true, "poetry": true, "uv": true, "pipenv": true,
	"hatch": true, "pdm": true}

// Unwrap returns the command w runs when w only runs another one.
func Unwrap(w []string) ([]string, bool) {
	base := path.Base(w[0])
	switch {
	case IsAssignment(w[0]):
		return w[1:], true
	case wrappers[base]:
		w = w[1:]
		for len(w) > 0 && (strings.HasPrefix(w[0], "-") || IsAssignment(w[0])) {
			w = w[1:]
		}
		return w, true
	case base == "timeout":
		w = w[1:]
		for len(w) > 0 && strings.HasPrefix(w[0], "-") {
			w = w[1:]
		}
		if len(w) > 0 {
			w = w[1:] // the duration
		}
		return w, true
	case runVia[base] && len(w) > 1 && (w[1] == "exec" || w[1] == "run") && !(base == "pnpm" && w[1] == "run"):
		return w[2:], true // pnpm run is a script, not a program
	case strings.HasPrefix(base, "python") && len(w) > 2 && w[1] == "-m":
		return w[2:], true
	}
	return w, false
}

func IsRedirect(w string) bool {
	return w == "2>&1" || w == "1>&2" || w == ">&2" || strings.HasPrefix(w, ">") || strings.HasPrefix(w, "2>") ||
		strings.HasPrefix(w, "&>") || strings.HasPrefix(w, "<")
}

// RedirectTargets lists the files a command's output is written to (> f,
// >> f, &> f, tee f); /dev/null and descriptors are not files.
func RedirectTargets(words []string) []string {
	var out []string
	add := func(p string) {
		if p != "" && !strings.HasPrefix(p, "&") && !strings.HasPrefix(p, "/dev/") {
			out = append(out, p)
		}
	}
	for i, w := range words {
		switch {
		case w == ">" || w == ">>" || w == "&>" || w == "1>":
			if i+1 < len(words) {
				add(words[i+1])
			}
		case strings.HasPrefix(w, ">>"):
			add(w[2:])
		case strings.HasPrefix(w, "&>") || strings.HasPrefix(w, "1>"):
			add(w[2:])
		case strings.HasPrefix(w, ">") && !strings.HasPrefix(w, ">&"):
			add(w[1:])
		}
	}
	return out
}
