package handoff

import (
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/handoff/shell"
)

// ExtractOptions carries what the messages themselves do not say.
type ExtractOptions struct {
	// Task overrides the task read from the conversation (`--task`).
	Task string
	// SessionID defaults to the first message's session.
	SessionID string
	// Project is the repository root of the session's working directory.
	// Relative paths (Codex patches, shell commands) are resolved against
	// it, and the Markdown shows paths under it relative to it.
	Project string
	Branch  string
	// Trigger is "manual" or "auto".
	Trigger string
	// CreatedAt defaults to the time of the last message, so that the same
	// messages always give the same document.
	CreatedAt time.Time
	// ContextUsed and ContextLimit are the meter's figures (this package
	// does not meter): the context in use at the cut and the window.
	ContextUsed, ContextLimit int64
	// ContextSummary, when the figures are not known, is a one-line
	// description of the context to use instead.
	ContextSummary string
	// Compactions is the number of compactions the session went through.
	Compactions int
	// Notes are facts recorded on purpose for this session (`ledger note`):
	// the handoff carries them verbatim.
	Notes []Note
	// WorkTree, when set, is the live state of the project's checkout:
	// it says which files are really uncommitted, better than the
	// transcript can.
	WorkTree *WorkTree
}

// WorkTree is the state of a git checkout as git reports it: the caller
// reads it (this package does no I/O).
type WorkTree struct {
	Branch string
	Head   string
	// Changed are the uncommitted changes (git status), with absolute paths.
	Changed []FileChange
	// Committed are the files of commits made since the session started.
	Committed []string
}

// maxCallsAfterWords is how many tool calls may follow the agent's last
// words before they no longer say what it was about to do.
const maxCallsAfterWords = 3

// Limits on what one extracted item may hold. The JSON keeps items whole
// up to these; the Markdown shortens them further under budget pressure.
const (
	maxRequest   = 500  // runes of one user request
	maxItem      = 300  // runes of a decision, blocker, next step or task
	maxError     = 240  // runes of an error
	maxLabel     = 80   // runes of the command that names an error
	maxLastWords = 360  // runes of the agent's last words
	maxPlan      = 2000 // runes of an approved plan
)

// Extract reads a session's messages, in conversation order, into a handoff
// document. It is deterministic and uses no model. Subagent (sidechain)
// tool calls count, since they change the same files and trackers; their
// prompts and prose do not.
func Extract(msgs []compact.Message, opts ExtractOptions) Doc {
	x := newExtractor(opts)
	for i, m := range msgs {
		x.seq = i
		x.message(m)
	}
	return x.finish()
}

// use is a tool call waiting for its result.
type use struct {
	name    string
	input   input
	files   []string // paths the call changes
	fileOps []string // what it does to each (FileAdded, FileDeleted; "": modified)
	moves   [][2]string
	set     *settingsEdit // what it does to a settings file
	cmd     string        // normalized shell command
	raw     string        // the command line as run
	shell   shellInfo
	words   []shell.Pipeline
	isShell bool
	poll    string // background id this call polls (TaskOutput, write_stdin)
	errKey  string // names the call for error resolution; "" to ignore failures
	label   string // names the call in an error message
	desc    string // the agent's description of a shell call
	main    bool   // called from the main conversation, not a subagent
	// agentFile marks a file tool call on the agent's own files (its plan,
	// its memory): not the work, its failure included.
	agentFile bool
	seq       int // message index of the call
	// prevAction is what the agent was doing before this call, for when
	// the call is refused and never runs.
	prevAction string
}

// background is a shell command still running, by the id its runner gave.
type background struct{ u use }

type extractor struct {
	opts    ExtractOptions
	project string
	seq     int // index of the message being read

	files    fileTracker
	settings settingsTracker
	tracker  tracker
	errs     errorTracker
	decision decisionSet
	work     workTracker

	tests testLog
	prose proseState
	plan  planState
	hist  history

	pending map[string]use
	bg      map[string]background

	requests []string
	notes    []string // next: lines
	blockers []string
	seenBlk  map[string]bool
	seenNote map[string]bool

	lastFailure int    // message index of the latest failure (-1: none)
	lastAction  string // what the agent was doing at the cut
	lastTime    time.Time
	sessionID   string
}

// testLog is the tests the session ran, each command once with its
// latest status, and what each ran on.
type testLog struct {
	runs   []TestRun
	scopes []scope        // what each test command ran
	index  map[string]int // command → its index in runs
}

// proseState is the agent's latest prose and what it did since:
// its words are stale when it went on working.
type proseState struct {
	lastWords string
	last      string // the agent's latest text, whole
	at        int    // message index of the agent's latest prose (-1: none)
	// callsAfter and changesAfter count what the agent did since its
	// latest prose.
	callsAfter, changesAfter int
}

// planState is an approved plan not yet turned into tasks.
type planState struct {
	text    string
	seq     int // message index of the plan's approval
	tasksAt int // tracker items when the plan was approved
}

