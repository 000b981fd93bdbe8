package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/store"
)

// AgentName is an agent's name for people: "Claude Code", "Codex",
// "Gemini CLI".
func AgentName(source string) string {
	if a, ok := AgentBySource(source); ok {
		return a.Name
	}
	return source
}

// toolMap is how one agent's tools are called in the other, for a handoff
// that crosses between Claude Code and Codex: the tools a handoff's text
// may name (file edits, the shell, the task list), from → to. Other pairs
// are made from each agent's AgentTools (toolLines).
var toolMap = map[string][][2]string{
	"claude>codex": {
		{"Edit, MultiEdit, Write (file edits)", "apply_patch"},
		{"Bash", "your shell (exec_command)"},
		{"Read, Grep, Glob", "your shell (cat, sed -n, rg)"},
		{"TodoWrite, TaskCreate, TaskUpdate (the task list)", "update_plan (your plan)"},
		{"WebSearch, WebFetch", "web_search"},
	},
	"codex>claude": {
		{"apply_patch (file edits)", "Edit, MultiEdit or Write"},
		{"shell, exec_command", "Bash"},
		{"update_plan (the plan)", "TodoWrite (your task list)"},
		{"web_search", "WebSearch"},
	},
}

// toolLines is how from's tools are called in to, by role: toolMap's
// wording for Claude Code and Codex, else each role both agents have a
// tool for.
func toolLines(from, to Agent) [][2]string {
	if m, ok := toolMap[from.Source+">"+to.Source]; ok {
		return m
	}
	var out [][2]string
	for _, r := range []struct{ role, a, b string }{
		{"file edits", from.Tools.Edit, to.Tools.Edit},
		{"the shell", from.Tools.Shell, to.Tools.Shell},
		{"reading and searching files", from.Tools.Read, to.Tools.Read},
		{"the task list", from.Tools.Plan, to.Tools.Plan},
		{"the web", from.Tools.Web, to.Tools.Web},
	} {
		if r.a != "" && r.b != "" && r.a != r.b {
			out = append(out, [2]string{r.a + " (" + r.role + ")", r.b})
		}
	}
	return out
}

// planTool is the tool that holds an agent's task list ("" for none).
func planTool(agent string) string {
	if a, ok := AgentBySource(agent); ok {
		return a.Tools.Plan
	}
	return ""
}

// CrossResume is a session's resume context as the first prompt of a
// session of another agent (or the same).
type CrossResume struct {
	Resume
	From, To string
	Prompt   string
}

// CrossResume renders the resume context of req's session as a first
// prompt for the agent to (an Agent's Source), whichever agent the
// session ran in: which agent and session it comes from and when, the
// other agent's tool names in this one's, the task list as a plan to
// record first, and the resume context itself, fenced as recorded data.
func (e *Engine) CrossResume(ctx context.Context, req ResumeRequest, to string) (CrossResume, error) {
	toAgent, ok := AgentBySource(to)
	if !ok || to == "" {
		return CrossResume{}, invalidf("--for %q: want one of %s", to, AgentSources())
	}
	r, err := e.Resume(ctx, req)
	if err != nil {
		return CrossResume{}, err
	}
	fromAgent, ok := AgentBySource(r.Session.Source)
	if !ok {
		fromAgent, _ = AgentBySource("claude")
	}
	from := fromAgent.Source
	var b strings.Builder
	// Ledger's own lines name the session only by a plain id: its project,
	// branch and tasks are recorded data, inside the fence (the resume
	// context's header names them too).
	var about []string
	if handoff.PlainID(r.Session.ID) {
		about = append(about, r.Session.ID)
	}
	if !r.Session.LastAt.IsZero() {
		about = append(about, "last active "+r.Session.LastAt.Format("2006-01-02 15:04 UTC"))
	}
	fmt.Fprintf(&b, "Carry on the work of a %s session", AgentName(from))
	if len(about) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(about, ", "))
	}
	b.WriteString(". ")
	if r.HandoffID != nil {
		fmt.Fprintf(&b, "Its handoff (written %s) is below.", r.Handoff.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"))
	} else {
		b.WriteString("Its handoff, extracted from its latest messages, is below.")
	}
	b.WriteString(" Check it against the code before acting on it, then continue with the next steps.\n")
	if m := toolLines(fromAgent, toAgent); len(m) > 0 {
		fmt.Fprintf(&b, "\nThe handoff was recorded in %s, whose tools have other names here:\n", AgentName(from))
		for _, p := range m {
			fmt.Fprintf(&b, "- %s → %s\n", p[0], p[1])
		}
	}
	if plan := planSteps(r.Handoff.Tasks); len(plan) > 0 {
		if tool := planTool(to); tool != "" {
			fmt.Fprintf(&b, "\nIts task list, to record first as your plan with %s:\n", tool)
		} else {
			b.WriteString("\nIts task list, to keep as your plan:\n")
		}
		var steps strings.Builder
		for i, s := range plan {
			fmt.Fprintf(&steps, "%d. [%s] %s\n", i+1, s.Status, s.Subject)
		}
		b.WriteString(handoff.Fence(steps.String()))
	}
	b.WriteString("\n")
	b.WriteString(r.Markdown)
	return CrossResume{Resume: r, From: from, To: to, Prompt: b.String()}, nil
}

