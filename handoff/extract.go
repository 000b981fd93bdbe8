package handoff

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/agentledger/ledger/compact"
)

// ExtractOptions carries what the messages themselves do not say.
type ExtractOptions struct {
	// Task overrides the task read from the conversation (`--task`).
	Task string
	// SessionID defaults to the first message's session.
	SessionID string
	// Project is the session's working directory. Relative paths from
	// Codex patches are resolved against it, and the Markdown shows paths
	// under it relative to it.
	Project string
	Branch  string
	// Trigger is "manual" or "auto".
	Trigger string
	// CreatedAt defaults to the time of the last message, so that the same
	// messages always give the same document.
	CreatedAt time.Time
	// ContextSummary is the meter's one-line summary, computed by the
	// caller (this package does not meter).
	ContextSummary string
	// Compactions is the number of compactions the session went through.
	Compactions int
}

// Limits on what one extracted item may hold. The JSON keeps items whole
// up to these; the Markdown shortens them further under budget pressure.
const (
	maxRequest = 500 // runes of one user request
	maxItem    = 300 // runes of a decision, blocker or next step
	maxError   = 200 // runes of an error
	maxLabel   = 80  // runes of the command that names an error
)

// Extract reads a session's messages, in conversation order, into a handoff
// document. It is deterministic and uses no model: files come from the
// tool calls that change files, tests and errors from shell commands and
// their results, decisions, blockers and next steps from marked lines and
// the latest todo list. Subagent (sidechain) tool calls count, since they
// change the same files; their prompts and prose do not.
func Extract(msgs []compact.Message, opts ExtractOptions) Doc {
	x := newExtractor(opts)
	for _, m := range msgs {
		x.message(m)
	}
	return x.finish(msgs)
}

// fileState tracks whether a path was really changed: a call whose result
// is an error (or that the user rejected) changed nothing.
type fileState int

const (
	filePending fileState = iota // call seen, result not (yet) seen
	fileChanged
	fileFailed
)

// use is a tool call waiting for its result.
type use struct {
	name    string
	files   []string // paths the call changes
	cmd     string   // normalized shell command
	shell   shellInfo
	isShell bool
	poll    string // background id this call polls (TaskOutput, write_stdin)
	errKey  string // names the call for error resolution; "" to ignore failures
	label   string // names the call in an error message
}

// background is a shell command still running, by the id its runner gave.
type background struct {
	cmd   string
	shell shellInfo
	key   string
	label string
}

type extractor struct {
	opts    ExtractOptions
	project string

	files     []string
	fileState map[string]fileState

	decisions, blockers, notes []string
	seenDec, seenBlk, seenNote map[string]bool

	tests     []TestRun
	testIndex map[string]int

	errKeys []string
	errText map[string]string

	pending map[string]use
	bg      map[string]background

	todo []string // open items of the latest todo list

	firstReq, lastReq string
	lastTime          time.Time
	sessionID         string
}

func newExtractor(opts ExtractOptions) *extractor {
	project := strings.TrimSpace(opts.Project)
	if len(project) > 1 {
		project = strings.TrimRight(project, "/")
	}
	return &extractor{
		opts: opts, project: project,
		fileState: map[string]fileState{},
		seenDec:   map[string]bool{}, seenBlk: map[string]bool{}, seenNote: map[string]bool{},
		testIndex: map[string]int{},
		errText:   map[string]string{},
		pending:   map[string]use{},
		bg:        map[string]background{},
	}
}

func (x *extractor) message(m compact.Message) {
	if !m.Time.IsZero() {
		x.lastTime = m.Time
	}
	if x.sessionID == "" {
		x.sessionID = m.SessionID
	}
	prose := (m.Role == compact.RoleUser || m.Role == compact.RoleAssistant) && !m.Meta && !m.CompactSummary && !m.Sidechain
	for i, b := range m.Blocks {
		switch b.Kind {
		case compact.BlockToolUse:
			id := b.ToolID
			if id == "" {
				id = fmt.Sprintf("\x00%s#%d", m.UUID, i)
			}
			x.toolUse(id, b, m.Sidechain)
		case compact.BlockToolResult:
			x.toolResult(b)
		case compact.BlockText:
			if m.Role == compact.RoleUser && strings.Contains(b.Text, "<task-notification>") {
				x.taskNotification(b.Text)
			}
			if prose && (m.Role == compact.RoleAssistant || !isInjected(clean(b.Text))) {
				x.markedLines(b.Text)
			}
		}
	}
	if m.Role == compact.RoleUser && !m.Meta && !m.CompactSummary && !m.Sidechain {
		if req := userRequest(m.Text()); req != "" {
			if x.firstReq == "" {
				x.firstReq = req
			}
			x.lastReq = req
		}
	}
}

