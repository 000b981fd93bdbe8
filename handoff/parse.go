package handoff

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ErrNotHandoff is returned by Parse for text that has neither a handoff's
// frontmatter nor any of its sections.
var ErrNotHandoff = errors.New("not a handoff document")

// Parse reads Markdown written by Render back into a document. For a
// document rendered without budget pressure, Parse(Render(d)) gives back d
// for every field the Markdown carries (all but Tokens; Markdown is set to
// the input). Paths shown relative to the project are made absolute again.
// Under budget pressure the Markdown holds less, and so does the result:
// "… +N more" lines are not items, and shortened items stay shortened.
//
// Parse is lenient with hand-edited files: unknown frontmatter keys and
// sections are ignored, a missing section is empty.
func Parse(markdown string) (Doc, error) {
	d := Doc{Markdown: markdown}
	// CRLF and a lone CR end a line too, as in CommonMark: a CR left inside
	// a line would not read back the same once rendered.
	text := strings.ReplaceAll(strings.TrimPrefix(markdown, "\ufeff"), "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	lines := strings.Split(text, "\n")

	i, found := 0, false
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		end := -1
		for j := 1; j < len(lines); j++ {
			if strings.TrimSpace(lines[j]) == "---" {
				end = j
				break
			}
		}
		if end < 0 {
			return Doc{}, errors.New("parse handoff: frontmatter has no closing ---")
		}
		if err := parseFrontmatter(&d, lines[1:end]); err != nil {
			return Doc{}, err
		}
		i, found = end+1, true
	}

	var body [numSections][]string
	cur := section(-1)
	for ; i < len(lines); i++ {
		line := lines[i]
		if h, ok := strings.CutPrefix(line, "## "); ok {
			cur = section(-1)
			for sec, name := range headings {
				if strings.TrimSpace(h) == name {
					cur, found = section(sec), true
				}
			}
			continue
		}
		if cur >= 0 {
			body[cur] = append(body[cur], line)
		}
	}
	if !found {
		return Doc{}, ErrNotHandoff
	}

	d.Task = readText(body[secTask])
	d.Context = readText(body[secContext])
	d.Requests = readRequests(body[secRequests], d.Task)
	for _, s := range readList(body[secFiles]) {
		f := readFile(s, d.Project)
		d.Files = append(d.Files, f)
		d.FilesModified = append(d.FilesModified, f.Path)
	}
	d.WorkingSet = readWorking(body[secWork], d.Project)
	d.Decisions = readList(body[secDecisions])
	d.Errors = readList(body[secErrors])
	d.Blockers = readList(body[secBlockers])
	d.NextSteps = readList(body[secNext])
	for _, s := range readRawList(body[secTests]) {
		d.TestsRun = append(d.TestsRun, readTest(s))
	}
	d.Tasks = readTasks(readList(body[secTasks]), d.NextSteps)
	for _, s := range d.NextSteps {
		if w, ok := strings.CutPrefix(s, lastWordsLabel); ok {
			d.LastWords = strings.TrimSuffix(strings.TrimPrefix(w, "“"), "”")
		}
		if p, ok := strings.CutPrefix(s, planLabel); ok {
			d.Plan = p
		}
	}
	return d, nil
}

var reNumbered = lazyRegexp(`^(\d+)\. (.*)$`)