// planSteps is a task list as plan steps (deleted items left out), in the
// statuses both agents' plan tools take: pending, in_progress, completed.
func planSteps(tasks []handoff.Task) []handoff.Task {
	var out []handoff.Task
	for _, t := range tasks {
		switch t.Status {
		case handoff.TaskDeleted:
			continue
		case handoff.TaskCompleted, handoff.TaskInProgress:
		default:
			t.Status = handoff.TaskPending
		}
		out = append(out, t)
	}
	// Done first, then what is in progress, then what is to do: the order
	// the work goes in.
	rank := map[string]int{handoff.TaskCompleted: 0, handoff.TaskInProgress: 1, handoff.TaskPending: 2}
	slices.SortStableFunc(out, func(a, b handoff.Task) int { return rank[a.Status] - rank[b.Status] })
	return out
}

// crossAgentOffer is SessionStart at a brand-new session (no --startup):
// when the project's latest session ran in the other agent, it offers
// that session's handoff in one line, saying which agent and when (a task
// moved between agents: "Claude ran out of quota, carry on in Codex"). It
// reports whether it offered.
func (e *Engine) crossAgentOffer(ctx context.Context, in HookInput, o HookOptions, r *hookResult) bool {
	if in.Cwd == "" {
		return false
	}
	sess, err := e.LatestProjectSession(ctx, in.Cwd, in.SessionID)
	if err != nil {
		return false
	}
	self := o.Agent
	if _, ok := AgentBySource(self); !ok || self == "" {
		self = "claude"
	}
	if sess.Source == self || sess.Source == "" {
		return false
	}
	line := e.projectHandoffLine(ctx, sess)
	run := "`ledger resume --for " + self + " " + ShortID(sess.ID) + "`"
	if !handoff.PlainID(sess.ID) {
		run = "`ledger resume --for " + self + "` with its id (`ledger sessions` lists it)"
	}
	r.out = NewSessionStartOutput(line + fmt.Sprintf(" To carry on from it, run %s (it prints the handoff as a first prompt); say so to the user if they want to continue that work.", run))
	r.note("offered the handoff of the %s session %s", AgentName(sess.Source), ShortID(sess.ID))
	return true
}

// projectHandoffLine says whose and how recent the project's latest
// handoff is: which agent's session, and when its handoff was written (or
// when it was last active, when none was).
func (e *Engine) projectHandoffLine(ctx context.Context, sess store.Session) string {
	when := "no handoff written yet"
	if st := e.Opened(); st != nil {
		if h, err := st.LatestHandoff(ctx, sess.ID); err == nil {
			when = "handoff written " + ageText(e.now().Sub(h.CreatedAt), h.CreatedAt)
		}
	}
	last := ""
	if !sess.LastAt.IsZero() {
		last = ", last active " + ageText(e.now().Sub(sess.LastAt), sess.LastAt)
	}
	id := ShortID(sess.ID)
	if !handoff.PlainID(sess.ID) {
		id = "its id is in the ledger"
	}
	return fmt.Sprintf("ledger: this project's latest work is a %s session (%s%s; %s).", AgentName(sess.Source), id, last, when)
}

// ageText is a time as "3h ago (2026-11-20 10:05 UTC)".
func ageText(d time.Duration, at time.Time) string {
	return fmt.Sprintf("%s ago (%s)", ago(d), at.UTC().Format("2006-01-02 15:04 UTC"))
}