// history is what ran and changed, by message index.
type history struct {
	runs     []shellRun // commands that succeeded
	changes  []int      // message indexes of file changes
	commits  []int      // message indexes of successful commits
	stageAll bool       // `git add -A` ran since the last commit
	newDirs  map[string]bool
}

func newExtractor(opts ExtractOptions) *extractor {
	project := strings.TrimSpace(opts.Project)
	if len(project) > 1 {
		project = strings.TrimRight(project, "/")
	}
	x := &extractor{
		opts: opts, project: project,
		files: newFileTracker(), tracker: newTracker(), work: newWorkTracker(),
		tests:   testLog{index: map[string]int{}},
		pending: map[string]use{}, bg: map[string]background{}, hist: history{newDirs: map[string]bool{}},
		seenBlk: map[string]bool{}, seenNote: map[string]bool{},
		lastFailure: -1, prose: proseState{at: -1},
	}
	if opts.Branch != "" {
		x.files.gitSeen = true
	}
	for _, n := range opts.Notes {
		switch n.Kind {
		case NoteDecision:
			x.decision.add(n.Text, scoreNote, -1)
		case NoteBlocker:
			x.blockers = appendUnique(x.blockers, x.seenBlk, itemText(n.Text))
		}
	}
	return x
}

func (x *extractor) message(m compact.Message) {
	if !m.Time.IsZero() {
		x.lastTime = m.Time
	}
	if x.sessionID == "" {
		x.sessionID = m.SessionID
	}
	mainProse := (m.Role == compact.RoleUser || m.Role == compact.RoleAssistant) && !m.Meta && !m.CompactSummary && !m.Sidechain
	for i, b := range m.Blocks {
		switch b.Kind {
		case compact.BlockToolUse:
			id := b.ToolID
			if id == "" {
				id = fmt.Sprintf("\x00%s#%d", m.UUID, i)
			}
			x.toolUse(id, b, !m.Sidechain)
		case compact.BlockToolResult:
			x.toolResult(b)
		case compact.BlockText:
			if m.Role == compact.RoleUser && strings.Contains(b.Text, "<task-notification>") {
				x.taskNotification(b.Text)
			}
			if !mainProse {
				continue
			}
			if m.Role == compact.RoleAssistant {
				x.agentProse(b.Text)
			} else if !isInjected(clean(b.Text)) {
				x.markedLines(b.Text)
			}
		}
	}
	// A slash command the user ran is marked injected (its wrapper and
	// expansion are), but with arguments it is a request.
	command := m.Role == compact.RoleUser && m.Meta && !m.CompactSummary && !m.Sidechain &&
		strings.HasPrefix(strings.TrimSpace(m.Text()), "<command-")
	if m.Role == compact.RoleUser && (mainProse || command) {
		if req := userRequest(m.Text()); req != "" {
			x.request(req)
		}
	}
}

// request records a user request; the same request twice in a row is one.
func (x *extractor) request(req string) {
	if n := len(x.requests); n > 0 && x.requests[n-1] == req {
		return
	}
	x.requests = append(x.requests, req)
	if len(x.requests) > 1 && isCorrection(req) {
		x.decision.add("user: "+shorten(oneLine(req), 240), scoreCorrection, x.seq)
	}
}

// agentProse reads the agent's own text: marked lines, decisions it
// established, and its last words.
func (x *extractor) agentProse(text string) {
	x.markedLines(text)
	x.proseList(text, "your list")
	failure := -1
	if x.lastFailure >= 0 && x.seq-x.lastFailure <= 4 {
		failure = x.lastFailure
	}
	x.decision.prose(text, x.seq, failure)
	if w := lastWordsOf(text); w != "" {
		x.prose.lastWords, x.prose.at, x.prose.last = w, x.seq, text
		x.prose.callsAfter, x.prose.changesAfter = 0, 0
	}
}

// Tools that only look: their failures (a file that does not exist, a
// search with no match) are exploration, not unfinished work.
var readOnly = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"Read": true, "Glob": true, "Grep": true, "LS": true, "WebFetch": true,
		"WebSearch": true, "NotebookRead": true, "KillBash": true, "KillShell": true, "Task": true, "Skill": true,
		"AskUserQuestion": true, "ExitPlanMode": true, "EnterPlanMode": true, "TodoWrite": true, "update_plan": true,
		"view_image": true, "list_mcp_resources": true, "list_mcp_resource_templates": true, "read_mcp_resource": true,
		"web_search": true, "TaskOutput": true, "BashOutput": true, "write_stdin": true, "TaskCreate": true,
		"TaskUpdate": true, "TaskList": true, "TaskGet": true, "TaskStop": true, "Agent": true, "ToolSearch": true,
		// Gemini CLI, Qwen Code, Copilot CLI (cliagents.go)
		"read_file": true, "read_many_files": true, "glob": true, "grep_search": true, "list_directory": true,
		"google_web_search": true, "web_fetch": true, "write_todos": true, "todo_write": true, "view": true, "grep": true,
		// OpenCode, Kilo and Pi name their tools in lower case.
		"read": true, "list": true, "find": true, "ls": true, "webfetch": true,
		"todowrite": true, "todoread": true, "task": true, "skill": true}
})

