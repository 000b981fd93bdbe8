// Package handoff builds ledger's handoff: the short, structured note a
// fresh agent session needs to carry on where a long one stopped ("clear,
// don't compact"). It extracts the note from a session's messages without
// an LLM, renders it as Markdown that fits a token budget and as JSON,
// parses the Markdown back, and offers the extractive compact.Summarizer.
//
// It is pure like package compact: no database, no command line, no files
// except those a caller hands in.
package handoff

import (
	"encoding/json"
	"time"
)

// DefaultBudget is the Markdown budget in tokens when a caller gives none.
const DefaultBudget = 800

// MinBudget is the smallest budget Render promises to honour: below it the
// frontmatter and the eight headings alone may not fit.
const MinBudget = 200

// Test statuses. A run is "running" when it was started in the background
// (or its result is not among the messages) and no outcome was seen.
const (
	TestPassed  = "passed"
	TestFailed  = "failed"
	TestRunning = "running"
)

// TestRun is one test command with the outcome of its latest run.
type TestRun struct {
	Command string `json:"command"`
	Status  string `json:"status"`
}

// Doc is the handoff object of CONTRACT.md. Its JSON keeps everything that
// was extracted; only its Markdown is abbreviated to fit a budget.
type Doc struct {
	// ID is the handoff's id in the ledger (0 until it is stored).
	ID      int64  `json:"id"`
	Session string `json:"session"`
	Project string `json:"project"`
	// Branch is not in the contract's object but belongs in the Markdown's
	// frontmatter; it rides along as an extra key.
	Branch string `json:"branch"`
	// Head is the commit the project's checkout was at when the handoff was
	// written, when it is a git checkout on this machine (an extra key, for
	// resume's staleness check; not in the Markdown).
	Head      string    `json:"head,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	Trigger   string    `json:"trigger"`
	Task      string    `json:"task"`
	// FilesModified are paths as the tools gave them (relative Codex patch
	// paths are resolved against Project), first-seen order, no repeats.
	FilesModified []string  `json:"files_modified"`
	Decisions     []string  `json:"decisions"`
	TestsRun      []TestRun `json:"tests_run"`
	// Errors are failures still unresolved at the end of the messages.
	Errors    []string `json:"errors"`
	Blockers  []string `json:"blockers"`
	NextSteps []string `json:"next_steps"`
	// Context is the meter's one-line summary and the compaction count.
	Context string `json:"context"`
	// Tokens is the size of Markdown by the counter it was fitted with.
	Tokens   int    `json:"tokens"`
	Markdown string `json:"markdown"`
}

// HandoffDoc is the name STYLE.md gives the handoff document.
type HandoffDoc = Doc

// MarshalJSON writes d as the contract's handoff object: lists are [] when
// empty, never null, and created_at is in UTC.
func (d Doc) MarshalJSON() ([]byte, error) {
	type plain Doc // no methods: no recursion
	p := plain(d)
	p.CreatedAt = p.CreatedAt.UTC()
	p.FilesModified = nonNil(p.FilesModified)
	p.Decisions = nonNil(p.Decisions)
	if p.TestsRun == nil {
		p.TestsRun = []TestRun{}
	}
	p.Errors = nonNil(p.Errors)
	p.Blockers = nonNil(p.Blockers)
	p.NextSteps = nonNil(p.NextSteps)
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
