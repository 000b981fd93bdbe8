package handoff

import (
	"encoding/json"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// The agent's task trackers, newest state wins: Claude Code's TodoWrite
// (each call is the whole list) and Task tools (TaskCreate, TaskUpdate,
// TaskList, TaskGet), Codex's update_plan (the whole plan), and issue
// trackers driven from the shell: beads (bd) and GitHub (gh issue).
//
// An issue tracker holds far more than the session's work: a beads item
// counts once the session names it (create, update, close, reopen, show)
// or shows its parent, and listings (bd list, bd ready) only refresh the
// state of items already counted.

type trackedTask struct {
	Task
	order       int
	description string // what the tracker says the item asks for
	started     int    // message index it went in progress (-1: never seen)
	done        int    // message index it was completed (-1: not done)
}

type tracker struct {
	items map[string]*trackedTask // by tracker + "\x00" + id
	// todo and plan are the latest whole lists (TodoWrite, update_plan):
	// their items have no ids, and a new list replaces the old one.
	todo, plan []*trackedTask
	seen       int
	// named are the items a call named by id (TaskUpdate, TaskGet, bd
	// update/close/show/reopen), in order: what the agent worked on.
	named []string
}

// name records that a call named item id of tracker trk.
func (t *tracker) name(trk, id string) {
	if id != "" {
		t.named = append(t.named, trk+"\x00"+id)
	}
}

func newTracker() tracker { return tracker{items: map[string]*trackedTask{}} }

// normStatus maps every tracker's words onto the handoff's statuses.
func normStatus(s string) string {
	switch strings.ToLower(strings.TrimSpace(strings.ReplaceAll(s, " ", "_"))) {
	case "completed", "complete", "done", "closed", "resolved", "finished", "merged":
		return TaskCompleted
	case "in_progress", "in-progress", "inprogress", "active", "doing", "started", "working", "hooked":
		return TaskInProgress
	case "deleted", "cancelled", "canceled", "removed", "wontfix", "tombstone":
		return TaskDeleted
	case "blocked":
		return TaskBlocked
	}
	return TaskPending
}

// item returns the tracked item, creating it when create is set.
func (t *tracker) item(trk, id string, create bool) *trackedTask {
	if id == "" {
		return nil
	}
	key := trk + "\x00" + id
	it, ok := t.items[key]
	if !ok && create {
		t.seen++
		it = &trackedTask{Task: Task{ID: id, Tracker: trk, Status: TaskPending}, order: t.seen, started: -1, done: -1}
		t.items[key] = it
	}
	return it
}

// setStatus moves an item to status at message index seq.
func (it *trackedTask) setStatus(status string, seq int) {
	if status == "" {
		return
	}
	if status == TaskInProgress && it.Status != TaskInProgress {
		it.started = seq
	}
	if status == TaskCompleted && it.Status != TaskCompleted {
		it.done = seq
	}
	it.Status = status
}

func (it *trackedTask) setSubject(s string) {
	if s = shorten(oneLine(clean(s)), maxItem); s != "" {
		it.Subject = s
	}
}

// wholeList replaces a TodoWrite or update_plan list with its new state.
func (t *tracker) wholeList(prev []*trackedTask, in input, listKey, textKey, trk string, seq int) []*trackedTask {
	var items []map[string]any
	if raw, ok := in[listKey]; ok {
		if b, err := json.Marshal(raw); err == nil {
			_ = json.Unmarshal(b, &items)
		}
	}
	if items == nil {
		return prev
	}
	old := map[string]*trackedTask{}
	for _, it := range prev {
		old[it.Subject] = it
	}
	out := make([]*trackedTask, 0, len(items))
	for _, raw := range items {
		text, _ := raw[textKey].(string)
		status, _ := raw["status"].(string)
		subject := shorten(oneLine(clean(text)), maxItem)
		if subject == "" {
			continue
		}
		it, ok := old[subject]
		if !ok {
			t.seen++
			it = &trackedTask{Task: Task{Subject: subject, Tracker: trk, Status: TaskPending}, order: t.seen, started: -1, done: -1}
		}
		it.setStatus(normStatus(status), seq)
		out = append(out, it)
	}
	return out
}

var (
	reTaskCreated = lazyRegexp(`Task #(\w+) created successfully(?:: (.+))?`)
	reTaskLine    = lazyRegexp(`^#(\w+)\.?\s+\[([\w -]+)\]\s+(.+?)(?:\s+\[blocked by [^\]]*\])?$`)
	reTaskOwner   = lazyRegexp(`\s+\(\S+\)$`)
	reTaskGetHead = lazyRegexp(`^Task #(\w+):\s*(.+)$`)
	reTaskGetStat = lazyRegexp(`^Status:\s*(\w+)`)
)

// taskTool applies Claude Code's Task tools (the current default tracker).
func (t *tracker) taskTool(name string, in input, result string, seq int) {
	switch name {
	case "TaskCreate":
		m := reTaskCreated.FindStringSubmatch(result)
		if m == nil {
			return
		}
		it := t.item(TrackerTask, m[1], true)
		it.setSubject(firstNonEmpty(in.str("subject"), m[2]))
		it.description = in.str("description")
		it.setStatus(normStatus(firstNonEmpty(in.str("status"), TaskPending)), seq)
	case "TaskUpdate":
		t.name(TrackerTask, strings.TrimPrefix(in.str("taskId"), "#"))
		it := t.item(TrackerTask, strings.TrimPrefix(in.str("taskId"), "#"), true)
		if it == nil {
			return
		}
		it.setSubject(in.str("subject"))
		if d := in.str("description"); d != "" {
			it.description = d
		}
		if s := in.str("status"); s != "" {
			it.setStatus(normStatus(s), seq)
		}
	case "TaskList":
		for _, l := range strings.Split(result, "\n") {
			if m := reTaskLine.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
				it := t.item(TrackerTask, m[1], true)
				if it.Subject == "" {
					// "Subject (owner)": the list adds the owner's name
					it.setSubject(reTaskOwner.ReplaceAllString(m[3], ""))
				}
				it.setStatus(normStatus(m[2]), seq)
			}
		}
	case "TaskGet":
		t.name(TrackerTask, strings.TrimPrefix(in.str("taskId"), "#"))
		var it *trackedTask
		for _, l := range strings.Split(result, "\n") {
			l = strings.TrimSpace(l)
			if m := reTaskGetHead.FindStringSubmatch(l); m != nil && it == nil {
				it = t.item(TrackerTask, m[1], true)
				it.setSubject(m[2])
			} else if m := reTaskGetStat.FindStringSubmatch(l); m != nil && it != nil {
				it.setStatus(normStatus(m[1]), seq)
			} else if d, ok := strings.CutPrefix(l, "Description:"); ok && it != nil {
				it.description = strings.TrimSpace(d)
			}
		}
	}
}