// toolUse starts following a tool call until its result comes: what it
// changes, runs or polls (callReaders, else a shell command), and how its
// failure would be named.
func (x *extractor) toolUse(id string, b compact.Block, main bool) {
	u := use{name: b.ToolName, main: main, seq: x.seq, prevAction: x.lastAction, input: decodeInput(b.Input)}
	if main {
		x.prose.callsAfter++
		x.work.calls++
	}
	if read := callReaders()[b.ToolName]; read != nil {
		read(x, &u, b)
	} else if line, ok := shellLine(b.ToolName, u.input); ok {
		x.shellUse(&u, line)
	}
	if len(u.files) > 0 {
		for _, p := range u.files {
			x.files.touch(p, x.seq)
			// A subagent's changes are the session's too (its reads are
			// its own).
			x.work.edit(p, x.seq)
		}
		u.errKey = "file:" + strings.Join(u.files, "\x00")
		u.label = b.ToolName + " " + x.rel(u.files[0])
		if len(u.files) > 1 {
			u.label += fmt.Sprintf(" (+%d)", len(u.files)-1)
		}
	}
	if u.errKey == "" && u.poll == "" && !readOnly()[b.ToolName] && b.ToolName != "" && !u.agentFile {
		u.errKey = "tool:" + b.ToolName
		u.label = b.ToolName
	}
	x.pending[id] = u
}

// callReaders read the calls of the tools that are not a shell.
var callReaders = sync.OnceValue(func() map[string]func(x *extractor, u *use, b compact.Block) {
	return map[string]func(x *extractor, u *use, b compact.Block){
		"Edit": fileUse, "Write": fileUse, "MultiEdit": fileUse, "NotebookEdit": fileUse,
		// OpenCode's and Kilo's {filePath}, Pi's {path} ("edit" is below).
		"write": fileUse,
		"apply_patch": func(x *extractor, u *use, b compact.Block) {
			patch := b.Input
			if u.input != nil {
				patch = firstNonEmpty(u.input.str("input"), u.input.str("patch"), patch)
			}
			x.patchUse(u, patch)
		},
		"TodoWrite": todoUse,
		"todowrite": todoUse, // OpenCode's and Kilo's: the same {todos: [{content, status}]}
		"update_plan": func(x *extractor, u *use, b compact.Block) {
			if u.main {
				x.tracker.plan = x.tracker.wholeList(x.tracker.plan, u.input, "plan", "step", TrackerPlan, x.seq)
				x.planExplanation(u.input.str("explanation"))
			}
		},
		"TaskOutput": pollUse, "BashOutput": pollUse, "write_stdin": pollUse,
		// Gemini CLI, Qwen Code, Copilot CLI (cliagents.go)
		"write_file": fileUse, "replace": fileUse, "edit": fileUse, "create": fileUse,
		"write_todos": cliTodos, "todo_write": cliTodos,
	}
})

// todoUse is a call that writes the whole task list (TodoWrite).
func todoUse(x *extractor, u *use, b compact.Block) {
	if u.main {
		x.tracker.todo = x.tracker.wholeList(x.tracker.todo, u.input, "todos", "content", TrackerTodo, x.seq)
	}
}

// fileUse is a call of a file tool: the file it changes, and what it sets
// when the file holds settings.
func fileUse(x *extractor, u *use, b compact.Block) {
	p := firstNonEmpty(u.input.str("file_path"), u.input.str("filePath"), u.input.str("path")) // OpenCode's filePath; Pi's and Copilot CLI's path
	if b.ToolName == "NotebookEdit" && u.input.str("notebook_path") != "" {
		p = u.input.str("notebook_path")
	}
	if p == "" || agentFile(p) {
		u.agentFile = true
		return // the agent's own plan or memory is not the project's work
	}
	u.files = []string{x.resolve(p)}
	if settingsFile(x.rel(u.files[0])) {
		e := settingsChange(b.ToolName, u.input, "")
		u.set = &e
	}
	x.lastAction = "editing " + x.rel(u.files[0])
}

// planExplanation reads the explanation Codex gives with a plan: where it
// states a choice or a constraint, it is a decision the agent wrote down on
// purpose.
func (x *extractor) planExplanation(text string) {
	text = oneLine(clean(text))
	if len([]rune(text)) < 25 {
		return // "Updated the plan."
	}
	// Most explanations say where the work stands ("Tests pass; docs
	// next"); one that gives a reason or states a choice or a limit is a
	// decision.
	if score := scoreSentence(text, false); score >= 2 || reReason.MatchString(text) {
		x.decision.add(text, max(score, scorePlanReason), x.seq)
	}
}

// pollUse is a call that reads a background command's output.
func pollUse(x *extractor, u *use, b compact.Block) {
	u.poll = firstNonEmpty(u.input.str("task_id"), u.input.str("bash_id"), u.input.str("shell_id"))
	if b.ToolName == "write_stdin" {
		u.poll = u.input.str("session_id")
	}
}

