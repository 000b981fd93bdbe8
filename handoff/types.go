package handoff

import (
	"encoding/json"
	"time"
)

// DefaultBudget is the Markdown budget in tokens when a caller gives none:
// a third or less of the 3,600-5,100 tokens of a native compaction summary.
const DefaultBudget = 1500

// MinBudget is the smallest budget Render promises to honour: below it the
// frontmatter and the headings alone may not fit.
const MinBudget = 200

// Test statuses. A run is "running" when it was started in the background
// (or its result is not among the messages) and no outcome was seen.
const (
	TestPassed  = "passed"
	TestFailed  = "failed"
	TestRunning = "running"
)

// Task statuses, whatever the tracker calls them.
const (
	TaskPending    = "pending"
	TaskInProgress = "in_progress"
	TaskBlocked    = "blocked"
	TaskCompleted  = "completed"
	TaskDeleted    = "deleted"
)

// Trackers a task can come from.
const (
	TrackerTodo  = "todo"  // Claude Code TodoWrite
	TrackerTask  = "task"  // Claude Code TaskCreate / TaskUpdate
	TrackerPlan  = "plan"  // Codex update_plan
	TrackerBeads = "beads" // bd, driven from the shell
	TrackerGH    = "gh"    // GitHub issues, driven from the shell
)

// File states. A file is "committed" when a later commit took it, and
// "uncommitted" when the session changed it after its last commit; ""
// when the project is not known to be a git checkout.
const (
	FileModified = "modified"
	FileAdded    = "added"
	FileDeleted  = "deleted"
	FileMoved    = "moved"

	GitCommitted   = "committed"
	GitUncommitted = "uncommitted"
)

// Note kinds, as `ledger note` records them.
const (
	NoteDecision = "decision"
	NoteNext     = "next"
	NoteBlocker  = "blocker"
)

// TestRun is one test command with the outcome of its latest run.
type TestRun struct {
	Command string `json:"command"`
	Status  string `json:"status"`
}

// Task is one item of an agent's tracker, in its newest state.
type Task struct {
	ID      string `json:"id"`
	Subject string `json:"subject"`
	Status  string `json:"status"`
	// Tracker names where the item came from (TrackerTodo, ...).
	Tracker string `json:"tracker,omitempty"`
	// Parent is the id of the item this one belongs to (a beads epic).
	Parent string `json:"parent,omitempty"`
	// Detail says what is left of an item in progress: its definition of
	// done, the files it names that the session has not touched yet.
	Detail string `json:"detail,omitempty"`
}

// Open tells whether the task is still to do.
func (t Task) Open() bool {
	return t.Status != TaskCompleted && t.Status != TaskDeleted
}

// FileChange is what the session did to one file.
type FileChange struct {
	// Path is where the file is now (its new path when it was moved).
	Path   string `json:"path"`
	Status string `json:"status"`
	// From is the old path of a moved file.
	From string `json:"from,omitempty"`
	// Git is GitCommitted, GitUncommitted or "" (not known).
	Git string `json:"git,omitempty"`
}

// WorkingSet is what a resumed agent reaches for first: the files the
// agent read or changed lately, the latest first and grouped by folder,
// the files named as what comes next, and the commands of its loop.
type WorkingSet struct {
	Files    []WorkFile  `json:"files"`
	Next     []NextFiles `json:"next"`
	Commands []string    `json:"commands"`
}

// WorkFile is one file the agent used lately.
type WorkFile struct {
	Path   string `json:"path"`
	Edited bool   `json:"edited,omitempty"`
	// Lines are the parts read ("lines 120-240, 400-460") when the file
	// was only read in part.
	Lines string `json:"lines,omitempty"`
}

// NextFiles are files named as what comes next, and by what: "next, for
// proj-12" (a tracker item's description), "next, rest of your list (2 of
// 5 done)", "next, from the approved plan", "next, named last"; and "named
// by the user", the files the user's requests name.
type NextFiles struct {
	Why   string   `json:"why"`
	Paths []string `json:"paths"`
}

// Empty tells whether the working set holds nothing.
func (w WorkingSet) Empty() bool {
	return len(w.Files) == 0 && len(w.Next) == 0 && len(w.Commands) == 0
}