// Beads prints a status symbol before an item: ○ open, ◐ in progress,
// ● blocked, ✓ closed, ❄ deferred.
var beadsSymbols = sync.OnceValue(func() map[string]string {
	return map[string]string{"○": TaskPending, "◐": TaskInProgress, "●": TaskBlocked, "✓": TaskCompleted,
		"❄": TaskPending, "✗": TaskDeleted, "⊘": TaskDeleted}
})

var (
	reBeadsID      = `([A-Za-z0-9][\w-]*-[\w]+(?:\.\d+)*)`
	reBeadsShow    = lazyRegexp(`^(?:([○◐●✓❄✗⊘])\s+)?` + reBeadsID + `(?:\s+\[[A-Z]+\])?\s+·\s+(.+?)\s+\[(?:[●○◐]\s*)?P\d\s*·\s*([A-Z_ ]+)\]\s*$`)
	reBeadsRel     = lazyRegexp(`^(↳|↑|→|←)\s+([○◐●✓❄✗⊘])\s+` + reBeadsID + `:\s+(.+?)(?:\s+●\s*P\d)?$`)
	reBeadsList    = lazyRegexp(`^([○◐●✓❄✗⊘])\s+` + reBeadsID + `\s+\[(?:●\s*)?P\d\]\s+\[\w+\]\s+-\s+(.+?)(?:\s+\((?:blocked by|blocks):[^)]*\))*$`)
	reBeadsReady   = lazyRegexp(`^\d+\.\s+\[(?:●\s*)?P\d\]\s+\[\w+\]\s+` + reBeadsID + `:\s+(.+)$`)
	reBeadsCreated = lazyRegexp(`Created issue:\s+` + reBeadsID + `(?::\s+(.+))?`)
	reBeadsClosed  = lazyRegexp(`✓ Closed ` + reBeadsID)
	reBeadsSection = lazyRegexp(`^(CHILDREN|PARENT|DEPENDS ON|BLOCKS|DEPENDENTS|BLOCKED BY|RELATED)$`)
)