// shellUse is a shell command line (or a patch run through the shell).
func (x *extractor) shellUse(u *use, line string) {
	if patch := patchText(line); patch != "" {
		x.patchUse(u, patch)
		return
	}
	u.isShell, u.raw = true, line
	if strings.Contains(line, "git ") {
		x.files.gitSeen = true // a git checkout: files can be (un)committed
	}
	u.cmd = normCommand(line, x.project)
	u.desc = u.input.str("description")
	// The raw line, not the normalized one: "| tail" hides an exit status.
	u.shell = analyzeShell(line)
	if u.main {
		x.workShell(u.shell.pipes)
	}
	u.errKey = "cmd:" + u.shell.key
	u.label = commandLabel(u.cmd, u.shell.scope, u.shell.test)
	x.lastAction = "running " + u.label
}

// agentFile tells the agent's own files (Claude Code's plans and todos,
// Codex's memories) from the work's.
func agentFile(p string) bool {
	return strings.Contains(p, "/.claude/plans/") || strings.Contains(p, "/.claude/todos/") ||
		strings.Contains(p, "/.codex/") || cliAgentFile(p)
}

// patchUse reads an apply_patch patch: the files it adds, updates, moves
// and deletes.
func (x *extractor) patchUse(u *use, patch string) {
	for _, op := range patchOps(patch) {
		p := x.resolve(op.path)
		if op.to != "" {
			u.moves = append(u.moves, [2]string{p, x.resolve(op.to)})
		}
		u.files = append(u.files, p)
		switch op.kind {
		case "add":
			u.fileOps = append(u.fileOps, FileAdded)
		case "delete":
			u.fileOps = append(u.fileOps, FileDeleted)
		default:
			u.fileOps = append(u.fileOps, "")
		}
	}
	u.name = "apply_patch"
	if len(u.files) == 1 && settingsFile(x.rel(u.files[0])) {
		e := settingsChange("apply_patch", nil, patch)
		u.set = &e
	}
	if len(u.files) > 0 {
		x.lastAction = "patching " + x.rel(u.files[0])
	}
}

// toolResult applies a tool's result to what its call started: a refusal,
// a tool whose result is the point (trackers, questions, plans), or an
// outcome (files, shell commands, background polls, other tools).
func (x *extractor) toolResult(b compact.Block) {
	u, ok := x.pending[b.ToolID]
	if !ok {
		return
	}
	delete(x.pending, b.ToolID)
	if rejected(b.Text) {
		x.refused(u, b.Text)
		return
	}
	if read := resultReaders()[u.name]; read != nil {
		read(x, u, b)
		return
	}
	if u.main {
		x.workResult(u, b)
	}
	if len(u.files) == 0 && u.poll == "" && !u.isShell && u.errKey == "" {
		return // a read: its result says nothing the handoff needs
	}
	o := readOutcome(b.Text)
	if (claudeTools()[u.name] || cliFileTools()[u.name]) && !b.IsError && o.background == "" {
		// Claude Code flags every failure, a non-zero exit included: no flag
		// means success, whatever the output happens to contain.
		o.exit, o.exitKnown = 0, true
	}
	failed := b.IsError || (o.exitKnown && o.exit != 0) || (u.name == "apply_patch" && rePatchFailed.MatchString(o.text))
	switch {
	case len(u.files) > 0:
		x.fileResult(u, failed, b.Text)
		x.settle(u, failed, o.text, false)
	case u.poll != "":
		if bg, ok := x.bg[u.poll]; ok && !b.IsError {
			x.finishBackground(u.poll, bg, o)
		}
	case u.isShell:
		x.shellResult(u, b.IsError, failed, o)
	default:
		x.settle(u, failed, o.text, false)
	}
}

// refused applies a call the user refused: it never ran; what they said
// instead is a request and a correction, and the words that announced the
// call are not what the agent will do next.
func (x *extractor) refused(u use, text string) {
	x.files.settle(u.files, true, "", x.seq)
	x.lastAction = u.prevAction
	if x.prose.at >= 0 && x.prose.at >= u.seq-1 {
		x.prose.lastWords = ""
	}
	if u.name == "AskUserQuestion" {
		// The question dialog's own words ("The user wants to clarify
		// these questions…"): the user answers in the next prompt.
		return
	}
	if fb := rejectFeedback(text); fb != "" && u.main {
		fb = shortenMiddle(fb, maxRequest)
		x.request(fb)
		x.decision.add("user: "+shorten(oneLine(fb), 240), scoreCorrection, x.seq)
	}
}

// resultReaders read the tools whose result is the point of the call.
var resultReaders = sync.OnceValue(func() map[string]func(x *extractor, u use, b compact.Block) {
	return map[string]func(x *extractor, u use, b compact.Block){
		"TaskCreate": taskResult, "TaskUpdate": taskResult, "TaskList": taskResult, "TaskGet": taskResult,
		"AskUserQuestion": func(x *extractor, u use, b compact.Block) {
			for _, a := range answers(b.Text) {
				x.decision.add(a, scoreAnswer, x.seq)
			}
		},
		"ExitPlanMode": func(x *extractor, u use, b compact.Block) {
			if !b.IsError && strings.Contains(b.Text, "approved") {
				x.plan.text = shorten(approvedPlan(u.input, b.Text), maxPlan)
				x.plan.seq = x.seq
				x.plan.tasksAt = x.tracker.count()
			}
		},
	}
})

