package handoff

import (
	"path"
	"strings"

	"github.com/agentledger/ledger/compact"
)

// What an agent used after a compaction, read the way the working set is:
// the files it read or changed, the commands it ran (git aside), the tests
// its test commands named, the tracker items it worked on. A compaction's
// summary (or ledger's handoff) served the agent as far as it carried
// these; `ledger audit --loss` measures that on the ledger's own
// transcripts.

// Kinds of used items.
const (
	UsedFile    = "file"
	UsedCommand = "command"
	UsedTest    = "test"
	UsedTask    = "task"
)

// DefaultUsedCalls is how many tool calls of the main conversation after
// a compaction make the working set it is measured against.
const DefaultUsedCalls = 40

// UsedItem is one thing an agent used.
type UsedItem struct {
	Kind string `json:"kind"`
	// Text is how the item reads: a path (relative to the project), a
	// command ("mix test"), a test, a task ("proj-7: subject").
	Text string `json:"text"`
	path string // a file's absolute path
	id   string // a task's id
	subj string // a task's subject
}

// UsedOptions say how to read what was used.
type UsedOptions struct {
	Project string
	// Calls is how many tool calls of the main conversation count (0:
	// DefaultUsedCalls).
	Calls int
	// Before are the tracker items at the cut: a to-do item (TodoWrite,
	// update_plan) counts when its status changes.
	Before []Task
}

// UsedAfter reads what the agent used in msgs, the messages after a cut:
// its first o.Calls tool calls of the main conversation and their results.
func UsedAfter(msgs []compact.Message, o UsedOptions) []UsedItem {
	limit := o.Calls
	if limit <= 0 {
		limit = DefaultUsedCalls
	}
	x := newExtractor(ExtractOptions{Project: o.Project})
	for i, m := range msgs {
		if x.work.calls >= limit {
			// Only the results of the calls already made.
			var rest []compact.Block
			for _, b := range m.Blocks {
				if b.Kind == compact.BlockToolResult {
					rest = append(rest, b)
				}
			}
			if len(rest) == 0 {
				continue
			}
			m.Blocks = rest
		} else if !m.Sidechain {
			// Stop at the window: calls past it in one message are left out.
			var keep []compact.Block
			n := x.work.calls
			for _, b := range m.Blocks {
				if b.Kind == compact.BlockToolUse {
					if n >= limit {
						continue
					}
					n++
				}
				keep = append(keep, b)
			}
			m.Blocks = keep
		}
		x.seq = i
		x.message(m)
	}
	var out []UsedItem
	seen := map[string]bool{}
	add := func(it UsedItem) {
		k := it.Kind + "\x00" + it.Text
		if it.Text != "" && !seen[k] {
			seen[k] = true
			out = append(out, it)
		}
	}
	// Files in the order they were first used... by their latest use
	// here, which is what a reader scans.
	for _, f := range x.workingSetFiles() {
		add(UsedItem{Kind: UsedFile, Text: showPath(f, o.Project), path: f})
	}
	for _, k := range x.work.cmdOrder {
		add(UsedItem{Kind: UsedCommand, Text: k})
	}
	for _, t := range x.tests.runs {
		sc := analyzeShell(t.Command).scope
		for _, p := range sc.paths {
			if b := path.Base(p); reExt.MatchString(b) {
				add(UsedItem{Kind: UsedTest, Text: b})
			}
		}
		for _, f := range strings.Fields(sc.filter) {
			if _, v, ok := strings.Cut(f, "="); ok && len(v) >= 3 {
				add(UsedItem{Kind: UsedTest, Text: v})
			}
		}
	}
	before := map[string]string{}
	for _, t := range o.Before {
		if t.ID == "" {
			before[t.Subject] = t.Status
		}
	}
	items := map[string]*trackedTask{}
	for k, it := range x.tracker.items {
		items[k] = it
	}
	for _, key := range x.tracker.named {
		if it := items[key]; it != nil {
			add(taskItem(it.Task))
		}
	}
	for _, it := range append(append([]*trackedTask(nil), x.tracker.todo...), x.tracker.plan...) {
		if was, ok := before[it.Subject]; ok && was != it.Status {
			add(taskItem(it.Task))
		}
	}
	return out
}

func taskItem(t Task) UsedItem {
	text := t.Subject
	if t.ID != "" {
		text = taskName(t)
		if t.Subject != "" {
			text += ": " + t.Subject
		}
	}
	return UsedItem{Kind: UsedTask, Text: text, id: t.ID, subj: t.Subject}
}

// workingSetFiles are every file the agent used, latest first.
func (x *extractor) workingSetFiles() []string {
	var out []string
	for p := range x.work.files {
		out = append(out, p)
	}
	sortByLastUse(out, x.work.files)
	return out
}

