package handoff

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Next steps, most pressing first: notes recorded on purpose, the tracker
// items in progress (with what is left of each), the pending ones, an
// approved plan, what still fails, the routine steps the work in progress
// has not been through, lines marked "next:", and the agent's last words.
// Completed or deleted items are never next steps.

// Prefixes of next steps that carry more than a plain sentence; Parse
// reads them back.
const (
	lastWordsLabel = "The agent's last words: "
	planLabel      = "Approved plan: "
	fixLabel       = "Fix what still fails: "
	routineLabel   = "Then finish as before: "
)

// taskLabels are the Markdown's words for task statuses.
var taskLabels = sync.OnceValue(func() map[string]string {
	return map[string]string{TaskInProgress: "in progress", TaskPending: "pending", TaskBlocked: "blocked",
		TaskCompleted: "done", TaskDeleted: "deleted"}
})

// taskLine is how a task is shown: "[in progress] spotter-gqc.6: Close …".
func taskLine(t Task) string {
	var b strings.Builder
	b.WriteString("[" + taskLabels()[t.Status] + "] ")
	if t.ID != "" {
		id := t.ID
		if _, err := strconv.Atoi(id); err == nil {
			id = "#" + id
		}
		b.WriteString(id)
		if t.Subject == "" {
			return b.String()
		}
		b.WriteString(": ")
	}
	b.WriteString(singleLine(t.Subject))
	return b.String()
}

var reTaskItem = lazyRegexp(`^\[(in progress|pending|blocked|done|deleted)\] (?:(#?[\w.-]+)(?:: |$))?(.*)$`)

// parseTaskLine undoes taskLine.
func parseTaskLine(s string) (Task, bool) {
	m := reTaskItem.FindStringSubmatch(s)
	if m == nil {
		return Task{}, false
	}
	t := Task{ID: strings.TrimPrefix(m[2], "#"), Subject: m[3]}
	for status, label := range taskLabels() {
		if label == m[1] {
			t.Status = status
		}
	}
	return t, true
}

func (x *extractor) nextSteps(tasks []Task) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) { out = appendUnique(out, seen, s) }
	for _, n := range x.opts.Notes {
		if n.Kind == NoteNext {
			add(itemText(n.Text))
		}
	}
	for _, t := range tasks {
		if t.Status == TaskInProgress && !x.tracker.hasChildren(t.ID) {
			add(taskLine(t))
			if t.Detail != "" {
				add("still to do for " + firstNonEmpty(t.ID, "it") + ": " + t.Detail)
			}
		}
	}
	for _, t := range tasks {
		if (t.Status == TaskPending || t.Status == TaskBlocked) && !x.tracker.hasChildren(t.ID) {
			add(taskLine(t))
		}
	}
	if x.plan.text != "" && x.tracker.count() == x.plan.tasksAt {
		// Once the plan became tracker items, they say what is left of it.
		add(planLabel + planSummary(x.plan.text))
	}
	if open := x.errs.open; len(open) > 0 {
		s := fixLabel + open[len(open)-1].text
		if len(open) > 1 {
			s += fmt.Sprintf(" (and %d more under Errors)", len(open)-1)
		}
		add(s)
	}
	if steps := x.routineSteps(); len(steps) > 0 {
		add(routineLabel + strings.Join(steps, ", "))
	}
	subjects := map[string]bool{}
	for _, t := range tasks {
		subjects[t.Subject] = true
	}
	for _, n := range x.notes {
		if !subjects[n] {
			add(n)
		}
	}
	if x.prose.lastWords != "" {
		add(lastWordsLabel + quoteWords(x.prose.lastWords))
	}
	return out
}

func quoteWords(s string) string { return "“" + s + "”" }

// planSummary is a plan on one line: its title, then its items.
func planSummary(plan string) string {
	var title string
	var items []string
	for _, l := range strings.Split(plan, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case t == "":
		case strings.HasPrefix(t, "#"):
			if title == "" {
				title = strings.TrimSpace(strings.TrimPrefix(strings.TrimLeft(t, "# "), "Plan:"))
			}
		case reListMarker.MatchString(t):
			items = append(items, strings.TrimSpace(undecorate(t)))
		}
	}
	s := title
	if len(items) > 0 {
		if s != "" {
			s += ": "
		}
		s += strings.Join(items, "; ")
	}
	if s == "" {
		s = oneLine(plan)
	}
	return shorten(oneLine(s), 240)
}

// taskDetail says what is left of an item in progress, from its
// description: its definition of done. (The files it names are in the
// working set.)
func (x *extractor) taskDetail(it *trackedTask) string {
	if it.description == "" {
		return ""
	}
	if done := doneCriteria(it.description); len(done) > 0 {
		return shorten("done when "+strings.Join(done, "; "), maxItem)
	}
	return ""
}

var (
	reDoneHeading = lazyRegexp(`(?i)^(?:#+\s*)?(?:\*\*)?(?:definition of done|acceptance criteria|done when|success criteria|exit criteria|tests?)(?:\*\*)?:?\s*$`)
)

// doneCriteria are the bullets under a "Definition of Done" heading.
func doneCriteria(desc string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(desc, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case reDoneHeading.MatchString(t):
			in = true
			continue
		case !in:
			continue
		case t == "":
			if len(out) > 0 {
				return out
			}
			continue
		case !reListMarker.MatchString(t):
			return out
		}
		out = append(out, shorten(strings.TrimRight(undecorate(t), ".;"), 120))
		if len(out) == 4 {
			return out
		}
	}
	return out
}

// joinItems joins lines into one, a list's items with "; ".
func joinItems(lines []string) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			if strings.HasSuffix(lines[i-1], ":") || strings.HasSuffix(lines[i-1], ".") {
				b.WriteString(" ")
			} else {
				b.WriteString("; ")
			}
		}
		b.WriteString(l)
	}
	return b.String()
}

var reMarked = lazyRegexp(`(?i)^(?:decision|next|next step|blocker):`)

// unmarked is text without its marked lines (decision:, next:, blocker:),
// which have their own place in the handoff.
func unmarked(text string) string {
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if !reMarked.MatchString(undecorate(strings.TrimSpace(l))) {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

var reNextHeading = lazyRegexp(`(?i)^(?:#+\s*|\*\*)?(?:next steps?|what'?s next|remaining(?: work| tasks| steps)?|still (?:to do|needed|pending|left)|to ?do|pending|follow[- ]ups?|what'?s left|left to do)\b.*$`)

// lastWordsOf is the part of the agent's last text that looks ahead: what
// follows a "Next steps" heading when there is one, else its last
// paragraph.
func lastWordsOf(text string) string {
	text = clean(text)
	if text == "" {
		return ""
	}
	text = unmarked(text)
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if !reNextHeading.MatchString(strings.Trim(strings.TrimSpace(l), "*:")) {
			continue
		}
		var b []string
		for _, n := range lines[i+1:] {
			t := strings.TrimSpace(n)
			if strings.HasPrefix(t, "#") {
				break
			}
			if t != "" {
				b = append(b, undecorate(t))
			}
		}
		if len(b) > 0 {
			return shorten(oneLine(joinItems(b)), maxLastWords)
		}
	}
	paras := paragraphs(text)
	if len(paras) == 0 {
		return ""
	}
	return shorten(oneLine(paras[len(paras)-1].text), maxLastWords)
}