// taskResult applies a Task tool's result, a subagent's too: the Task
// tools work on one list the session (and its team) shares, unlike
// TodoWrite, whose list is each agent's own.
func taskResult(x *extractor, u use, b compact.Block) {
	if !b.IsError && !strings.HasPrefix(strings.TrimSpace(b.Text), "Task not found") {
		x.tracker.taskTool(u.name, u.input, b.Text, x.seq)
	}
}

// shellResult applies a shell command's result: still running in the
// background (its poll or notice will say), or done.
func (x *extractor) shellResult(u use, isError, failed bool, o outcome) {
	if o.background != "" && !failed {
		x.bg[o.background] = background{u}
		if u.shell.test {
			x.testStatus(u.cmd, TestRunning)
		}
		return
	}
	x.shellDone(u, isError, o)
}

// fileResult applies a file tool's result.
func (x *extractor) fileResult(u use, failed bool, text string) {
	for i, p := range u.files {
		status := ""
		if i < len(u.fileOps) {
			status = u.fileOps[i]
		}
		if u.name == "Write" && strings.Contains(text, "File created successfully") || cliFileCreated(u.name, text) {
			status = FileAdded
		}
		if status == FileDeleted && !failed {
			x.work.remove(p)
		}
		x.files.settle([]string{p}, failed, status, x.seq)
	}
	if failed {
		return
	}
	for _, mv := range u.moves {
		x.files.move(mv[0], mv[1], x.seq)
	}
	x.hist.changes = append(x.hist.changes, x.seq)
	x.prose.changesAfter++
	if len(u.files) == 1 && u.main && u.set != nil {
		x.settings.apply(u.files[0], *u.set, x.seq)
	}
}

// claudeTools are Claude Code's tools that change things; their results
// carry is_error.
var claudeTools = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"Bash": true, "Edit": true, "Write": true, "MultiEdit": true, "NotebookEdit": true}
})

// rePatchFailed matches Codex's words for a patch that did not apply.
var rePatchFailed = lazyRegexp(`(?i)verification failed|failed to apply patch|invalid patch|invalid hunk`)

// shellDone records the outcome of a shell command that has finished.
func (x *extractor) shellDone(u use, isError bool, o outcome) {
	failed := isError || (o.exitKnown && o.exit != 0)
	if u.shell.test && !failed && (u.shell.masked || !o.exitKnown) {
		// The exit status speaks for the runner unless something ran after
		// it or read its output through a pipe; then the runner's own
		// words must.
		failed = testFailed(o.text)
	}
	if u.shell.test {
		status := TestPassed
		if failed {
			status = TestFailed
		}
		x.testStatus(u.cmd, status)
		if !failed {
			// A broader run that passed speaks for the narrower ones.
			for i, t := range x.tests.runs {
				if t.Status == TestFailed && u.shell.scope.covers(x.tests.scopes[i]) {
					x.tests.runs[i].Status = TestPassed
				}
			}
		}
	}
	if !failed {
		x.shellSucceeded(u, o.text)
	}
	if failed && u.shell.exploratory && !u.shell.test {
		return // grep with no match, ls of a missing path: an answer
	}
	x.settle(u, failed, o.text, u.shell.test)
}

// shellSucceeded follows what a successful command did: files it changed,
// commits, tracker commands, and the run itself for the routine.
func (x *extractor) shellSucceeded(u use, output string) {
	before := len(x.files.order)
	changedBefore := x.fileChangeCount()
	x.shellFiles(u.shell.pipes, x.seq)
	if len(x.files.order) != before || x.fileChangeCount() != changedBefore {
		x.hist.changes = append(x.hist.changes, x.seq)
		x.prose.changesAfter++
	}
	if u.main {
		x.shellList(u.shell.pipes, output)
	}
	for _, p := range u.shell.pipes {
		for i, words := range p {
			w := shell.Program(words)
			if len(w) == 0 {
				continue
			}
			switch path.Base(w[0]) {
			case "bd":
				x.tracker.beads(w, output, x.seq)
			case "gh":
				x.tracker.github(w, output, x.seq)
			case "git":
				if firstArg(w) == "commit" && !strings.Contains(output, "nothing to commit") {
					x.hist.commits = append(x.hist.commits, x.seq)
				}
			}
			if !looks(w) && i == 0 { // what follows a pipe filters its output
				sc := commandScope(w, runsTests(words))
				if sc.key != "" && !trivial()[path.Base(w[0])] && !notRoutine()[sc.key] {
					x.hist.runs = append(x.hist.runs, shellRun{seq: x.seq, key: sc.key, display: stepDisplay(w, sc)})
				}
			}
		}
	}
}