// Tools that only look: their failures (a file that does not exist, a
// search with no match) are exploration, not unfinished work.
var readOnly = map[string]bool{"Read": true, "Glob": true, "Grep": true, "LS": true, "WebFetch": true,
	"WebSearch": true, "NotebookRead": true, "KillBash": true, "KillShell": true, "Task": true, "Skill": true,
	"AskUserQuestion": true, "ExitPlanMode": true, "EnterPlanMode": true, "TodoWrite": true, "update_plan": true,
	"view_image": true, "list_mcp_resources": true, "list_mcp_resource_templates": true, "read_mcp_resource": true,
	"web_search": true, "TaskOutput": true, "BashOutput": true, "write_stdin": true}

func (x *extractor) toolUse(id string, b compact.Block, sidechain bool) {
	u := use{name: b.ToolName}
	input := decodeInput(b.Input)
	switch b.ToolName {
	case "Edit", "Write", "MultiEdit", "NotebookEdit":
		p := input.str("file_path")
		if b.ToolName == "NotebookEdit" && input.str("notebook_path") != "" {
			p = input.str("notebook_path")
		}
		if p != "" {
			u.files = []string{x.resolve(p)}
		}
	case "apply_patch":
		patch := b.Input
		if input != nil {
			if s := input.str("input"); s != "" {
				patch = s
			} else if s := input.str("patch"); s != "" {
				patch = s
			}
		}
		for _, p := range patchFiles(patch) {
			u.files = append(u.files, x.resolve(p))
		}
	case "TodoWrite":
		if !sidechain {
			x.todoList(input, "todos", "content")
		}
	case "update_plan":
		if !sidechain {
			x.todoList(input, "plan", "step")
		}
	case "TaskOutput", "BashOutput":
		u.poll = firstNonEmpty(input.str("task_id"), input.str("bash_id"), input.str("shell_id"))
	case "write_stdin":
		u.poll = input.str("session_id")
	default:
		if line, ok := shellLine(b.ToolName, input); ok {
			if files := patchFiles(line); len(files) > 0 { // apply_patch run through the shell
				for _, p := range files {
					u.files = append(u.files, x.resolve(p))
				}
				break
			}
			u.isShell = true
			u.cmd = normCommand(line, x.project)
			// The raw line, not the normalized one: "| tail" hides an exit status.
			u.shell = analyzeShell(line)
			u.errKey = "cmd:" + u.shell.key
			u.label = "`" + shorten(oneLine(u.cmd), maxLabel) + "`"
			if u.shell.test {
				u.errKey = "test:" + u.cmd
			}
		}
	}
	if len(u.files) > 0 {
		for _, p := range u.files {
			if _, ok := x.fileState[p]; !ok {
				x.files = append(x.files, p)
				x.fileState[p] = filePending
			}
		}
		u.errKey = "file:" + strings.Join(u.files, "\x00")
		u.label = b.ToolName + " " + x.rel(u.files[0])
		if len(u.files) > 1 {
			u.label += fmt.Sprintf(" (+%d)", len(u.files)-1)
		}
	}
	if u.errKey == "" && u.poll == "" && !readOnly[b.ToolName] && b.ToolName != "" {
		u.errKey = "tool:" + b.ToolName
		u.label = b.ToolName
	}
	x.pending[id] = u
}

