package e2e

// End-to-end tests of the agents whose hooks ledger writes in their own
// settings.json (Gemini CLI, Qwen Code, Copilot CLI) or as a plugin file
// (Pi, OpenCode, Kilo CLI), each at its pinned version, run headless against the scripted
// model server (Gemini API; Chat Completions) through a tool call, a
// compaction and a resumed session.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/cmd/internal/agenttest"
	"github.com/agentledger/ledger/store"
)

// streamLine is a line of a JSON-lines output of Gemini CLI
// (--output-format stream-json), Qwen Code (the same flag, Claude Code's
// shape) or Copilot CLI (--output-format json): the fields that tell the
// session and how the run ended.
type streamLine struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"` // Gemini CLI, Qwen Code
	Session   string `json:"sessionId"`  // Copilot CLI's result
	Status    string `json:"status"`     // Gemini CLI's result
	IsError   bool   `json:"is_error"`   // Qwen Code's result
	ExitCode  *int   `json:"exitCode"`   // Copilot CLI's result
	ID        string `json:"id"`         // Pi's session header
	// OpenCode's and Kilo CLI's events (run --format json) name theirs
	// "sessionID", which Session takes (a JSON key matches a field's
	// name regardless of case); an event "error" ends a failed run.
}

// runCLI runs an agent's command in the project with env and args, and
// returns the session id its output names; a failed run fails the test.
func (r *agentRig) runCLI(name, path string, env, args []string) string {
	r.t.Helper()
	// A Node program of tens of MB (Kilo CLI: a 170 MB binary) starting
	// on a busy 2-core machine beside others: a generous deadline (a Kilo
	// run has taken more than 4 minutes there).
	res := agenttest.Cmd{Path: path, Dir: r.proj, Env: env, Args: args, Timeout: 8 * time.Minute}.Run(r.t)
	var session string
	var failed bool
	for _, l := range strings.Split(res.Stdout, "\n") {
		var x streamLine
		if json.Unmarshal([]byte(l), &x) != nil {
			continue
		}
		if id := cmpOr(x.SessionID, x.Session); id != "" {
			session = id
		}
		if x.Type == "session" && x.ID != "" {
			session = x.ID
		}
		if x.Type == "error" && (name == "opencode" || name == "kilo") {
			failed = true
		}
		if x.Type == "result" {
			failed = x.IsError || (x.Status != "" && x.Status != "success") || (x.ExitCode != nil && *x.ExitCode != 0)
		}
	}
	if res.Code != 0 || failed || session == "" {
		r.t.Fatalf("%s %s: exit %d, session %q\nstdout: %s\nstderr: %s", name, strings.Join(args, " "), res.Code, session,
			tailOf(res.Stdout, 3000), tailOf(res.Stderr, 3000))
	}
	r.t.Logf("%s %.60q: %v", name, strings.Join(args, " "), res.Took.Round(1e6))
	return session
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func tailOf(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// runGemini runs `gemini -p PROMPT` (args before it: "-r", "latest"
// resumes the project's latest session).
func (r *agentRig) runGemini(prompt string, args ...string) string {
	r.t.Helper()
	args = append(args, "-p", prompt, "--approval-mode", "yolo", "--output-format", "stream-json")
	return r.runCLI("gemini", r.gemini, r.srv.GeminiEnv(r.home), args)
}

// runQwen runs `qwen -p PROMPT` (args before it: "-c" continues).
func (r *agentRig) runQwen(prompt string, args ...string) string {
	r.t.Helper()
	args = append(args, "-p", prompt, "--auth-type", "openai", "--approval-mode", "yolo", "--output-format", "stream-json")
	return r.runCLI("qwen", r.qwen, r.srv.QwenEnv(r.home, "agenttest-model"), args)
}

// copilotMaxPrompt is the prompt tokens Copilot CLI is told it may send.
const copilotMaxPrompt = 100_000

// runCopilot runs `copilot -p PROMPT` (args before it: "--continue").
func (r *agentRig) runCopilot(prompt string, args ...string) string {
	r.t.Helper()
	args = append(args, "-p", prompt, "--allow-all-tools", "--output-format", "json")
	return r.runCLI("copilot", r.copilot, r.srv.CopilotEnv(r.home, "agenttest-model", copilotMaxPrompt), args)
}

// piWindow is the window of the model Pi is given: it compacts past
// 15,000 tokens (the window less the 1,000 WritePiConfig reserves).
const piWindow = 16_000

// runPi runs `pi -p` with the prompts, one after the other (args before
// them: "-c" continues).
func (r *agentRig) runPi(prompts []string, args ...string) string {
	r.t.Helper()
	args = append(append(args, "-p", "--provider", agenttest.PiProvider, "--model", "agenttest-model", "--mode", "json"), prompts...)
	return r.runCLI("pi", r.pi, r.srv.PiEnv(r.home), args)
}

// handoffsWritten are the receipts of ledger's PreCompact that wrote a
// handoff.
func handoffsWritten(all []store.HookReceipt) []store.HookReceipt {
	var out []store.HookReceipt
	for _, x := range receiptsOf(all, "PreCompact") {
		if strings.Contains(x.Detail, "written to") {
			out = append(out, x)
		}
	}
	return out
}

// checkHandoffs asserts that n PreCompact receipts wrote a handoff, each
// with the outcome ok (or deferred: its row waited for the write lock,
// held by another hook of the agent on a busy machine), never nothing.
func (r *agentRig) checkHandoffs(n int) {
	r.t.Helper()
	written := handoffsWritten(r.receipts())
	if len(written) != n {
		r.t.Errorf("%d PreCompact receipts wrote a handoff, want %d", len(written), n)
	}
	for _, x := range written {
		if x.Outcome != store.OutcomeOK && x.Outcome != store.OutcomeDeferred {
			r.t.Errorf("PreCompact wrote a handoff, yet its outcome is %q: %s", x.Outcome, x.Detail)
		}
	}
}

// checkSession asserts the ledger holds one session of agent, session,
// in the project, with messages and the call of tool that wrote file.
func (r *agentRig) checkSession(agent, session, tool, file string) sessionRow {
	r.t.Helper()
	sess := r.sessions()
	if len(sess) == 1 && sess[0].Messages < 3 && r.deferred(session) {
		// A hook whose budget ran out, or that the agent did not wait
		// for, leaves the rest of the transcript to the next read, as a
		// user's next session start or ingest makes it (a loaded
		// machine): make that read.
		if res := r.ledger("ingest"); res.code != 0 {
			r.t.Fatalf("ledger ingest: exit %d: %s", res.code, res.stderr)
		}
		sess = r.sessions()
	}
	if len(sess) != 1 || sess[0].ID != session || sess[0].Source != agent || sess[0].Project != r.proj || sess[0].Messages < 3 {
		r.checkReceipts(r.receipts())
		r.t.Fatalf("sessions = %+v, want the one %s session %s of %s with its messages", sess, agent, session, r.proj)
	}
	// A tool call's search text is its tool's name and its input.
	var hits []struct {
		Session string `json:"session"`
		Role    string `json:"role"`
	}
	r.ledgerJSON(&hits, "search", tool+" "+file)
	var call bool
	for _, h := range hits {
		call = call || h.Role == "assistant"
	}
	if !call {
		r.t.Errorf("search %s %s finds %+v, want the assistant's tool call", tool, file, hits)
	}
	return sess[0]
}

// deferred reports whether a hook of session left part of its work for
// later (deferred, or out of its budget), or none of its Stop hooks has
// left a receipt (the agent ended the run before its hook at the turn's
// end was through: OpenCode on a busy machine), and logs why.
func (r *agentRig) deferred(session string) bool {
	r.t.Helper()
	var any, stopped bool
	for _, x := range r.receipts() {
		if x.SessionID != session {
			continue
		}
		stopped = stopped || x.Event == "Stop"
		if x.Outcome == store.OutcomeDeferred || outOfBudget(x) {
			r.t.Logf("%s hook left work for later: %s", x.Event, x.Detail)
			any = true
		}
	}
	if !stopped {
		r.t.Logf("no Stop hook of session %s left a receipt", session)
	}
	return any || !stopped
}

// resumedWithContext runs a resumed (or continued) run and asserts that
// one of its turn requests carries ledger's resume context with handoff
// id. A run whose SessionStart hook ran out of its budget (a machine too
// busy to run it in time: outOfBudget) injected nothing, as a
// hook that fails open should: such a run proves nothing about the
// context, and runs again, twice at most.
func (r *agentRig) resumedWithContext(handoff int64, run func()) {
	r.t.Helper()
	for attempt := 1; ; attempt++ {
		// The user moves to another branch before resuming: the resumed
		// session's history may hold the contexts of its earlier
		// SessionStarts, and only the resume's own can say so.
		branch := fmt.Sprintf("resume-%d", attempt)
		if out, err := exec.Command("git", "-C", r.proj, "checkout", "-q", "-b", branch).CombinedOutput(); err != nil {
			r.t.Fatalf("git checkout: %v: %s", err, out)
		}
		moved := "the branch is now " + branch + " ("
		before, began := len(r.srv.Turns()), time.Now()
		run()
		turns := r.srv.Turns()
		if len(turns) <= before {
			r.t.Fatalf("the resumed run sent the model nothing:\n%s", r.srv.Digest())
		}
		for _, req := range turns[before:] {
			if req.Contains(fmt.Sprintf("Handoff %d", handoff)) && req.Contains(moved) {
				return
			}
		}
		starved := r.starvedSince("SessionStart", began)
		if len(starved) == 0 || attempt == 3 {
			r.t.Errorf("no request of the resumed run carries the resume's context (handoff %d, %s...):\n%s\nreceipts: %+v",
				handoff, moved, r.srv.Digest(), r.receipts())
			return
		}
		r.t.Logf("attempt %d: SessionStart ran out of its budget (%s): the resumed run again", attempt, starved[0].Detail)
	}
}

// auditOne is the session's one compaction, completed from the
// transcript with its summary and tied to a handoff.
func (r *agentRig) auditOne(session, summaryWord string) auditRow {
	r.t.Helper()
	rows := r.audit(session)
	if len(rows) != 1 {
		r.t.Fatalf("audit = %+v, want one compaction", rows)
	}
	c := rows[0]
	if c.HandoffID == nil || c.Summary == 0 {
		r.t.Errorf("compaction = %+v, want its handoff and its summary", c)
	}
	var hits []struct {
		Kind string `json:"kind"`
	}
	r.ledgerJSON(&hits, "search", summaryWord)
	if len(hits) == 0 {
		r.t.Errorf("search %s does not find the compaction summary", summaryWord)
	}
	return c
}

// TestAgentGemini: Gemini CLI 0.61.0 with ledger's hooks: a session that
// writes a file; resumed, a turn whose prompt passes half the window, so
// that Gemini CLI compresses; resumed again. PreCompress fires before
// every turn, and ledger writes one handoff, for the compression; the
// session is in the ledger with its tool call and its compression (the
// <state_snapshot>); the resumed run's prompt carries ledger's context.
func TestAgentGemini(t *testing.T) {
	t.Parallel()
	r := newAgentRig(t, []string{"gemini"})
	full := agenttest.Usage{InputTokens: 10_000, CacheRead: 600_000, OutputTokens: 60} // past 524,288: half of 1,048,576
	r.srv.SetScript(compacting(agenttest.NewSteps(
		writeStep(r.proj, "tides.md", "# Tides\n", quiet), textStep("tides.md is written.", quiet),
		writeStep(r.proj, "b.txt", "b\n", full), textStep("b.txt is written.", quiet),
		textStep("Carrying on from the handoff.", quiet),
	), "The user asked for tides.md and b.txt; marramgrass."))
	session := r.runGemini("Write tides.md with a Tides heading")
	if b, err := os.ReadFile(filepath.Join(r.proj, "tides.md")); err != nil || string(b) != "# Tides\n" {
		t.Errorf("tides.md = %q, %v", b, err)
	}
	r.checkSession("gemini", session, "write_file", "tides.md")

	if s := r.runGemini("Add b.txt", "-r", "latest"); s != session {
		t.Errorf("the resumed run is session %s, want %s", s, session)
	}
	n, _ := compactionFollowers(r.srv, agenttest.IsGeminiCompression)
	if n == 0 {
		t.Fatalf("Gemini CLI did not compress:\n%s", r.srv.Digest())
	}
	if pre := receiptsOf(r.receipts(), "PreCompact"); len(pre) < 3 {
		t.Errorf("%d PreCompress receipts, want one per turn (at least 3)", len(pre))
	}
	r.checkHandoffs(1) // for the compression, not one per turn
	c := r.auditOne(session, "marramgrass")

	if c.HandoffID != nil {
		r.resumedWithContext(*c.HandoffID, func() { r.runGemini("Carry on", "-r", "latest") })
	}
	r.checkReceipts(r.receipts())
	r.checkHandoffs(1)
}

// TestAgentQwen: Qwen Code 0.24.4 with ledger's hooks: a session that
// writes a file; continued with /compress (PreCompact writes the handoff,
// PostCompact and the chat_compression record complete the compaction);
// continued again, its SessionStart context reaching the model's system
// prompt.
func TestAgentQwen(t *testing.T) {
	t.Parallel()
	r := newAgentRig(t, []string{"qwen"})
	r.srv.SetScript(compacting(agenttest.NewSteps(
		writeStep(r.proj, "tides.md", "# Tides\n", quiet), textStep("tides.md is written.", quiet),
		textStep("Carrying on from the handoff.", quiet),
	), "The user asked for tides.md; samphire."))
	session := r.runQwen("Write tides.md with a Tides heading")
	if _, err := os.Stat(filepath.Join(r.proj, "tides.md")); err != nil {
		t.Error(err)
	}
	r.checkSession("qwen", session, "write_file", "tides.md")

	r.runQwen("/compress", "-c")
	if n, _ := compactionFollowers(r.srv, agenttest.IsQwenCompaction); n != 1 {
		t.Fatalf("Qwen Code asked for %d compressions, want 1:\n%s", n, r.srv.Digest())
	}
	r.checkHandoffs(1)
	c := r.auditOne(session, "samphire")

	if c.HandoffID != nil {
		r.resumedWithContext(*c.HandoffID, func() {
			if s := r.runQwen("Carry on", "-c"); s != session {
				t.Errorf("the continued run is session %s, want %s", s, session)
			}
		})
	}
	r.checkReceipts(r.receipts())
}

// copilotCompacted reports whether Copilot CLI's events.jsonl of session
// records a compaction that completed (session.compaction_complete with
// success true).
func (r *agentRig) copilotCompacted(session string) bool {
	r.t.Helper()
	b, err := os.ReadFile(filepath.Join(r.home, ".copilot", "session-state", session, "events.jsonl"))
	if err != nil {
		r.t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		var ev struct {
			Type string `json:"type"`
			Data struct {
				Success bool `json:"success"`
			} `json:"data"`
		}
		if json.Unmarshal([]byte(l), &ev) == nil && ev.Type == "session.compaction_complete" && ev.Data.Success {
			return true
		}
	}
	return false
}

// TestAgentCopilot: Copilot CLI 1.0.102 (offline, a provider URL) with
// ledger's hooks: a session that writes a file; continued with a turn
// whose prompt nears the provider's limit, so that Copilot CLI compacts
// (preCompact writes the handoff, session.compaction_complete carries the
// summary, read at the latest by the next run's hooks); continued again,
// the native sessionStart's context reaching the model. (A `-p /compact` run compacts too, but Copilot CLI 1.0.102
// then waits 60 s for a turn that never comes before it exits, and runs
// no hook after the compaction.)
func TestAgentCopilot(t *testing.T) {
	t.Parallel()
	r := newAgentRig(t, []string{"copilot"})
	near := agenttest.Usage{InputTokens: 95_000, OutputTokens: 60} // of copilotMaxPrompt
	r.srv.SetScript(compacting(agenttest.NewSteps(
		writeStep(r.proj, "tides.md", "# Tides\n", quiet), textStep("tides.md is written.", quiet),
		writeStep(r.proj, "b.txt", "b\n", near), textStep("b.txt is written.", quiet),
		textStep("Carrying on from the handoff.", quiet),
	), "The user asked for tides.md and b.txt; bladderwrack."))
	session := r.runCopilot("Write tides.md with a Tides heading")
	if _, err := os.Stat(filepath.Join(r.proj, "tides.md")); err != nil {
		t.Error(err)
	}
	r.checkSession("copilot", session, "create", "tides.md")

	if s := r.runCopilot("Add b.txt", "--continue"); s != session {
		t.Errorf("the continued run is session %s, want %s", s, session)
	}
	if n, _ := compactionFollowers(r.srv, agenttest.IsCopilotCompaction); n != 1 {
		t.Fatalf("Copilot CLI asked for %d compactions, want 1:\n%s", n, r.srv.Digest())
	}
	r.checkHandoffs(1)
	// The compaction runs in the background while the turn goes on, and
	// no hook runs after it: its summary (session.compaction_complete)
	// may reach the ledger only at the next run's hooks.
	rows := r.audit(session)
	if len(rows) != 1 || rows[0].HandoffID == nil || rows[0].Source != "hook" {
		t.Fatalf("audit = %+v, want the preCompact hook's record with its handoff", rows)
	}

	r.resumedWithContext(*rows[0].HandoffID, func() {
		if s := r.runCopilot("Carry on", "--continue"); s != session {
			t.Errorf("the continued run is session %s, want %s", s, session)
		}
	})
	// On a busy machine Copilot CLI may end the run before its background
	// compaction completes: then it records no summary, and neither can
	// ledger.
	if !r.copilotCompacted(session) {
		t.Logf("Copilot CLI recorded no completed compaction (the run ended before it): its summary is not checked")
	} else if c := r.auditOne(session, "bladderwrack"); c.HandoffID == nil || *c.HandoffID != *rows[0].HandoffID {
		t.Errorf("compaction = %+v, want it completed with Copilot CLI's summary, its handoff kept", c)
	}
	r.checkReceipts(r.receipts())
}

// TestAgentPi: Pi 0.73.1 with ledger's extension: a session that writes a
// file; continued with two prompts, the first reporting a context past
// Pi's compaction point, so that Pi compacts before the second
// (session_before_compact writes the handoff, session_compact completes
// the record with Pi's summary), and the second's request carries
// ledger's context with the handoff. Pi may compact that point twice (its
// check at the first prompt's end and the one before the second race:
// two summary requests, two compaction entries, the second under the
// first): one compaction for ledger all the same, one PreCompact, one
// handoff, one record with Pi's summary.
func TestAgentPi(t *testing.T) {
	t.Parallel()
	r := newAgentRig(t, []string{"pi"})
	past := agenttest.Usage{InputTokens: 15_500, OutputTokens: 60} // of piWindow
	r.srv.SetScript(compacting(agenttest.NewSteps(
		writeStep(r.proj, "tides.md", "# Tides\n", quiet), textStep("tides.md is written.", quiet),
		writeStep(r.proj, "b.txt", "b\n", past), textStep("b.txt is written.", past),
		textStep("Carrying on from the handoff.", quiet),
	), "The user asked for tides.md and b.txt; periwinkle."))
	session := r.runPi([]string{"Write tides.md with a Tides heading"})
	if _, err := os.Stat(filepath.Join(r.proj, "tides.md")); err != nil {
		t.Error(err)
	}

	if s := r.runPi([]string{"Add b.txt", "Carry on"}, "-c"); s != session {
		t.Errorf("the continued run is session %s, want %s", s, session)
	}
	// Checked after the second run: once, on a busy machine, the first
	// run's hooks left the session unread (not investigated yet).
	r.checkSession("pi", session, "write", "tides.md")
	n, _ := compactionFollowers(r.srv, agenttest.IsPiCompaction)
	if n == 0 {
		t.Fatalf("Pi did not compact:\n%s", r.srv.Digest())
	}
	t.Logf("Pi asked for %d summaries", n)
	if pre := receiptsOf(r.receipts(), "PreCompact"); len(pre) != 1 {
		t.Errorf("%d PreCompact receipts, want 1: %+v", len(pre), pre)
	}
	r.checkHandoffs(1)
	c := r.auditOne(session, "periwinkle")
	if c.Source != "hook" || c.PreTokens == nil || c.Trigger != "auto" {
		t.Errorf("compaction = %+v, want the hook's auto compaction with the tokens before it", c)
	}
	// The second prompt's request: the first after the summaries.
	var after *agenttest.Request
	turns := r.srv.Turns()
	for i, req := range turns {
		if i > 0 && !agenttest.IsPiCompaction(req) && agenttest.IsPiCompaction(turns[i-1]) {
			after = req
			break
		}
	}
	if c.HandoffID != nil && (after == nil || !after.Contains(fmt.Sprintf("Handoff %d", *c.HandoffID))) {
		t.Errorf("the request after the compaction does not carry ledger's context with handoff %d:\n%s", *c.HandoffID, r.srv.Digest())
	}
	r.checkReceipts(r.receipts())
}

// openCodeWindow is the window of the model OpenCode and Kilo CLI are
// given: with 1,000 tokens of output, they compact at a context of 15,000
// (the window less the output).
const openCodeWindow = 16_000

// runOpenCode runs `opencode run PROMPT` (args before it: "-c"
// continues).
func (r *agentRig) runOpenCode(prompt string, args ...string) string {
	r.t.Helper()
	args = append(append([]string{"run"}, args...), "--format", "json", prompt)
	return r.runCLI("opencode", r.opencode, r.srv.OpenCodeEnv(r.home), args)
}

// runKilo runs `kilo run PROMPT` (args before it: "-c" continues).
func (r *agentRig) runKilo(prompt string, args ...string) string {
	r.t.Helper()
	args = append(append([]string{"run"}, args...), "--format", "json", prompt)
	return r.runCLI("kilo", r.kilo, r.srv.KiloEnv(r.home), args)
}

// TestAgentOpenCode: OpenCode 1.18.33 with ledger's plugin: a session
// that writes a file; continued (-c), its first request carrying ledger's
// resume context of the session, with a turn reporting a context past
// OpenCode's compaction point, so that it compacts
// (experimental.session.compacting writes the handoff and joins it to
// OpenCode's compaction, session.compacted reads the summary) and goes
// on, the request after the compaction carrying ledger's context with
// the handoff. Two runs prove the resume context at a run's start and
// the handoff's after a compaction (a third, continued again, would
// prove the start's context once more, with the handoff in it).
func TestAgentOpenCode(t *testing.T) {
	t.Parallel()
	r := newAgentRig(t, []string{"opencode"})
	r.openCodeCompactAndResume("opencode", "glasswort", r.runOpenCode)
}

// openCodeCompactAndResume is the run sequence, and the assertions, of
// OpenCode's test (agent "opencode", run its runner): a run that writes
// tides.md; a continued run whose first request carries the resume
// context and whose turn past the compaction point compacts, the request
// after the compaction carrying the handoff.
func (r *agentRig) openCodeCompactAndResume(agent, word string, run func(prompt string, args ...string) string) {
	t := r.t
	t.Helper()
	past := agenttest.Usage{InputTokens: 15_500, OutputTokens: 60} // of openCodeWindow
	r.srv.SetScript(compacting(agenttest.NewSteps(
		writeStep(r.proj, "tides.md", "# Tides\n", quiet), textStep("tides.md is written.", quiet),
		writeStep(r.proj, "b.txt", "b\n", past), textStep("b.txt is written.", quiet),
	), "The user asked for tides.md and b.txt; "+word+"."))
	session := run("Write tides.md with a Tides heading")
	if b, err := os.ReadFile(filepath.Join(r.proj, "tides.md")); err != nil || string(b) != "# Tides\n" {
		t.Errorf("tides.md = %q, %v", b, err)
	}
	r.checkSession(agent, session, "write", "tides.md")

	before, began := len(r.srv.Turns()), time.Now()
	if s := run("Add b.txt", "-c"); s != session {
		t.Errorf("the continued run is session %s, want %s", s, session)
	}
	if b, err := os.ReadFile(filepath.Join(r.proj, "b.txt")); err != nil || string(b) != "b\n" {
		t.Errorf("b.txt = %q, %v", b, err)
	}
	turns := r.srv.Turns()
	// A SessionStart that a busy machine kept past its budget injected
	// nothing, as it should; the run, which also compacts, is not run
	// again: the context at its start is then not checked.
	if len(turns) <= before || !turns[before].Contains("<ledger-record") || !turns[before].Contains("Session "+session+" ("+agent+")") {
		if starved := r.starvedSince("SessionStart", began); len(starved) > 0 {
			t.Logf("SessionStart ran out of its budget (%s): the resume context at the continued run's start is not checked", starved[0].Detail)
		} else {
			t.Errorf("the continued run's first request does not carry ledger's resume context of session %s:\n%s", session, r.srv.Digest())
		}
	}
	r.openCodeCompacted(agent, session, word)
}

// openCodeCompacted asserts the one compaction of an OpenCode or Kilo CLI
// session: the plugin's handoff, its auto compaction record with the
// tokens before it and the agent's summary, and the request after the
// compaction carrying ledger's context with the handoff.
func (r *agentRig) openCodeCompacted(agent, session, word string) {
	t := r.t
	t.Helper()
	n, next := compactionFollowers(r.srv, agenttest.IsOpenCodeCompaction)
	if n != 1 {
		t.Fatalf("%s asked for %d compactions, want 1:\n%s", agent, n, r.srv.Digest())
	}
	r.checkHandoffs(1)
	c := r.auditOne(session, word)
	if c.Source != "hook" || c.Trigger != "auto" || c.PreTokens == nil {
		t.Errorf("compaction = %+v, want the plugin's auto compaction with the tokens before it", c)
	}
	if c.HandoffID != nil && (next[0] == nil || !next[0].Contains(fmt.Sprintf("Handoff %d", *c.HandoffID))) {
		t.Errorf("the request after the compaction does not carry ledger's context with handoff %d:\n%s", *c.HandoffID, r.srv.Digest())
	}
	r.checkReceipts(r.receipts())
}

// TestAgentKilo: Kilo CLI 7.7.7 (OpenCode's fork) with ledger's plugin:
// one run that writes tides.md with a turn past the compaction point
// (Kilo's rule is OpenCode's: the window less the output), so that it
// compacts within the run and goes on; the session is in the ledger with
// its tool call, the plugin's handoff and Kilo's summary, and the request
// after the compaction carries ledger's context with the handoff. One
// run, not OpenCode's two: a Kilo run costs 20-25 s of CPU of its own,
// and what a continued run adds (its start's resume context) goes
// through the same plugin and hook code as OpenCode's, which
// TestAgentOpenCode runs; Kilo's own start payload, recorded from a real
// run, is replayed in-process by TestPluginHookOpenCode.
func TestAgentKilo(t *testing.T) {
	t.Parallel()
	r := newAgentRig(t, []string{"kilo"})
	past := agenttest.Usage{InputTokens: 15_500, OutputTokens: 60} // of openCodeWindow
	r.srv.SetScript(compacting(agenttest.NewSteps(
		writeStep(r.proj, "tides.md", "# Tides\n", past), textStep("tides.md is written.", quiet),
	), "The user asked for tides.md; saltwort."))
	session := r.runKilo("Write tides.md with a Tides heading")
	if b, err := os.ReadFile(filepath.Join(r.proj, "tides.md")); err != nil || string(b) != "# Tides\n" {
		t.Errorf("tides.md = %q, %v", b, err)
	}
	r.checkSession("kilo", session, "write", "tides.md")
	r.openCodeCompacted("kilo", session, "saltwort")
}