// beadsValueFlags take a value.
var beadsValueFlags = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"--status": true, "-s": true, "--reason": true, "-r": true, "--priority": true,
		"-p": true, "--type": true, "-t": true, "--title": true, "--description": true, "-d": true, "--assignee": true,
		"-a": true, "--parent": true, "--labels": true, "-l": true, "--design": true, "--acceptance": true,
		"--notes": true, "--deps": true, "--id": true, "--external-ref": true, "--limit": true, "-n": true}
})

// beads applies one bd command and its output.
func (t *tracker) beads(w []string, output string, seq int) {
	if len(w) < 2 {
		return
	}
	sub := ""
	var ids []string
	flags := map[string]string{}
	for i := 1; i < len(w); i++ {
		a := w[i]
		if strings.HasPrefix(a, "-") {
			name, value, hasValue := strings.Cut(a, "=")
			if beadsValueFlags()[name] && !hasValue && i+1 < len(w) {
				i++
				value = w[i]
			}
			flags[name] = value
			continue
		}
		if sub == "" {
			sub = a
			continue
		}
		ids = append(ids, a)
	}
	if sub == "update" || sub == "close" || sub == "reopen" || sub == "show" {
		for _, id := range ids {
			t.name(TrackerBeads, id)
		}
	}
	switch sub {
	case "update":
		status := firstNonEmpty(flags["--status"], flags["-s"])
		if _, claim := flags["--claim"]; claim {
			status = "in_progress"
		}
		for _, id := range ids {
			it := t.item(TrackerBeads, id, true)
			if status != "" {
				it.setStatus(normStatus(status), seq)
			}
			it.setSubject(flags["--title"])
		}
	case "close":
		for _, id := range ids {
			t.item(TrackerBeads, id, true).setStatus(TaskCompleted, seq)
		}
	case "reopen":
		for _, id := range ids {
			t.item(TrackerBeads, id, true).setStatus(TaskPending, seq)
		}
	case "create", "new", "q":
		if m := reBeadsCreated.FindStringSubmatch(output); m != nil {
			it := t.item(TrackerBeads, m[1], true)
			title := flags["--title"]
			if title == "" && len(ids) > 0 {
				title = ids[0]
			}
			it.setSubject(firstNonEmpty(title, m[2]))
			if p := flags["--parent"]; p != "" {
				it.Parent = p
			}
			it.description = firstNonEmpty(flags["--description"], flags["-d"])
		}
	case "show":
		t.beadsShow(output, seq)
		return
	}
	t.beadsRefresh(output, seq)
}

// beadsShow reads `bd show` output: each shown item counts, with its
// description, and so do its children; other relations only refresh
// items already counted.
func (t *tracker) beadsShow(output string, seq int) {
	var cur *trackedTask
	section, inDescription := "", false
	var desc strings.Builder
	flush := func() {
		if cur != nil && desc.Len() > 0 {
			cur.description = desc.String()
		}
		desc.Reset()
	}
	for _, raw := range strings.Split(output, "\n") {
		l := strings.TrimSpace(raw)
		if m := reBeadsShow.FindStringSubmatch(l); m != nil {
			flush()
			cur = t.item(TrackerBeads, m[2], true)
			cur.setSubject(strings.TrimPrefix(m[3], "(EPIC) "))
			cur.setStatus(normStatus(m[4]), seq)
			section, inDescription = "", false
			continue
		}
		if cur == nil {
			continue
		}
		switch {
		case l == "DESCRIPTION":
			inDescription = true
			continue
		case reBeadsSection.MatchString(l):
			section, inDescription = l, false
			continue
		}
		if inDescription {
			desc.WriteString(raw + "\n")
			continue
		}
		if m := reBeadsRel.FindStringSubmatch(l); m != nil {
			child := section == "CHILDREN" || m[1] == "↳"
			it := t.item(TrackerBeads, m[3], child)
			if it == nil {
				continue
			}
			if child {
				it.Parent = cur.ID
			}
			if section == "PARENT" {
				cur.Parent = it.ID
			}
			it.setSubject(strings.TrimPrefix(m[4], "(EPIC) "))
			it.setStatus(beadsSymbols()[m[2]], seq)
		}
	}
	flush()
}