// readRequests undoes writeNumbered: when the list starts at 2 (or is
// empty), request 1 is the task.
func readRequests(lines []string, task string) []string {
	var reqs []string
	first := 0
	for _, l := range lines {
		m := reNumbered.FindStringSubmatch(l)
		if m == nil || strings.TrimSpace(strings.TrimPrefix(m[2], `\`)) == "" {
			continue // not a request, or an empty one (never written)
		}
		if first == 0 {
			first, _ = strconv.Atoi(m[1])
		}
		reqs = append(reqs, strings.TrimPrefix(m[2], `\`))
	}
	if task != "" && (first == 0 || first >= 2) {
		reqs = append([]string{task}, reqs...)
	}
	return reqs
}

// readTasks gathers the tracker items of the Tasks section and of the
// next steps, in the order Extract gives them: in progress, pending,
// done.
func readTasks(section, next []string) []Task {
	// The Tasks section's items but the open ones the next steps hold
	// (done items, epics), then the open items of the next steps, each
	// once: Render lists an open item in one of the two, and a next step
	// is never done.
	inNext := map[string]bool{}
	var fromNext []Task
	for _, s := range next {
		if t, ok := parseTaskLine(s); ok && t.Open() && !inNext[taskLine(t)] {
			inNext[taskLine(t)] = true
			fromNext = append(fromNext, t)
		}
	}
	var out []Task
	listed := map[string]bool{}
	for _, s := range section {
		if t, ok := parseTaskLine(s); ok && !listed[taskLine(t)] && !(t.Open() && inNext[taskLine(t)]) {
			listed[taskLine(t)] = true
			out = append(out, t)
		}
	}
	out = append(out, fromNext...)
	rank := map[string]int{TaskInProgress: 0, TaskPending: 1, TaskBlocked: 1, TaskCompleted: 2, TaskDeleted: 3}
	sort.SliceStable(out, func(i, j int) bool { return rank[out[i].Status] < rank[out[j].Status] })
	return out
}

var reFileNotes = lazyRegexp(`^(.*) \(((?:new|deleted|uncommitted)(?:, (?:new|deleted|uncommitted))*)\)$`)

// readFile undoes fileItems.
func readFile(s, project string) FileChange {
	f := FileChange{Status: FileModified}
	if m := reFileNotes.FindStringSubmatch(s); m != nil {
		s = m[1]
		for _, n := range strings.Split(m[2], ", ") {
			switch n {
			case "new":
				f.Status = FileAdded
			case "deleted":
				f.Status = FileDeleted
			case "uncommitted":
				f.Git = GitUncommitted
			}
		}
	}
	if from, to, ok := strings.Cut(s, movedArrow); ok && strings.TrimSpace(from) != "" && strings.TrimSpace(to) != "" {
		f.From, s = readPath(from, project), to
		if f.Status == FileModified {
			f.Status = FileMoved
		}
	}
	f.Path = readPath(s, project)
	return f
}

func parseFrontmatter(d *Doc, lines []string) error {
	for _, line := range lines {
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if strings.HasPrefix(value, `"`) {
			var s string
			if err := json.Unmarshal([]byte(value), &s); err != nil {
				return fmt.Errorf("parse handoff: frontmatter %s: %w", key, err)
			}
			value = s
		}
		switch key {
		case "id":
			id, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				return fmt.Errorf("parse handoff: frontmatter id %q: %w", value, err)
			}
			d.ID = id
		case "session":
			d.Session = value
		case "project":
			d.Project = value
		case "branch":
			d.Branch = value
		case "trigger":
			d.Trigger = value
		case "created":
			if value == "" {
				continue
			}
			t, err := time.Parse(time.RFC3339Nano, value)
			if err != nil {
				return fmt.Errorf("parse handoff: frontmatter created: %w", err)
			}
			d.CreatedAt = t.UTC()
		}
	}
	return nil
}

// readText undoes writeText: the section's lines without the blank lines
// around them, each unescaped.
func readText(lines []string) string {
	lines = trimBlank(lines)
	if len(lines) == 1 && lines[0] == none {
		return ""
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimPrefix(l, `\`)
	}
	// A line that was only a backslash is blank once unescaped: trimmed
	// like the blank lines around the text (the renderer never writes one).
	return strings.Join(trimBlank(out), "\n")
}

// readRawList returns a list section's items as written, without the
// "… +N more" line.
func readRawList(lines []string) []string {
	var items []string
	for _, l := range lines {
		item, ok := strings.CutPrefix(l, "- ")
		if !ok {
			if l != "-" {
				continue
			}
			item = ""
		}
		if moreLine.MatchString(item) {
			continue
		}
		items = append(items, item)
	}
	return items
}

// readList undoes writeList.
func readList(lines []string) []string {
	items := readRawList(lines)
	for i, s := range items {
		items[i] = strings.TrimPrefix(s, `\`)
	}
	return items
}

// readTest undoes the "- `command` — status" form; a line not in that form
// is read as a command with no status.
func readTest(s string) TestRun {
	n := 0
	for n < len(s) && s[n] == '`' {
		n++
	}
	if n == 0 {
		return TestRun{Command: s}
	}
	// The closing fence is the first later run of backticks at least n long.
	for j := n; j < len(s); {
		if s[j] != '`' {
			j++
			continue
		}
		k := j
		for k < len(s) && s[k] == '`' {
			k++
		}
		if k-j < n {
			j = k
			continue
		}
		if k-j != n {
			break
		}
		cmd, rest := s[n:j], s[k:]
		if len(cmd) >= 2 && cmd[0] == ' ' && cmd[len(cmd)-1] == ' ' {
			cmd = cmd[1 : len(cmd)-1]
		}
		if rest == "" {
			return TestRun{Command: cmd}
		}
		if status, ok := strings.CutPrefix(rest, " — "); ok {
			return TestRun{Command: cmd, Status: status}
		}
		break
	}
	return TestRun{Command: s}
}

func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