func sortByLastUse(paths []string, files map[string]*workUse) {
	for i := 1; i < len(paths); i++ {
		for j := i; j > 0; j-- {
			a, b := files[paths[j-1]], files[paths[j]]
			if a.last > b.last || (a.last == b.last && paths[j-1] < paths[j]) {
				break
			}
			paths[j-1], paths[j] = paths[j], paths[j-1]
		}
	}
}

// ExistedIn tells whether text (what the session held before the cut)
// names the item: only what existed before can be asked of a summary.
func (it UsedItem) ExistedIn(text string) bool {
	switch it.Kind {
	case UsedFile:
		return (it.path != "" && strings.Contains(text, it.path)) ||
			(strings.Contains(it.Text, "/") && strings.Contains(text, it.Text)) ||
			(!strings.Contains(it.Text, "/") && hasName(text, it.Text))
	case UsedCommand:
		return hasCommand(text, it.Text)
	case UsedTask:
		return (it.id != "" && hasToken(text, it.id)) || (it.subj != "" && strings.Contains(text, it.subj))
	}
	return hasToken(text, it.Text)
}

// CarriedBy tells whether text (a summary, a handoff) carries the item: a
// file by its path or its name, a command as "program subcommand" (flags
// between allowed), a test by its name, a task by its id or most of its
// subject's words.
func (it UsedItem) CarriedBy(text string) bool {
	switch it.Kind {
	case UsedFile:
		return (it.path != "" && strings.Contains(text, it.path)) || strings.Contains(text, it.Text) ||
			hasName(text, path.Base(it.Text))
	case UsedCommand:
		return hasCommand(text, it.Text)
	case UsedTask:
		if it.id != "" && hasToken(text, it.id) {
			return true
		}
		return it.subj != "" && coversSubject(text, it.subj)
	}
	return hasToken(text, it.Text)
}

// coversSubject: the subject appears, or 70% of its words of four letters
// or more (at least two of them).
func coversSubject(text, subj string) bool {
	low := strings.Join(strings.Fields(strings.ToLower(text)), " ")
	s := strings.Join(strings.Fields(strings.ToLower(subj)), " ")
	if strings.Contains(low, s) {
		return true
	}
	need := words4(s)
	if len(need) < 2 {
		return false
	}
	have := words4(low)
	n := 0
	for w := range need {
		if have[w] {
			n++
		}
	}
	return n*10 >= len(need)*7
}

func words4(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r >= 0x80)
	}) {
		if len([]rune(w)) >= 4 {
			out[w] = true
		}
	}
	return out
}

// tokenByte is a byte a token continues with.
func tokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// hasToken tells whether tok appears in text as a whole token: not inside
// a longer word, name or path component.
func hasToken(text, tok string) bool {
	return findToken(text, tok, false) >= 0
}

// hasName is hasToken for a file name: a.go is not in xa.go nor in
// a.go.orig.
func hasName(text, name string) bool {
	return findToken(text, name, true) >= 0
}

func findToken(text, tok string, name bool) int {
	if tok == "" {
		return -1
	}
	for i := 0; i <= len(text)-len(tok); {
		j := strings.Index(text[i:], tok)
		if j < 0 {
			return -1
		}
		j += i
		end := j + len(tok)
		left := j == 0 || !(tokenByte(text[j-1]) || (name && text[j-1] == '.'))
		right := end == len(text) || !(tokenByte(text[end]) || (text[end] == '.' && end+1 < len(text) && tokenByte(text[end+1]) && text[end+1] != '-' && text[end+1] != '_'))
		if left && right {
			return j
		}
		i = j + 1
	}
	return -1
}

// hasCommand tells whether text names cmd ("prog sub"), flags between
// the two allowed: "tox -e integration" names "tox integration".
func hasCommand(text, cmd string) bool {
	prog, sub, ok := strings.Cut(cmd, " ")
	if !ok {
		return hasToken(text, cmd)
	}
	for i := 0; i < len(text); {
		j := findToken(text[i:], prog, false)
		if j < 0 {
			return false
		}
		k := i + j + len(prog)
		for {
			ws := k
			for ws < len(text) && (text[ws] == ' ' || text[ws] == '\t') {
				ws++
			}
			if ws == k || ws >= len(text) {
				break
			}
			if text[ws] == '-' {
				e := ws
				for e < len(text) && text[e] != ' ' && text[e] != '\t' && text[e] != '\n' {
					e++
				}
				k = e
				continue
			}
			if strings.HasPrefix(text[ws:], sub) {
				end := ws + len(sub)
				if end == len(text) || !tokenByte(text[end]) {
					return true
				}
			}
			break
		}
		i += j + 1
	}
	return false
}
