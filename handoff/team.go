package handoff

import (
	"sort"
	"strings"
)

// A team of agents (a lead and its teammates, each a session of its own)
// shares one task list: an item one session created shows in another only
// as its id ("#6"), and one a teammate closed may still look open. The
// ledger holds the other sessions too; ResolveTasks completes a handoff
// with what they say.

// ResolveTasks fills in d's task-tool items from known, the same list's
// items as other sessions hold them: a subject d lacks, and a done (or
// deleted) state, which wins over an open one. The next steps follow:
// an item done elsewhere is no longer one. Items of other trackers, and
// items d does not have, are left alone.
func ResolveTasks(d Doc, known []Task) Doc {
	byID := map[string]Task{}
	for _, k := range known {
		if k.ID == "" || (k.Tracker != "" && k.Tracker != TrackerTask) {
			continue
		}
		o, ok := byID[k.ID]
		if !ok {
			byID[k.ID] = k
			continue
		}
		if o.Subject == "" {
			o.Subject = k.Subject
		}
		if o.Open() && !k.Open() {
			o.Status = k.Status
		}
		byID[k.ID] = o
	}
	if len(byID) == 0 {
		return d
	}
	changed := map[string]Task{} // old line -> new task
	tasks := make([]Task, len(d.Tasks))
	for i, t := range d.Tasks {
		tasks[i] = t
		k, ok := byID[t.ID]
		if !ok || (t.Tracker != "" && t.Tracker != TrackerTask) {
			continue
		}
		n := t
		if n.Subject == "" {
			n.Subject = k.Subject
		}
		if n.Open() && !k.Open() {
			n.Status, n.Detail = k.Status, ""
		}
		if n != t {
			changed[taskLine(t)] = n
			tasks[i] = n
		}
	}
	if len(changed) == 0 {
		return d
	}
	rank := map[string]int{TaskInProgress: 0, TaskPending: 1, TaskBlocked: 1, TaskCompleted: 2, TaskDeleted: 3}
	sort.SliceStable(tasks, func(i, j int) bool { return rank[tasks[i].Status] < rank[tasks[j].Status] })
	d.Tasks = tasks
	var next []string
	for _, s := range d.NextSteps {
		if n, ok := changed[s]; ok {
			if n.Open() {
				next = append(next, taskLine(n))
			}
			continue
		}
		if t, ok := parseTaskDetail(s); ok {
			if n, found := changedByID(changed, t); found && !n.Open() {
				continue // what is left of an item done since
			}
		}
		next = append(next, s)
	}
	d.NextSteps = next
	return d
}

// parseTaskDetail reads the id of a "still to do for <id>: …" step.
func parseTaskDetail(s string) (string, bool) {
	rest, ok := strings.CutPrefix(s, "still to do for ")
	if !ok {
		return "", false
	}
	id, _, ok := strings.Cut(rest, ": ")
	return id, ok
}

func changedByID(changed map[string]Task, id string) (Task, bool) {
	for _, n := range changed {
		if n.ID == id {
			return n, true
		}
	}
	return Task{}, false
}

// MissingSubjects tells whether d holds task-tool items known only by their
// id: the sign that the list is shared with another session.
func MissingSubjects(d Doc) bool {
	for _, t := range d.Tasks {
		if t.Subject == "" && t.ID != "" && (t.Tracker == "" || t.Tracker == TrackerTask) {
			return true
		}
	}
	return false
}