// fileChangeCount sums the changes the tracker saw, to tell whether a
// command changed a known file again.
func (x *extractor) fileChangeCount() int {
	n := 0
	for _, fi := range x.files.files {
		n += fi.changed
	}
	return n
}

// finishBackground applies a poll of a background command: nothing while
// it still runs, its outcome once it has finished.
func (x *extractor) finishBackground(id string, bg background, o outcome) {
	if m := reStatusTag.FindStringSubmatch(o.text); m != nil && m[1] == "running" {
		return
	}
	if o.background != "" { // Codex: "Process running with session ID n"
		return
	}
	if !o.exitKnown && reStatusTag.FindStringSubmatch(o.text) == nil {
		return // no sign that it finished
	}
	delete(x.bg, id)
	x.shellDone(bg.u, false, o)
}

// taskNotification reads Claude Code's notice that a background command
// finished.
func (x *extractor) taskNotification(text string) {
	m := reTaskID.FindStringSubmatch(text)
	if m == nil {
		return
	}
	bg, ok := x.bg[m[1]]
	if !ok {
		return
	}
	o := readOutcome(text)
	o.text = ""
	if s := reSummaryTag.FindStringSubmatch(text); s != nil {
		o.text = s[1]
	}
	if !o.exitKnown {
		if s := reStatusTag.FindStringSubmatch(text); s != nil && s[1] == "failed" {
			o.exit, o.exitKnown = 1, true
		}
	}
	if !o.exitKnown {
		return
	}
	delete(x.bg, m[1])
	// The notice carries no runner output: the exit status is all there is.
	bg.u.shell.masked = false
	x.shellDone(bg.u, false, o)
}

var reSummaryTag = lazyRegexp(`(?s)<summary>(.*?)</summary>`)

func (x *extractor) testStatus(cmd, status string) {
	if i, ok := x.tests.index[cmd]; ok {
		x.tests.runs[i].Status = status
		return
	}
	x.tests.index[cmd] = len(x.tests.runs)
	x.tests.runs = append(x.tests.runs, TestRun{Command: cmd, Status: status})
	x.tests.scopes = append(x.tests.scopes, analyzeShell(cmd).scope)
}

// settle records a failure of a call, or resolves what its success fixed.
func (x *extractor) settle(u use, failed bool, text string, test bool) {
	if u.errKey == "" {
		return
	}
	core := ""
	if u.isShell {
		core = oneLine(u.cmd)
	}
	if !failed {
		x.errs.succeed(u.errKey, u.shell.scope, u.desc, core)
		return
	}
	x.lastFailure = x.seq
	sc := u.shell.scope
	if !u.isShell {
		sc = scope{}
	}
	x.errs.fail(failure{key: u.errKey, scope: sc, desc: u.desc, core: core, seq: x.seq,
		text: errorText(u.label, text, test, sc), label: u.label})
}

// markedLines picks decision:, blocker: / blocked by and next: lines out of
// prose, skipping fenced code.
func (x *extractor) markedLines(text string) {
	fence := false
	for _, line := range strings.Split(clean(text), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		t = undecorate(t)
		lower := strings.ToLower(t)
		switch {
		case strings.HasPrefix(lower, "decision:"):
			x.decision.add(t[len("decision:"):], scoreMarked, x.seq)
		case strings.HasPrefix(lower, "next:"):
			x.notes = appendUnique(x.notes, x.seenNote, itemText(t[len("next:"):]))
		case strings.HasPrefix(lower, "next step:"):
			x.notes = appendUnique(x.notes, x.seenNote, itemText(t[len("next step:"):]))
		case strings.HasPrefix(lower, "blocker:"):
			x.blockers = appendUnique(x.blockers, x.seenBlk, itemText(t[len("blocker:"):]))
		}
	}
}

var reBlockedBy = lazyRegexp(`(?i)\bblocked (?:by|on)\b|\bblocker\b|\bwaiting (?:for|on) (?:the |a |an )?\w+ (?:from|to)\b`)

var reListMarker = lazyRegexp(`^(?:[-*+]|\d+[.)]|>)\s+`)

// undecorate strips Markdown that may precede a marker: list bullets,
// quotes and emphasis ("- **Decision:** ...").
func undecorate(s string) string {
	for {
		t := strings.TrimLeft(unemphasize(reListMarker.ReplaceAllString(s, "")), "*_ ")
		if t == s {
			return s
		}
		s = t
	}
}

func itemText(s string) string {
	s = strings.TrimLeft(unemphasize(strings.TrimLeft(s, " \t")), "*_ \t")
	return shorten(oneLine(s), maxItem)
}

// unemphasize takes the emphasis off a text's lead: "**Key fix:** it
// works" is "Key fix: it works". Stripping only the opening marker left
// the closing one in the item ("Key fix:** it works"). Asterisks only:
// underscores lead identifiers as often (__init__.py).
func unemphasize(s string) string {
	for _, m := range []string{"**", "*"} {
		rest, ok := strings.CutPrefix(s, m)
		if !ok {
			continue
		}
		if i := strings.Index(rest, m); i > 0 {
			return rest[:i] + rest[i+len(m):]
		}
		return s
	}
	return s
}

