package handoff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// section indexes the Markdown's sections, in the order docs/contract.md fixes
// (Requests and Tasks sit between Task and Files modified).
type section int

const (
	secTask section = iota
	secRequests
	secTasks
	secFiles
	secWork
	secDecisions
	secTests
	secErrors
	secBlockers
	secNext
	secContext
	numSections
)

var headings = [numSections]string{"Task", "Requests", "Tasks", "Files modified", "Working set", "Decisions",
	"Tests run", "Errors", "Blockers", "Next steps", "Context"}

// trimOrder is the order in which lists give way to a budget: the least
// needed first. Tasks done come first (the next steps hold the open ones),
// then the files, errors, decisions, requests, the working set, and next
// steps last. The task is shortened only after every list has given way.
var trimOrder = []section{secTests, secTasks, secFiles, secBlockers, secErrors, secDecisions, secRequests, secWork,
	secNext}

// none stands for an empty section.
const none = "_none_"

// layout says how much of each part of a document to show.
type layout struct {
	keep       [numSections]int // items shown; -1 for all
	itemMax    [numSections]int // runes per item; 0 for no limit
	taskMax    int
	contextMax int
}

func fullLayout() layout {
	var l layout
	for i := range l.keep {
		l.keep[i] = -1
	}
	return l
}

// Render writes d as Markdown within budget tokens as counted by count
// (budget <= 0 means DefaultBudget; a nil count means ApproxTokens).
//
// The Markdown starts with a frontmatter block (id when set, session,
// project, branch, created, trigger), then has every section in order, an
// empty one as _none_. Paths under the project are shown relative to it.
// When the whole document does not fit, long items are shortened first;
// then lists give way by priority (trimOrder), each cut to its first (or,
// for requests, latest) items and a "… +N more" line; then what is left,
// the task last, is shortened further. Cuts fall between runes, never
// inside one.
//
// For any budget >= MinBudget the result fits and keeps the task and at
// least one next step (when there are any), shortened if need be, unless
// the frontmatter alone is too big (a project path of hundreds of
// characters).
func Render(d Doc, budget int, count func(string) int) string {
	if budget <= 0 {
		budget = DefaultBudget
	}
	if count == nil {
		count = ApproxTokens
	}
	return newRenderer(d).fit(budget, count, true)
}