// beadsRefresh updates items already counted from listing lines.
func (t *tracker) beadsRefresh(output string, seq int) {
	for _, raw := range strings.Split(output, "\n") {
		l := strings.TrimSpace(raw)
		switch m := reBeadsList.FindStringSubmatch(l); {
		case m != nil:
			if it := t.item(TrackerBeads, m[2], false); it != nil {
				it.setStatus(beadsSymbols()[m[1]], seq)
			}
			continue
		}
		if m := reBeadsReady.FindStringSubmatch(l); m != nil {
			if it := t.item(TrackerBeads, m[1], false); it != nil && it.Status != TaskInProgress {
				it.setStatus(TaskPending, seq)
			}
			continue
		}
		if m := reBeadsClosed.FindStringSubmatch(l); m != nil {
			if it := t.item(TrackerBeads, m[1], false); it != nil {
				it.setStatus(TaskCompleted, seq)
			}
		}
	}
}

var (
	reGHClosed  = lazyRegexp(`Closed issue (?:[\w.-]+/[\w.-]+)?#(\d+) \((.+)\)`)
	reGHIssueID = lazyRegexp(`/issues/(\d+)\b`)
)

// github applies `gh issue create|close|reopen` and its output.
func (t *tracker) github(w []string, output string, seq int) {
	if len(w) < 3 || w[1] != "issue" {
		return
	}
	args := operands(w[1:])
	id := ""
	if len(args) > 0 {
		id = strings.TrimPrefix(path.Base(args[0]), "#")
	}
	if _, err := strconv.Atoi(id); err != nil {
		id = ""
	}
	switch w[2] {
	case "close":
		if m := reGHClosed.FindStringSubmatch(output); m != nil {
			it := t.item(TrackerGH, m[1], true)
			it.setSubject(m[2])
			it.setStatus(TaskCompleted, seq)
		} else if id != "" {
			t.item(TrackerGH, id, true).setStatus(TaskCompleted, seq)
		}
	case "reopen":
		if id != "" {
			t.item(TrackerGH, id, true).setStatus(TaskPending, seq)
		}
	case "create":
		if m := reGHIssueID.FindStringSubmatch(output); m != nil {
			it := t.item(TrackerGH, m[1], true)
			for i := 3; i < len(w)-1; i++ {
				if w[i] == "--title" || w[i] == "-t" {
					it.setSubject(w[i+1])
				}
			}
		}
	}
}

// tasks lists every item: the open ones first (in progress, then pending
// or blocked), each group in first-seen order, then the done ones in the
// order they were done, then the deleted ones.
func (t *tracker) tasks() []*trackedTask {
	all := make([]*trackedTask, 0, len(t.items)+len(t.todo)+len(t.plan))
	for _, it := range t.items {
		all = append(all, it)
	}
	all = append(all, t.todo...)
	all = append(all, t.plan...)
	rank := func(s string) int {
		switch s {
		case TaskInProgress:
			return 0
		case TaskPending, TaskBlocked:
			return 1
		case TaskCompleted:
			return 2
		}
		return 3
	}
	// Done items in the order they were done: the latest last.
	when := func(it *trackedTask) int {
		if it.Status == TaskCompleted && it.done >= 0 {
			return it.done
		}
		return -1
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if rank(a.Status) != rank(b.Status) {
			return rank(a.Status) < rank(b.Status)
		}
		if wa, wb := when(a), when(b); wa != wb {
			return wa < wb
		}
		return a.order < b.order
	})
	return all
}

// count is how many items the trackers hold.
func (t *tracker) count() int { return len(t.items) + len(t.todo) + len(t.plan) }

// hasChildren tells whether some item names id as its parent.
func (t *tracker) hasChildren(id string) bool {
	for _, it := range t.items {
		if it.Parent == id {
			return true
		}
	}
	return false
}