// MarshalJSON writes lists as [], never null.
func (w WorkingSet) MarshalJSON() ([]byte, error) {
	type plain WorkingSet
	p := plain(w)
	if p.Files == nil {
		p.Files = []WorkFile{}
	}
	if p.Next == nil {
		p.Next = []NextFiles{}
	}
	p.Commands = nonNil(p.Commands)
	return json.Marshal(p)
}

// Note is a fact recorded on purpose while working (`ledger note`): the
// next handoff carries it verbatim.
type Note struct {
	Kind      string    `json:"kind"`
	Text      string    `json:"text"`
	CreatedAt time.Time `json:"created_at"`
}

// Doc is the handoff object of docs/contract.md. Its JSON keeps everything that
// was extracted; only its Markdown is abbreviated to fit a budget.
type Doc struct {
	// ID is the handoff's id in the ledger (0 until it is stored).
	ID      int64  `json:"id"`
	Session string `json:"session"`
	// Project is the repository root of the session's working directory.
	Project string `json:"project"`
	// Branch rides along in the Markdown's frontmatter.
	Branch string `json:"branch"`
	// Head is the commit the project's checkout was at when the handoff was
	// written, when it is a git checkout on this machine (for resume's
	// staleness check; not in the Markdown).
	Head      string    `json:"head,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	Trigger   string    `json:"trigger"`
	Task      string    `json:"task"`
	// Requests are every request the user made, in order, the first one
	// included; long ones are shortened in the middle.
	Requests []string `json:"requests"`
	// Tasks are the agent's tracker items in their newest state: the open
	// ones first (in progress, then pending), then the done ones.
	Tasks []Task `json:"tasks"`
	// FilesModified are the paths the session changed, first-seen order, a
	// moved file at its new path; Files says how each changed.
	FilesModified []string     `json:"files_modified"`
	Files         []FileChange `json:"files"`
	Decisions     []string     `json:"decisions"`
	TestsRun      []TestRun    `json:"tests_run"`
	// Errors are failures still unresolved at the end of the messages.
	Errors    []string `json:"errors"`
	Blockers  []string `json:"blockers"`
	NextSteps []string `json:"next_steps"`
	// LastWords is the agent's last text before the cut, shortened: what it
	// said it would do next.
	LastWords string `json:"last_words"`
	// Plan is the latest plan the user approved (ExitPlanMode).
	Plan  string `json:"plan,omitempty"`
	Notes []Note `json:"notes"`
	// WorkingSet is what the agent had in hand at the cut: the files it
	// used lately, those named as next, the commands of its loop.
	WorkingSet WorkingSet `json:"working_set"`
	// Context is one line on where the work stopped.
	Context string `json:"context"`
	// Tokens is the size of Markdown by the counter it was fitted with.
	Tokens   int    `json:"tokens"`
	Markdown string `json:"markdown"`
}

// MarshalJSON writes d as the contract's handoff object: lists are [] when
// empty, never null, and created_at is in UTC.
func (d Doc) MarshalJSON() ([]byte, error) {
	type plain Doc // no methods: no recursion
	p := plain(d)
	p.CreatedAt = p.CreatedAt.UTC()
	p.Requests = nonNil(p.Requests)
	if p.Tasks == nil {
		p.Tasks = []Task{}
	}
	p.FilesModified = nonNil(p.FilesModified)
	if p.Files == nil {
		p.Files = []FileChange{}
	}
	p.Decisions = nonNil(p.Decisions)
	if p.TestsRun == nil {
		p.TestsRun = []TestRun{}
	}
	p.Errors = nonNil(p.Errors)
	p.Blockers = nonNil(p.Blockers)
	p.NextSteps = nonNil(p.NextSteps)
	if p.Notes == nil {
		p.Notes = []Note{}
	}
	return json.Marshal(p)
}

// Rendered returns a copy of d whose Markdown is rendered within budget
// tokens as counted by count, and whose Tokens is that count. See Render.
func (d Doc) Rendered(budget int, count func(string) int) Doc {
	if count == nil {
		count = ApproxTokens
	}
	d.Markdown = Render(d, budget, count)
	d.Tokens = count(d.Markdown)
	return d
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