var reApprovedPlan = lazyRegexp(`(?s)## Approved Plan[^\n]*:\n(.+)$`)

// approvedPlan is the plan the user approved: from the call's input, or
// from the approval text.
func approvedPlan(in input, result string) string {
	if p := in.str("plan"); p != "" {
		return clean(p)
	}
	if m := reApprovedPlan.FindStringSubmatch(result); m != nil {
		return clean(m[1])
	}
	return ""
}

func (x *extractor) finish() Doc {
	// Calls whose results never came (the messages end, or were cut there)
	// are given the benefit of the doubt: an edit probably landed, a test
	// is still running.
	for _, u := range x.pending {
		if u.isShell && u.shell.test {
			if _, ok := x.tests.index[u.cmd]; !ok {
				x.testStatus(u.cmd, TestRunning)
			}
		}
		if len(u.files) > 0 {
			x.fileResult(u, false, "")
		}
	}
	d := Doc{
		Session:   firstNonEmpty(x.opts.SessionID, x.sessionID),
		Project:   x.opts.Project,
		Branch:    x.opts.Branch,
		CreatedAt: x.opts.CreatedAt,
		Trigger:   x.opts.Trigger,
		Task:      clean(x.opts.Task),
		TestsRun:  x.tests.runs,
		Requests:  x.requests,
		Plan:      x.plan.text,
		Notes:     x.opts.Notes,
	}
	if d.CreatedAt.IsZero() {
		d.CreatedAt = x.lastTime
	}
	d.CreatedAt = d.CreatedAt.UTC()
	if d.Task == "" && len(x.requests) > 0 {
		d.Task = x.requests[0]
	}
	for _, it := range x.tracker.tasks() {
		t := it.Task
		if t.Status == TaskInProgress {
			t.Detail = x.taskDetail(it)
		}
		d.Tasks = append(d.Tasks, t)
	}
	d.Files = x.files.result()
	if wt := x.opts.WorkTree; wt != nil {
		d.Files = applyWorkTree(d.Files, wt)
	}
	for _, f := range d.Files {
		d.FilesModified = append(d.FilesModified, f.Path)
	}
	x.settingsDecisions()
	x.decision.forgetFixed(x.errs.isOpen)
	d.Decisions = x.decision.result()
	// What the agent said blocks it counts when it is the last thing it
	// said: earlier ones may have been lifted since.
	for _, p := range paragraphs(unmarked(x.prose.last)) {
		for _, s := range splitSentences(p.text) {
			if reBlockedBy.MatchString(s) {
				x.blockers = appendUnique(x.blockers, x.seenBlk, itemText(s))
			}
		}
	}
	d.Blockers = x.blockers
	d.Errors = x.errs.texts()
	if x.prose.callsAfter > maxCallsAfterWords || x.prose.changesAfter > 0 {
		x.prose.lastWords = "" // the agent went on working after saying them
	}
	d.LastWords = x.prose.lastWords
	d.NextSteps = x.nextSteps(d.Tasks)
	d.WorkingSet = x.workingSet(x.tracker.tasks())
	d.Context = x.contextLine(d.Tasks)
	return d
}

// settingsDecisions adds the settings of the files the session changed
// most recently, and that still exist, to the decisions.
func (x *extractor) settingsDecisions() {
	kept := 0
	for i := len(x.settings.order) - 1; i >= 0 && kept < maxSettings; i-- {
		p := x.settings.order[i]
		if fi := x.files.files[p]; fi == nil || fi.status == FileDeleted {
			continue
		}
		if s := x.settings.summary(p, x.rel(p)); s != "" {
			x.decision.list = append(x.decision.list, decision{text: shorten(s, maxItem), score: scoreSetting,
				seq: x.settings.seq[p], words: wordSet(s), setting: true, about: -1})
			kept++
		}
	}
}

// applyWorkTree corrects the files' states with what git says: a file git
// reports changed is uncommitted, one it does not is committed (or was
// reverted); changes the transcript missed are added.
func applyWorkTree(files []FileChange, wt *WorkTree) []FileChange {
	changed := map[string]FileChange{}
	for _, c := range wt.Changed {
		changed[c.Path] = c
	}
	committed := map[string]bool{}
	for _, p := range wt.Committed {
		committed[p] = true
	}
	seen := map[string]bool{}
	var out []FileChange
	for _, f := range files {
		seen[f.Path] = true
		if c, ok := changed[f.Path]; ok {
			f.Git = GitUncommitted
			if c.Status == FileAdded || c.Status == FileDeleted {
				f.Status = c.Status
			}
		} else {
			f.Git = GitCommitted
			if !committed[f.Path] && f.Status != FileDeleted {
				continue // changed and changed back: nothing to hand over
			}
		}
		out = append(out, f)
	}
	for _, c := range wt.Changed {
		if !seen[c.Path] {
			c.Git = GitUncommitted
			out = append(out, c)
		}
	}
	return out
}