func (x *extractor) toolResult(b compact.Block) {
	u, ok := x.pending[b.ToolID]
	if !ok {
		return
	}
	delete(x.pending, b.ToolID)
	if len(u.files) == 0 && u.poll == "" && !u.isShell && u.errKey == "" {
		return // a read: its result says nothing the handoff needs
	}
	if rejected(b.Text) {
		for _, p := range u.files {
			if x.fileState[p] == filePending {
				x.fileState[p] = fileFailed
			}
		}
		return
	}
	o := readOutcome(b.Text)
	if claudeTools[u.name] && !b.IsError && o.background == "" {
		// Claude Code flags every failure, a non-zero exit included: no flag
		// means success, whatever the output happens to contain.
		o.exit, o.exitKnown = 0, true
	}
	failed := b.IsError || (o.exitKnown && o.exit != 0) || (u.name == "apply_patch" && rePatchFailed.MatchString(o.text))
	switch {
	case len(u.files) > 0:
		for _, p := range u.files {
			if !failed {
				x.fileState[p] = fileChanged
			} else if x.fileState[p] == filePending {
				x.fileState[p] = fileFailed
			}
		}
		x.settle(u.errKey, u.label, failed, o.text, false)
	case u.poll != "":
		if bg, ok := x.bg[u.poll]; ok && !b.IsError {
			x.finishBackground(u.poll, bg, o)
		}
	case u.isShell:
		if o.background != "" && !failed {
			x.bg[o.background] = background{cmd: u.cmd, shell: u.shell, key: u.errKey, label: u.label}
			if u.shell.test {
				x.testStatus(u.cmd, TestRunning)
			}
			return
		}
		x.shellDone(u.cmd, u.shell, u.errKey, u.label, b.IsError, o)
	case u.errKey != "":
		x.settle(u.errKey, u.label, failed, o.text, false)
	}
}

// claudeTools are Claude Code's tools that change things; their results
// carry is_error.
var claudeTools = map[string]bool{"Bash": true, "Edit": true, "Write": true, "MultiEdit": true, "NotebookEdit": true}

// rePatchFailed matches Codex's words for a patch that did not apply.
var rePatchFailed = regexp.MustCompile(`(?i)verification failed|failed to apply patch|invalid patch|invalid hunk`)

// shellDone records the outcome of a shell command that has finished.
func (x *extractor) shellDone(cmd string, sh shellInfo, key, label string, isError bool, o outcome) {
	failed := isError || (o.exitKnown && o.exit != 0)
	if !sh.test {
		x.settle(key, label, failed, o.text, false)
		return
	}
	// The exit status speaks for the runner unless something ran after it
	// or read its output through a pipe; then the runner's own words must.
	if !failed && (sh.masked || !o.exitKnown) {
		failed = testFailed(o.text)
	}
	status := TestPassed
	if failed {
		status = TestFailed
	}
	x.testStatus(cmd, status)
	x.settle(key, label, failed, o.text, true)
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
	x.shellDone(bg.cmd, bg.shell, bg.key, bg.label, false, o)
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
	bg.shell.masked = false
	x.shellDone(bg.cmd, bg.shell, bg.key, bg.label, false, o)
}

func (x *extractor) testStatus(cmd, status string) {
	if i, ok := x.testIndex[cmd]; ok {
		x.tests[i].Status = status
		return
	}
	x.testIndex[cmd] = len(x.tests)
	x.tests = append(x.tests, TestRun{Command: cmd, Status: status})
}

// settle records a failure of key, or clears it when key later succeeds.
// The newest failure of a key replaces older ones and moves to the end.
func (x *extractor) settle(key, label string, failed bool, text string, test bool) {
	if key == "" {
		return
	}
	if _, open := x.errText[key]; open {
		for i, k := range x.errKeys {
			if k == key {
				x.errKeys = append(x.errKeys[:i], x.errKeys[i+1:]...)
				break
			}
		}
		delete(x.errText, key)
	}
	if !failed {
		return
	}
	msg := label + " failed"
	if detail := errorLine(text, test); detail != "" {
		msg = label + ": " + detail
	}
	x.errKeys = append(x.errKeys, key)
	x.errText[key] = shorten(oneLine(msg), maxError)
}