// fit is Render on r's document. With prune, a layout that shows more
// items of a list than its cap (listCap) is known not to fit and is not
// written out: a 50k-message session's thousands of requests are neither
// written nor counted at each trial. Without it every trial is written
// whole; tests check that both give the same Markdown.
func (r *renderer) fit(budget int, count func(string) int, prune bool) string {
	fits := func(l layout) (string, bool) {
		if prune && r.overflows(l, budget, count) {
			return "", false
		}
		s := r.render(l)
		return s, count(s) <= budget
	}
	n := r.n
	l := fullLayout()
	if s, ok := fits(l); ok {
		return s
	}
	// Long items first: a 300-rune decision is rarely worth a file.
	for i := range l.itemMax {
		l.itemMax[i] = 200
	}
	l.itemMax[secTests] = 120
	l.itemMax[secWork] = 0 // its lines give way whole, least recent first
	l.itemMax[secNext] = 0 // what to do next is never cut short while lists can give way
	l.taskMax, l.contextMax = 1200, 300
	if s, ok := fits(l); ok {
		return s
	}
	// Then whole items, by priority: the first section whose cut makes
	// the document fit keeps as many items as fit.
	for _, sec := range trimOrder {
		floor := 0
		if sec == secNext && n[sec] > 0 {
			floor = 1
		}
		if n[sec] <= floor {
			continue
		}
		l.keep[sec] = floor
		if _, ok := fits(l); !ok {
			continue
		}
		// floor fits, all of them do not: find the largest k that fits.
		lo, hi := floor, n[sec]-1
		for lo < hi {
			mid := (lo + hi + 1) / 2
			l.keep[sec] = mid
			if _, ok := fits(l); ok {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		l.keep[sec] = lo
		s, _ := fits(l)
		return s
	}
	// Everything is cut to the bone: shorten what is left, the task last.
	for _, step := range []struct{ item, next, context, task int }{
		{100, 120, 160, 600}, {80, 100, 120, 400}, {60, 80, 80, 300}, {40, 60, 60, 200},
		{30, 50, 40, 120}, {20, 40, 30, 80}, {10, 30, 20, 60},
	} {
		for i := range l.itemMax {
			l.itemMax[i] = step.item
		}
		l.itemMax[secNext] = step.next
		l.contextMax, l.taskMax = step.context, step.task
		if s, ok := fits(l); ok {
			return s
		}
	}
	return r.render(l)
}

// overflows reports whether layout l shows more items of some list than
// fit in budget on their own (see listCap): then the whole document, which
// holds that section's lines and more, cannot fit either.
func (r *renderer) overflows(l layout, budget int, count func(string) int) bool {
	for _, sec := range trimOrder {
		k := l.keep[sec]
		if k < 0 || k > r.n[sec] {
			k = r.n[sec]
		}
		if k > pruneFrom && k > r.listCap(sec, l.itemMax[sec], budget, count) {
			return true
		}
	}
	return false
}

// pruneFrom is the longest list overflows leaves to the trial itself.
const pruneFrom = 16

// listCap is the most items of list sec, each shortened to max runes,
// whose section alone stays within budget tokens: the section with one
// more overflows it. It is measured once per list, length and budget, by
// doubling the items kept and then halving the gap.
func (r *renderer) listCap(sec section, max, budget int, count func(string) int) int {
	key := capKey{sec: sec, max: max, budget: budget}
	if c, ok := r.caps[key]; ok {
		return c
	}
	l := fullLayout()
	l.itemMax[sec] = max
	over := func(k int) bool {
		l.keep[sec] = k
		return count(r.section(l, sec)) > budget
	}
	n := r.n[sec]
	lo, hi := 0, pruneFrom // within budget at lo (none), over at hi
	for hi < n && !over(hi) {
		lo, hi = hi, hi*2
	}
	c := n
	if hi < n || over(n) {
		hi = min(hi, n)
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			if over(mid) {
				hi = mid
			} else {
				lo = mid
			}
		}
		c = lo
	}
	r.caps[key] = c
	return c
}

// lists gives the number of items of each list section.
func lists(d Doc) [numSections]int {
	var n [numSections]int
	n[secRequests] = len(shownRequests(d))
	shown, _ := tasksShown(shownTasks(d), -1)
	n[secTasks] = len(shown)
	n[secFiles] = max(len(d.Files), len(d.FilesModified))
	n[secDecisions] = len(d.Decisions)
	n[secTests] = len(d.TestsRun)
	n[secErrors] = len(d.Errors)
	n[secBlockers] = len(d.Blockers)
	n[secNext] = len(d.NextSteps)
	n[secWork] = len(workLines(d))
	return n
}

// shownRequests are the requests the Requests section lists, numbered:
// the task is request 1 when it was read from the conversation, and is
// not repeated.
func shownRequests(d Doc) []string {
	reqs := d.Requests
	if len(reqs) > 0 && reqs[0] == d.Task {
		reqs = reqs[1:]
	}
	return reqs
}

// requestBase is the number of the first shown request less one.
func requestBase(d Doc) int {
	if len(d.Requests) > 0 && d.Requests[0] == d.Task {
		return 1
	}
	return 0
}

// shownTasks are the tracker items the Tasks section lists: those done or
// deleted, and the open ones the next steps do not hold (an epic, which
// groups the others), whatever their state.
func shownTasks(d Doc) []Task {
	inNext := map[string]bool{}
	for _, s := range d.NextSteps {
		// As taskLine writes it: a hand-written "[pending] 7" is #7's line.
		if t, ok := parseTaskLine(s); ok {
			inNext[taskLine(t)] = true
		}
	}
	var out []Task
	for _, t := range d.Tasks {
		if !t.Open() || !inNext[taskLine(t)] {
			out = append(out, t)
		}
	}
	return out
}

// maxDoneShown is how many of the done items the Tasks section lists, the
// latest: the rest are a count. (A shared list's dozens of done items
// would take the room of the files in use.)
const maxDoneShown = 4

// tasksShown are the items of the Tasks section kept at keep (< 0: all):
// the open ones first, then the latest done ones; and how many done ones
// are left out.
func tasksShown(tasks []Task, keep int) ([]Task, int) {
	var open, closed []Task
	for _, t := range tasks {
		if t.Open() {
			open = append(open, t)
		} else {
			closed = append(closed, t)
		}
	}
	if keep < 0 {
		keep = len(tasks)
	}
	open = open[:min(len(open), keep)]
	n := min(len(closed), maxDoneShown, keep-len(open))
	return append(open, closed[len(closed)-n:]...), len(closed) - n
}

// writeTasks writes the Tasks section: the open items, then "… +N more"
// for the done items left out, then the latest done ones.
func writeTasks(b *strings.Builder, tasks []Task, keep, max int) {
	if len(tasks) == 0 {
		b.WriteString(none + "\n")
		return
	}
	shown, more := tasksShown(tasks, keep)
	wroteMore := false
	for _, t := range shown {
		if !t.Open() && !wroteMore && more > 0 {
			fmt.Fprintf(b, "- … +%d more\n", more)
			wroteMore = true
		}
		b.WriteString("- " + escapeItem(singleLine(shorten(taskLine(t), max))) + "\n")
	}
	if !wroteMore && more > 0 {
		fmt.Fprintf(b, "- … +%d more\n", more)
	}
}

// render writes d in layout l (see renderer).
func render(d Doc, l layout) string {
	r := renderer{d: d}
	return r.render(l)
}

// renderer writes one document in the layouts Render tries. A section's
// text depends only on its own part of the layout, and most trials change
// one section: each section is written once per layout of its own, and
// kept, as are the lists' caps. (A request list of thousands, in a long
// session's handoff, was written again at each of Render's trials.) A
// resume fits the same document to several budgets with one renderer.
type renderer struct {
	d        Doc
	n        [numSections]int      // items of each list
	sections map[sectionKey]string // nil: keep nothing
	caps     map[capKey]int
	requests map[itemKey]string // shortened requests
}

func newRenderer(d Doc) *renderer {
	return &renderer{d: d, n: lists(d), sections: map[sectionKey]string{}, caps: map[capKey]int{}, requests: map[itemKey]string{}}
}

type capKey struct {
	sec         section
	max, budget int
}

type sectionKey struct {
	sec        section
	keep, max  int
	taskMax    int
	contextMax int
}

func (r *renderer) render(l layout) string {
	d := r.d
	var b strings.Builder
	b.WriteString("---\n")
	if d.ID != 0 {
		frontmatter(&b, "id", strconv.FormatInt(d.ID, 10))
	}
	frontmatter(&b, "session", d.Session)
	frontmatter(&b, "project", d.Project)
	frontmatter(&b, "branch", d.Branch)
	created := ""
	if !d.CreatedAt.IsZero() {
		created = d.CreatedAt.UTC().Format(time.RFC3339Nano)
	}
	b.WriteString("created: " + created + "\n")
	frontmatter(&b, "trigger", d.Trigger)
	b.WriteString("---\n# Handoff\n")

	for sec := secTask; sec < numSections; sec++ {
		b.WriteString("\n## " + headings[sec] + "\n")
		b.WriteString(r.section(l, sec))
	}
	return b.String()
}

// section is the body of one section in layout l.
func (r *renderer) section(l layout, sec section) string {
	key := sectionKey{sec: sec, keep: l.keep[sec], max: l.itemMax[sec]}
	switch sec {
	case secTask:
		key.taskMax = l.taskMax
	case secContext:
		key.contextMax = l.contextMax
	}
	text, ok := r.sections[key]
	if !ok {
		text = r.writeSection(l, sec)
		if r.sections != nil {
			r.sections[key] = text
		}
	}
	return text
}

// writeSection writes one section's body in layout l.
func (r *renderer) writeSection(l layout, sec section) string {
	d := r.d
	var b strings.Builder
	switch sec {
	case secTask:
		writeText(&b, shortenMiddle(d.Task, l.taskMax))
	case secContext:
		writeText(&b, shorten(d.Context, l.contextMax))
	case secRequests:
		writeNumbered(&b, shownRequests(d), requestBase(d), l.keep[sec], l.itemMax[sec], r.request)
	case secTasks:
		writeTasks(&b, shownTasks(d), l.keep[sec], l.itemMax[sec])
	case secFiles:
		writeItems(&b, fileItems(d, l.itemMax[sec]), l.keep[sec])
	case secWork:
		writeWorking(&b, d, l.keep[sec], l.itemMax[sec])
	case secDecisions:
		writeList(&b, d.Decisions, l.keep[sec], l.itemMax[sec])
	case secErrors:
		writeList(&b, d.Errors, l.keep[sec], l.itemMax[sec])
	case secBlockers:
		writeList(&b, d.Blockers, l.keep[sec], l.itemMax[sec])
	case secNext:
		writeList(&b, d.NextSteps, l.keep[sec], l.itemMax[sec])
	case secTests:
		items := make([]string, len(d.TestsRun))
		for i, t := range d.TestsRun {
			items[i] = codeSpan(singleLine(shorten(t.Command, l.itemMax[sec])))
			if t.Status != "" {
				items[i] += " — " + singleLine(t.Status)
			}
		}
		writeItems(&b, items, l.keep[sec])
	}
	return b.String()
}

// fileItems shows each changed file: its path (relative to the project),
// where it was moved from, and what else is worth knowing about it: new,
// deleted, uncommitted.
func fileItems(d Doc, max int) []string {
	if len(d.Files) == 0 {
		items := make([]string, len(d.FilesModified))
		for i, p := range d.FilesModified {
			items[i] = escapeItem(singleLine(shorten(showPath(p, d.Project), max)))
		}
		return items
	}
	items := make([]string, len(d.Files))
	for i, f := range d.Files {
		s := showPath(f.Path, d.Project)
		if f.From != "" {
			s = showPath(f.From, d.Project) + movedArrow + s
		}
		var notes []string
		switch f.Status {
		case FileAdded:
			notes = append(notes, "new")
		case FileDeleted:
			notes = append(notes, "deleted")
		}
		if f.Git == GitUncommitted {
			notes = append(notes, "uncommitted")
		}
		s = escapeItem(singleLine(shorten(s, max)))
		if len(notes) > 0 {
			s += " (" + strings.Join(notes, ", ") + ")"
		}
		items[i] = s
	}
	return items
}

// movedArrow joins a moved file's old and new paths.
const movedArrow = " → "

// A frontmatter value is written bare when nothing in it could be misread
// (by us or by a YAML reader), else as a JSON string, which YAML reads as a
// double-quoted scalar.
var bareValue = lazyRegexp(`^[A-Za-z0-9_./][A-Za-z0-9_./@+=,~-]*$`)

func frontmatter(b *strings.Builder, key, value string) {
	b.WriteString(key + ":")
	switch {
	case value == "":
	case bareValue.MatchString(value):
		b.WriteString(" " + value)
	default:
		b.WriteString(" " + quote(value))
	}
	b.WriteByte('\n')
}

func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

func writeText(b *strings.Builder, text string) {
	if text == "" {
		b.WriteString(none + "\n")
		return
	}
	for _, line := range strings.Split(text, "\n") {
		b.WriteString(escapeLine(line) + "\n")
	}
}

func writeList(b *strings.Builder, list []string, keep, max int) {
	if keep < 0 || keep > len(list) {
		keep = len(list)
	}
	// Only the items shown are shortened: writeItems counts the others.
	items := make([]string, len(list))
	for i, s := range list[:keep] {
		items[i] = escapeItem(singleLine(shorten(s, max)))
	}
	writeItems(b, items, keep)
}

// request is shown request i shortened to max runes: kept, since the
// layouts Render tries show the same latest requests again and again.
func (r *renderer) request(list []string, i, max int) string {
	if r.requests == nil {
		return shortenMiddle(list[i], max)
	}
	k := itemKey{i, max}
	s, ok := r.requests[k]
	if !ok {
		s = shortenMiddle(list[i], max)
		r.requests[k] = s
	}
	return s
}

type itemKey struct{ i, max int }

// writeNumbered writes a numbered list starting at base+1; when cut, it
// keeps the latest items, each shortened by short.
func writeNumbered(b *strings.Builder, list []string, base, keep, max int, short func(list []string, i, max int) string) {
	if len(list) == 0 {
		b.WriteString(none + "\n")
		return
	}
	if keep < 0 || keep > len(list) {
		keep = len(list)
	}
	if more := len(list) - keep; more > 0 {
		fmt.Fprintf(b, "- … +%d more\n", more)
	}
	for i := len(list) - keep; i < len(list); i++ {
		fmt.Fprintf(b, "%d. %s\n", base+i+1, escapeItem(singleLine(short(list, i, max))))
	}
}

func writeItems(b *strings.Builder, items []string, keep int) {
	if len(items) == 0 {
		b.WriteString(none + "\n")
		return
	}
	if keep < 0 || keep > len(items) {
		keep = len(items)
	}
	for _, s := range items[:keep] {
		b.WriteString("- " + s + "\n")
	}
	if more := len(items) - keep; more > 0 {
		fmt.Fprintf(b, "- … +%d more\n", more)
	}
}

// Free text is kept as it is, except that a line that could be read as a
// heading, as the empty marker or as an escape gets a backslash in front.
func escapeLine(line string) string {
	if strings.HasPrefix(line, "#") || strings.HasPrefix(line, `\`) || line == none {
		return `\` + line
	}
	return line
}

var moreLine = lazyRegexp(`^… \+\d+ more$`)

// An item that starts like an escape or reads like the "+N more" line gets
// a backslash in front.
func escapeItem(s string) string {
	if strings.HasPrefix(s, `\`) || moreLine.MatchString(s) {
		return `\` + s
	}
	return s
}

// singleLine keeps a list item on its line. Extract never makes items with
// newlines; a hand-made document's items lose theirs.
func singleLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

// codeSpan writes s as Markdown inline code: the fence is one backtick
// longer than any run of backticks in s, and s is padded with a space on
// each side when it starts or ends with a space or a backtick.
func codeSpan(s string) string {
	run, longest := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if s == "" || s[0] == ' ' || s[0] == '`' || s[len(s)-1] == ' ' || s[len(s)-1] == '`' {
		s = " " + s + " "
	}
	return fence + s + fence
}

// projectPrefix is what a path under project starts with: the project
// and its separator (a backslash for a Windows folder such as
// C:\Users\me\app).
func projectPrefix(project string) string {
	sep := pathSep(project)
	return strings.TrimRight(project, sep) + sep
}

// pathSep is the separator of a folder's path: a backslash when it has
// backslashes and no slash, else a slash.
func pathSep(dir string) string {
	if strings.Contains(dir, `\`) && !strings.Contains(dir, "/") {
		return `\`
	}
	return "/"
}

// relTo returns p relative to project when p is under it and the relative
// form cannot be mistaken for anything else on the way back.
func relTo(p, project string) (string, bool) {
	if project == "" {
		return "", false
	}
	rest, ok := strings.CutPrefix(p, projectPrefix(project))
	if !ok || rest == "" || isAbs(rest) || strings.HasPrefix(rest, "./") {
		return "", false
	}
	return rest, true
}

// showPath is a file as the Markdown shows it: relative to the project
// when under it, absolute when outside, and "./" before a path that was
// relative to begin with, so that parsing can tell them apart.
func showPath(p, project string) string {
	if r, ok := relTo(p, project); ok {
		return r
	}
	if project != "" && !isAbs(p) {
		return "./" + p
	}
	return p
}

// readPath undoes showPath.
func readPath(s, project string) string {
	if project == "" || isAbs(s) {
		return s
	}
	if rest, ok := strings.CutPrefix(s, "./"); ok {
		return rest
	}
	return projectPrefix(project) + s
}