// contextLine says where the work stopped: the last thing the agent did,
// the item in progress, and how full the context was.
func (x *extractor) contextLine(tasks []Task) string {
	var parts []string
	stop := ""
	if x.lastAction != "" {
		stop = "Stopped while " + x.lastAction
	}
	for _, t := range tasks {
		if t.Status == TaskInProgress && !x.tracker.hasChildren(t.ID) {
			name := shorten(t.Subject, 60)
			if t.ID != "" {
				name = strings.TrimSuffix(taskLine(Task{ID: t.ID, Status: t.Status}), "")
				name = strings.TrimPrefix(name, "["+taskLabels()[t.Status]+"] ")
			}
			stop = strings.TrimSpace(stop + " (" + name + " in progress)")
			break
		}
	}
	if stop != "" {
		parts = append(parts, stop)
	}
	switch {
	case x.opts.ContextUsed > 0 && x.opts.ContextLimit > 0:
		parts = append(parts, fmt.Sprintf("context %s of %s tokens (%d%%)", humanize.Comma(x.opts.ContextUsed),
			humanize.Comma(x.opts.ContextLimit), x.opts.ContextUsed*100/x.opts.ContextLimit))
	case x.opts.ContextUsed > 0:
		parts = append(parts, fmt.Sprintf("context %s tokens", humanize.Comma(x.opts.ContextUsed)))
	case x.opts.ContextSummary != "":
		parts = append(parts, oneLine(clean(x.opts.ContextSummary)))
	}
	parts = append(parts, fmt.Sprintf("compactions: %d", x.opts.Compactions))
	return strings.Join(parts, "; ")
}

// resolve makes a path relative to the project (as Codex patches give
// them) absolute, so that the same file edited by two tools is one file.
func (x *extractor) resolve(p string) string {
	p = clean(p)
	if x.project == "" || isAbs(p) || p == "" {
		return p
	}
	return path.Join(x.project, p)
}

func (x *extractor) rel(p string) string {
	if r, ok := relTo(p, x.project); ok {
		return r
	}
	return p
}

func isAbs(p string) bool {
	return strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) ||
		(len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') &&
			(p[0]|0x20) >= 'a' && (p[0]|0x20) <= 'z')
}

// patchOp is one file header of an apply_patch patch.
type patchOp struct {
	kind string // add, update, delete
	path string
	to   string // *** Move to: of an update
}

// patchOps reads an apply_patch patch's file headers.
func patchOps(patch string) []patchOp {
	if !strings.Contains(patch, "*** ") {
		return nil
	}
	var ops []patchOp
	for _, line := range strings.Split(patch, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "*** Add File:"):
			ops = append(ops, patchOp{kind: "add", path: strings.TrimSpace(line[len("*** Add File:"):])})
		case strings.HasPrefix(line, "*** Update File:"):
			ops = append(ops, patchOp{kind: "update", path: strings.TrimSpace(line[len("*** Update File:"):])})
		case strings.HasPrefix(line, "*** Delete File:"):
			ops = append(ops, patchOp{kind: "delete", path: strings.TrimSpace(line[len("*** Delete File:"):])})
		case strings.HasPrefix(line, "*** Move to:") && len(ops) > 0:
			ops[len(ops)-1].to = strings.TrimSpace(line[len("*** Move to:"):])
		}
	}
	return ops
}

// patchText returns the patch a shell line passes to apply_patch, if any.
func patchText(line string) string {
	if !strings.Contains(line, "*** Begin Patch") && !strings.Contains(line, "*** Update File:") &&
		!strings.Contains(line, "*** Add File:") && !strings.Contains(line, "*** Delete File:") {
		return ""
	}
	return line
}

// input is a decoded tool input; nil when it is not a JSON object.
type input map[string]any

func decodeInput(raw string) input {
	raw = strings.TrimSpace(raw)
	if !strings.HasPrefix(raw, "{") {
		return nil
	}
	var in input
	if json.Unmarshal([]byte(raw), &in) != nil {
		return nil
	}
	return in
}

func (in input) str(key string) string {
	switch v := in[key].(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

// shellLine returns the command line a shell tool call runs: Claude's Bash
// {"command": "..."}, Codex's exec_command {"cmd": "..."} and shell
// {"command": ["bash", "-lc", "..."]}.
func shellLine(tool string, in input) (string, bool) {
	switch tool {
	case "Bash", "shell", "exec_command", "local_shell", "shell_command", "container.exec", "run_shell_command", "bash":
	default:
		return "", false
	}
	for _, k := range []string{"command", "cmd"} {
		switch v := in[k].(type) {
		case string:
			return v, v != ""
		case []any:
			var args []string
			for _, a := range v {
				if s, ok := a.(string); ok {
					args = append(args, s)
				}
			}
			if len(args) >= 3 && (args[1] == "-lc" || args[1] == "-c") {
				switch path.Base(args[0]) {
				case "bash", "sh", "zsh", "dash":
					return args[2], true
				}
			}
			return strings.Join(args, " "), len(args) > 0
		}
	}
	return "", false
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