func (x *extractor) todoList(in input, listKey, textKey string) {
	var items []map[string]any
	if raw, ok := in[listKey]; ok {
		if b, err := json.Marshal(raw); err == nil {
			_ = json.Unmarshal(b, &items)
		}
	}
	if items == nil {
		return
	}
	x.todo = x.todo[:0]
	for _, it := range items {
		text, _ := it[textKey].(string)
		status, _ := it["status"].(string)
		text = shorten(oneLine(clean(text)), maxItem)
		switch strings.ToLower(status) {
		case "completed", "complete", "done", "cancelled", "canceled":
			continue
		case "in_progress", "in-progress", "inprogress", "active":
			text = "[in progress] " + text
		}
		if text != "" {
			x.todo = append(x.todo, text)
		}
	}
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
			x.decisions = appendUnique(x.decisions, x.seenDec, itemText(t[len("decision:"):]))
		case strings.HasPrefix(lower, "next:"):
			x.notes = appendUnique(x.notes, x.seenNote, itemText(t[len("next:"):]))
		case strings.HasPrefix(lower, "next step:"):
			x.notes = appendUnique(x.notes, x.seenNote, itemText(t[len("next step:"):]))
		case strings.HasPrefix(lower, "blocker:"):
			x.blockers = appendUnique(x.blockers, x.seenBlk, itemText(t[len("blocker:"):]))
		case strings.Contains(lower, "blocker:") || strings.Contains(lower, "blocked by"):
			x.blockers = appendUnique(x.blockers, x.seenBlk, itemText(t))
		}
	}
}

var reListMarker = regexp.MustCompile(`^(?:[-*+]|\d+[.)]|>)\s+`)

// undecorate strips Markdown that may precede a marker: list bullets,
// quotes and emphasis ("- **Decision:** ...").
func undecorate(s string) string {
	for {
		t := strings.TrimLeft(reListMarker.ReplaceAllString(s, ""), "*_ ")
		if t == s {
			return s
		}
		s = t
	}
}

func itemText(s string) string {
	s = strings.TrimLeft(s, "*_ \t")
	return shorten(oneLine(s), maxItem)
}

// Prefixes of user-role text the agent injected rather than the user
// typed: command plumbing, hook output, environment blocks, notices.
var injected = []string{"<command-", "<local-command", "Caveat:", "<system-reminder>", "[Request interrupted",
	"<task-notification>", "<bash-input>", "<bash-stdout>", "<bash-stderr>", "<user-prompt-submit-hook>",
	"<environment_context>", "<user_instructions>", "<INSTRUCTIONS>", "# AGENTS.md instructions", "<turn_aborted>",
	"<user_shell_command>", "<permissions instructions>", "This session is being continued from a previous conversation"}

// Slash commands that manage the session rather than ask for work.
var housekeeping = map[string]bool{"/compact": true, "/clear": true, "/context": true, "/cost": true, "/model": true,
	"/config": true, "/help": true, "/login": true, "/logout": true, "/resume": true, "/memory": true, "/status": true,
	"/doctor": true, "/exit": true, "/quit": true, "/permissions": true, "/hooks": true, "/mcp": true, "/agents": true,
	"/ide": true, "/vim": true, "/theme": true, "/terminal-setup": true, "/add-dir": true, "/export": true,
	"/release-notes": true, "/bashes": true, "/usage": true, "/rewind": true, "/statusline": true,
	"/privacy-settings": true, "/upgrade": true, "/output-style": true, "/todos": true, "/plugin": true}

var reSummaryTag = regexp.MustCompile(`(?s)<summary>(.*?)</summary>`)

var (
	reCommandName = regexp.MustCompile(`<command-name>\s*([^<]*?)\s*</command-name>`)
	reCommandArgs = regexp.MustCompile(`(?s)<command-args>(.*?)</command-args>`)
)

