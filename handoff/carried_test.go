package handoff

// carried is d as far as its Markdown carries it, which is what Parse can
// give back: tasks without their tracker, parent and detail; files with
// their git state only when uncommitted; the plan as its next step shows
// it; notes within their sections only.
func carried(d Doc) Doc {
	d.Tokens, d.Markdown, d.Head, d.Notes = 0, "", "", nil
	// Of the done items, the Tasks section lists the latest few.
	closed := 0
	for _, t := range d.Tasks {
		if !t.Open() {
			closed++
		}
	}
	var tasks []Task
	for _, t := range d.Tasks {
		if !t.Open() {
			closed--
			if closed >= maxDoneShown {
				continue
			}
		}
		tasks = append(tasks, Task{ID: t.ID, Subject: t.Subject, Status: t.Status})
	}
	d.Tasks = tasks
	var files []FileChange
	for _, f := range d.Files {
		if f.Git == GitCommitted {
			f.Git = ""
		}
		files = append(files, f)
	}
	d.Files = files
	if d.Plan != "" {
		d.Plan = shorten(oneLine(d.Plan), 240)
	}
	// A hand-made document with paths only, or task lines only in its next
	// steps, reads back with them as files and tasks.
	if len(d.Files) == 0 {
		for _, p := range d.FilesModified {
			d.Files = append(d.Files, FileChange{Path: p, Status: FileModified})
		}
	}
	if len(d.Tasks) == 0 {
		for _, s := range d.NextSteps {
			if t, ok := parseTaskLine(s); ok {
				d.Tasks = append(d.Tasks, t)
			}
		}
	}
	if len(d.Requests) == 0 && d.Task != "" {
		d.Requests = []string{d.Task}
	}
	return d
}