// userRequest returns text as a user request, or "" when it is not one.
// A slash command with arguments ("/orchestrator build a TODO app") is a
// request; /compact and its kind are not.
func userRequest(text string) string {
	text = clean(text)
	if text == "" {
		return ""
	}
	if m := reCommandName.FindStringSubmatch(text); m != nil && strings.HasPrefix(text, "<command-") {
		name := m[1]
		if !strings.HasPrefix(name, "/") {
			name = "/" + name
		}
		if housekeeping[name] {
			return ""
		}
		if a := reCommandArgs.FindStringSubmatch(text); a != nil && strings.TrimSpace(a[1]) != "" {
			return shorten(name+" "+strings.TrimSpace(a[1]), maxRequest)
		}
		return name
	}
	if isInjected(text) {
		return ""
	}
	return shorten(text, maxRequest)
}

func isInjected(text string) bool {
	for _, p := range injected {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// rejected reports a tool result that says the user refused the call: it
// did not run, so it neither failed nor changed anything.
func rejected(text string) bool {
	return strings.Contains(text, "The user doesn't want to proceed with this tool use") ||
		strings.Contains(text, "The user doesn't want to take this action") ||
		strings.HasPrefix(strings.TrimSpace(text), "[Request interrupted by user")
}

// latestRequestLabel introduces the latest request in a task that also
// holds the first one.
const latestRequestLabel = "Latest request: "

func (x *extractor) finish(msgs []compact.Message) Doc {
	// Calls whose results never came (the messages end, or were cut there)
	// are given the benefit of the doubt: an edit probably landed, a test
	// is still running.
	for _, u := range x.pending {
		if u.isShell && u.shell.test {
			if _, ok := x.testIndex[u.cmd]; !ok {
				x.testStatus(u.cmd, TestRunning)
			}
		}
	}
	d := Doc{
		Session:   firstNonEmpty(x.opts.SessionID, x.sessionID),
		Project:   x.opts.Project,
		Branch:    x.opts.Branch,
		CreatedAt: x.opts.CreatedAt,
		Trigger:   x.opts.Trigger,
		Task:      clean(x.opts.Task),
		TestsRun:  x.tests,
	}
	if d.CreatedAt.IsZero() {
		d.CreatedAt = x.lastTime
	}
	d.CreatedAt = d.CreatedAt.UTC()
	if d.Task == "" {
		d.Task = x.firstReq
		if x.lastReq != x.firstReq {
			d.Task += "\n\n" + latestRequestLabel + x.lastReq
		}
	}
	for _, p := range x.files {
		if x.fileState[p] != fileFailed {
			d.FilesModified = append(d.FilesModified, p)
		}
	}
	d.Decisions = x.decisions
	d.Blockers = x.blockers
	for _, k := range x.errKeys {
		d.Errors = append(d.Errors, x.errText[k])
	}
	d.NextSteps = append(d.NextSteps, x.todo...)
	seen := map[string]bool{}
	for _, s := range d.NextSteps {
		seen[s] = true
	}
	for _, n := range x.notes {
		d.NextSteps = appendUnique(d.NextSteps, seen, n)
	}
	d.Context = contextLine(x.opts.ContextSummary, x.opts.Compactions)
	return d
}

func contextLine(summary string, compactions int) string {
	summary = oneLine(clean(summary))
	c := fmt.Sprintf("compactions: %d", compactions)
	if summary == "" {
		return c
	}
	return summary + "; " + c
}

// resolve makes a path relative to the project (as Codex patches give
// them) absolute, so that the same file edited by two tools is one file.
func (x *extractor) resolve(p string) string {
	p = clean(p)
	if x.project == "" || isAbs(p) {
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

// patchFiles lists the files an apply_patch patch touches, from its
// headers. A moved file counts at both its old and its new path.
func patchFiles(patch string) []string {
	if !strings.Contains(patch, "*** ") {
		return nil
	}
	var files []string
	seen := map[string]bool{}
	for _, line := range strings.Split(patch, "\n") {
		line = strings.TrimSpace(line)
		for _, h := range []string{"*** Update File:", "*** Add File:", "*** Delete File:", "*** Move to:"} {
			if rest, ok := strings.CutPrefix(line, h); ok {
				files = appendUnique(files, seen, strings.TrimSpace(rest))
			}
		}
	}
	return files
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
	case "Bash", "shell", "exec_command", "local_shell", "shell_command", "container.exec", "run_shell_command":
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
