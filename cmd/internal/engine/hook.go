package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
	"unicode/utf8"

	"github.com/agentledger/ledger/cmd/internal/agentconfig"
	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/transcript"
)

// HookInput is what Claude Code writes on a hook's stdin: the common
// fields and those of the events ledger handles.
type HookInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	Event          string `json:"hook_event_name"`
	// PreCompact
	Trigger            string  `json:"trigger"`
	CustomInstructions *string `json:"custom_instructions"`
	// SessionStart
	Source string `json:"source"`
	// SessionEnd
	Reason string `json:"reason"`
	// PostToolUse
	ToolName string `json:"tool_name"`
	// Stop: true when the agent goes on because a Stop hook blocked it.
	StopHookActive bool `json:"stop_hook_active"`
	// LastAssistantMessage is the text of the answer that ended the turn
	// (Qwen Code's Stop; see turnend.go).
	LastAssistantMessage string `json:"last_assistant_message"`
	// AgentID is set only inside a subagent (Claude Code; newer Codex).
	AgentID string `json:"agent_id"`
	// Model is the model's slug (Codex sends it at every event).
	Model string `json:"model"`
	// TurnID is Codex's turn (absent at SessionStart).
	TurnID string `json:"turn_id"`
	// Agent names the agent in a plugin's payload (plugins.go); the
	// --agent the plugin runs ledger with is what counts.
	Agent string `json:"agent"`
	// copilotHook and copilotStamp are a Copilot CLI native hook's name
	// and its input's timestamp: what its hook.start record in the
	// session's events.jsonl says (copilotflush.go).
	copilotHook  string
	copilotStamp int64
}

// maxHookInput caps what a hook reads from stdin: hook inputs are small; a
// runaway writer must not make the hook slow.
const maxHookInput = 4 << 20

// DecodeHookInput reads a hook's input. Anything but one JSON object of at
// most 4 MB that names its event is an error.
func DecodeHookInput(r io.Reader) (HookInput, error) {
	return DecodeAgentHookInput(r, HookOptions{})
}

// DecodeAgentHookInput reads the input of a hook of o.Agent (its event
// named as ledger names it: see hookagents.go), o.Event naming the event
// of an input that does not.
func DecodeAgentHookInput(r io.Reader, o HookOptions) (HookInput, error) {
	var in HookInput
	b, err := io.ReadAll(io.LimitReader(r, maxHookInput+1))
	if err != nil {
		return in, fmt.Errorf("read hook input: %w", err)
	}
	if len(b) > maxHookInput {
		return in, invalidf("hook input larger than %d bytes", maxHookInput)
	}
	switch o.Agent {
	case "gemini", "qwen", "copilot":
		return decodeAgentHookInput(o.Agent, o.Event, b)
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return in, fmt.Errorf("hook input is not JSON: %w", err)
	}
	if in.Event == "" {
		return in, invalidf("hook input has no hook_event_name")
	}
	return in, nil
}

// HookEvent is a Claude Code event ledger handles. Budget is how long a
// hook run allows itself, whatever it reads and whoever holds the
// ledger's write lock (RunHook); Timeout (seconds) is what is written to
// settings.json beside it, longer, so that ledger is done well before
// Claude Code would kill it.
type HookEvent struct {
	Name    string
	Budget  time.Duration
	Timeout int
}

// HookEvents are the events ledger hooks, in the order they are written to
// settings.json. The budgets are what an agent can afford to wait at each
// event: at a session's start, 2 s; after each tool call and turn, and at
// the session's end (whose hooks Claude Code gives 1.5 s in all), 1 s;
// before a compaction, which writes the handoff, 10 s. What does not fit
// is left for the next event.
func HookEvents() []HookEvent {
	return []HookEvent{
		{"SessionStart", 2 * time.Second, 10},
		{"PreCompact", 10 * time.Second, 60},
		{"PostToolUse", 1 * time.Second, 5},
		{"Stop", 1 * time.Second, 15},
		{"SessionEnd", 1 * time.Second, 5},
	}
}

// HookBudget is the budget of an event ledger handles; ok is false for any
// other event.
func HookBudget(event string) (d time.Duration, ok bool) {
	for _, ev := range append(HookEvents(), CodexHookEvents()...) {
		if ev.Name == event {
			return ev.Budget, true
		}
	}
	return 0, false
}

// HookOptions are the flags written into a hook's command line.
type HookOptions struct {
	// Agent is whose hook this is: "claude" ("" too), "codex", "gemini",
	// "qwen" or "copilot", whose inputs and output rules differ (see
	// codexhook.go, hookagents.go).
	Agent string
	// Event is the agent's name of the event, for agents whose input
	// does not name it (Copilot CLI's camelCase events).
	Event   string
	Mode    string // "assist", or "clear": block auto-compaction once the handoff is written
	Startup bool   // inject the project's latest handoff at brand-new sessions too
	// Ledger is the command line that runs this ledger on this database
	// (the binary, --db), for what a hook asks the agent to run; "" for
	// "ledger".
	Ledger string
	// Entrypoint is $CLAUDE_CODE_ENTRYPOINT: "sdk-cli" for claude -p
	// (clear mode never blocks a headless run).
	Entrypoint string
	// StateDir is $XDG_STATE_HOME ("" for ~/.local/state): where the hook
	// log is.
	StateDir string
	// Database is the agent's session database (OpenCode, Kilo), read when
	// the payload names no transcript_path (plugins.go).
	Database string
}

// BlockError asks Claude Code to block the event (the hook exits 2 with
// the reason on stderr).
type BlockError struct{ Reason string }

func (e BlockError) Error() string { return e.Reason }

// Is makes a BlockError ErrBlocked.
func (e BlockError) Is(target error) bool { return target == ErrBlocked }

// hookResult is what handling an event did: what to print, and its
// receipt's outcome and detail. err is a failure (the hook fails open,
// with a warning) or a BlockError.
type hookResult struct {
	out     any
	outcome string
	detail  string
	err     error
	// warn is a failure that did not stop the work (SessionStart injects
	// what the ledger holds when its ingest failed): a warning too.
	warn error
}

// hookClocks are a hook run's deadlines but the last (see RunHook).
type hookClocks struct {
	lockBy        time.Time // the ingest waits for the write lock until then
	readBy        time.Time // the transcript is read until then
	handoffLockBy time.Time // PreCompact's handoff waits for the write lock until then
}

// note adds a sentence to the result's detail.
func (r *hookResult) note(format string, args ...any) {
	if r.detail != "" {
		r.detail += "; "
	}
	r.detail += fmt.Sprintf(format, args...)
}

// deferred marks part of the work as left for later, saying what.
func (r *hookResult) deferred(format string, args ...any) {
	r.outcome = store.OutcomeDeferred
	r.note(format, args...)
}

// hook handles one event within ctx (its budget, less what the receipt
// needs). Each event does:
//
//	PreCompact    ingest, write a handoff and a compaction record, once per
//	              compaction (the Markdown file first, its row later when
//	              the ledger cannot be written now); in clear mode, block an
//	              auto compaction
//	SessionStart  inject resume context (see sessionStart), from what the
//	              ledger holds when its own ingest cannot write
//	PostToolUse   ingest; suggest a handoff past 80% of the window and at
//	              50, 100 and 150 tool calls, once each
//	PostCompact   ingest the compaction the agent wrote (codexhook.go)
//	Stop          ingest, then bring the session's resume state up to date;
//	              in clear mode, ask once for a handoff and /clear (stopClear)
//	SessionEnd    ingest, then the resume state
//
// c says until when it may wait for the write lock and read the
// transcript (see RunHook).
func (e *Engine) hook(ctx context.Context, in HookInput, o HookOptions, c hookClocks) hookResult {
	r := hookResult{outcome: store.OutcomeOK}
	// The session id as the ledger stores it (redacted, should it hold a
	// secret): the key of its rows, and the name of its files.
	if st, err := e.Store(ctx); err == nil {
		in.SessionID = st.StoredKey(in.SessionID)
	}
	if o.Agent == "codex" && in.TranscriptPath == "" && in.Event != "SessionStart" {
		// codex --ephemeral keeps no rollout (transcript_path is null):
		// nothing to read, and nothing wrong.
		r.outcome = store.OutcomeNothing
		r.note("no transcript (transcript_path is null: codex --ephemeral)")
		return r
	}
	if o.Agent == "copilot" && (in.Event == "SessionStart" || in.Event == "SessionEnd") {
		e.knownTranscript(ctx, &in)
		if in.TranscriptPath == "" && in.Event == "SessionEnd" {
			// Its input names no transcript, and no earlier event did.
			r.outcome = store.OutcomeNothing
			r.note("no transcript known for this session yet (Copilot CLI's sessionEnd names none)")
			return r
		}
	}
	if why := e.hookOptedOut(ctx, in); why != "" {
		// The user keeps this project out of the ledger (optout.go).
		r.outcome, r.detail = store.OutcomeNothing, why
		return r
	}
	switch in.Event {
	case "PreCompact":
		e.preCompact(ctx, in, o, c, &r)
	case "SessionStart":
		e.sessionStart(ctx, in, o, c, &r)
	case "PostToolUse":
		if st, sess, ok := e.hookSession(ctx, in, c, &r); ok {
			r.out = e.postToolUse(ctx, st, sess, &r)
		}
	case "PostCompact":
		e.postCompact(ctx, in, c, &r)
	case "Stop", "SessionEnd":
		e.awaitCopilotRecord(ctx, in, c, &r)
		if e.hookIngest(ctx, in, c, &r) {
			if in.Event == "Stop" && in.LastAssistantMessage != "" {
				e.awaitTurnEnd(ctx, in, c, &r)
			}
			e.refreshAfterStop(ctx, in, c, &r)
		}
		if in.Event == "Stop" && o.Mode == "clear" && clearAgent(o.Agent) {
			e.stopClear(ctx, in, o, c, &r)
		}
	}
	return r
}

// refreshAfterStop refreshes the session's resume state once its
// transcript is read: where the agent stops is where a later resume
// starts, and it should find the extraction done. A failure is a warning;
// a lock held past the hook's wait leaves it for the next event.
func (e *Engine) refreshAfterStop(ctx context.Context, in HookInput, c hookClocks, r *hookResult) {
	if in.SessionID == "" || ctx.Err() != nil {
		return
	}
	err := e.RefreshResumeState(store.WithLockDeadline(ctx, c.lockBy), in.SessionID)
	switch {
	case err == nil || notFound(err):
	case lockHeld(ctx, err):
		r.deferred("%s: the session's resume state is left for the next event", notWritten(err))
	default:
		r.warn = fmt.Errorf("resume state: %w", err)
	}
}

// hookIngest reads what is new in the hook's transcript, waiting for the
// write lock until c.lockBy and reading until c.readBy, notes what it did
// in r, and then stores handoffs left pending. It reports whether the
// ledger could be written; a failure is r's error.
func (e *Engine) hookIngest(ctx context.Context, in HookInput, c hookClocks, r *hookResult) bool {
	if in.TranscriptPath == "" {
		r.err = invalidf("hook input has no transcript_path")
		return false
	}
	path := e.expandHome(in.TranscriptPath)
	fs, err := e.IngestFile(store.WithLockDeadline(ctx, c.lockBy), path, IngestOptions{StopAt: c.readBy, Session: in.SessionID})
	switch {
	case lockHeld(ctx, err):
		r.deferred("%s: the transcript's new lines are left for the next event", notWritten(err))
		return false
	case errors.Is(err, transcript.ErrNotRegular):
		r.err = fmt.Errorf("transcript_path %s is %w", path, err)
		return false
	case err != nil:
		r.err = err
		return false
	case fs.Left > 0 && !fs.Read:
		r.deferred("the transcript's first lines were not read within the budget: left for the next event")
	case fs.Left > 0 && (fs.Format == transcript.FormatOpenCode || fs.Format == transcript.FormatKilo):
		r.deferred("read part of the session's new messages within the budget, the rest is left for the next event")
	case fs.Left > 0:
		r.deferred("read %d new bytes of the transcript within the budget, %d more are left for the next event", fs.Bytes, fs.Left)
	case !fs.Read:
		r.outcome = store.OutcomeNothing
		r.note("nothing new in the transcript")
	}
	if fs.Read {
		r.note("ingested %d messages and %d compactions", fs.Counts.Messages, fs.Counts.Compactions)
	}
	if fs.Skipped > 0 {
		why := ""
		if len(fs.Skips) > 0 {
			why = ": " + fs.Skips[0].Reason
		}
		r.note("skipped %d line(s) of the transcript%s", fs.Skipped, why)
	}
	if st := e.Opened(); st != nil && ctx.Err() == nil {
		if n, err := e.flushPending(store.WithLockDeadline(ctx, c.lockBy), st); err == nil && n > 0 {
			r.note("stored %d handoff(s) left pending by an earlier PreCompact", n)
		}
	}
	return true
}

// lockHeld tells whether err is the write lock held by another process
// for longer than the hook could wait, or the hook's budget spent
// (waiting for it, or reading): either way, the work is left for the
// next event. notWritten says which, for the receipt.
func lockHeld(ctx context.Context, err error) bool {
	return Kind(err) == ErrBusy || err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err())
}

// notWritten is why a write lockHeld let go was not made: another
// process's lock (busy), or the hook's own time, with no other process
// involved.
func notWritten(err error) string {
	if Kind(err) == ErrBusy {
		return "the ledger's write lock was held by another process"
	}
	return "the hook's time ran out before it could write"
}

// hookSession ingests what is new in the hook's transcript and returns its
// session, from what the ledger holds when the ingest could not write.
func (e *Engine) hookSession(ctx context.Context, in HookInput, c hookClocks, r *hookResult) (*store.Store, store.Session, bool) {
	e.hookIngest(ctx, in, c, r)
	if r.err != nil {
		return nil, store.Session{}, false
	}
	st, sess, err := e.Session(ctx, in.SessionID)
	if err != nil {
		if notFound(err) && r.outcome == store.OutcomeDeferred {
			return nil, store.Session{}, false // the session is in the lines left for later
		}
		r.err = err
		return nil, store.Session{}, false
	}
	return st, sess, true
}

// preCompact writes a handoff and a compaction record (source hook)
// before Claude Code compacts, once per compaction however often the event
// fires. The handoff is made from what the ledger holds and the
// transcript's lines not yet in it (those the ingest left for later), so
// that it is about the latest work whatever the ingest managed. When the
// ledger cannot be written in the budget, it is still written: its
// Markdown file now, its row when the ledger can be written (pending.go).
// In clear mode an auto compaction is then blocked, so that the user
// clears instead; never when the handoff failed.
func (e *Engine) preCompact(ctx context.Context, in HookInput, o HookOptions, c hookClocks, r *hookResult) {
	locked := !e.hookIngest(ctx, in, c, r)
	if r.err != nil {
		return
	}
	if o.Agent == "gemini" {
		// PreCompress fires before every turn.
		if why := e.geminiSkip(ctx, in); why != "" {
			r.outcome = store.OutcomeNothing
			r.note("%s", why)
			return
		}
	}
	trigger := in.Trigger
	if trigger != "manual" && trigger != "auto" {
		trigger = "auto"
	}
	req := HandoffRequest{Trigger: trigger, Budget: handoff.DefaultBudget, Source: "hook", Once: true,
		Attach: o.Agent == "opencode" || o.Agent == "kilo", Compacted: o.Agent == "pi"}
	if in.CustomInstructions != nil {
		req.Note = *in.CustomInstructions
	}
	st, d, err := e.hookHandoff(ctx, in, req)
	if err != nil {
		r.err = err
		return
	}
	written := ""
	if !locked {
		// A session whose lines were all left for later (the budget
		// spent before the first was read) has no row for the handoff's
		// to refer to yet: its handoff waits, as it does for the lock,
		// until the session is ingested.
		if _, err := st.Session(ctx, in.SessionID); notFound(err) {
			locked = true
		}
	}
	if !locked {
		h, err := storeHandoff(store.WithLockDeadline(ctx, c.handoffLockBy), st, d, true)
		switch {
		case err == nil && !h.Written:
			r.outcome = store.OutcomeNothing
			r.note("handoff %d was written for this compaction already", h.ID)
			written = fmt.Sprintf("handoff %d is written", h.ID)
		case err == nil:
			if r.outcome == store.OutcomeNothing {
				r.outcome = store.OutcomeOK // its ingest had nothing new, but it wrote the handoff
			}
			r.note("handoff %d written to %s, compaction recorded", h.ID, h.Path)
			written = fmt.Sprintf("handoff %d is written", h.ID)
		case !lockHeld(ctx, err):
			r.err = err
			return
		}
	}
	if written == "" {
		if _, err := deferHandoff(st, &d); err != nil {
			r.err = err
			return
		}
		r.deferred("handoff written to %s; its ledger row and compaction record wait for the write lock (in %s)", d.Path, pendingDir(st.Path()))
		written = "the handoff is written to " + d.Path
	}
	if o.Mode == "clear" && in.Trigger == "auto" && (o.Agent == "claude" || o.Agent == "") {
		if why := e.preCompactClearSkip(ctx, st, in, o, c); why != "" {
			r.note("clear mode: compaction not blocked, %s", why)
			return
		}
		r.outcome = store.OutcomeBlocked
		r.err = BlockError{written + ". Rather than compacting, run /clear: the new session starts from the handoff (clear, don't compact)."}
	}
}

// hookHandoff drafts the session's handoff from the messages the ledger
// holds and those of the transcript it does not hold yet, reading only:
// the ledger may be locked by another process.
func (e *Engine) hookHandoff(ctx context.Context, in HookInput, req HandoffRequest) (*store.Store, handoffDraft, error) {
	st, err := e.Store(ctx)
	if err != nil {
		return nil, handoffDraft{}, err
	}
	tail, info, err := unreadMessages(ctx, st, e.expandHome(in.TranscriptPath), in.SessionID)
	if err != nil {
		return nil, handoffDraft{}, err
	}
	sess, err := st.Session(ctx, in.SessionID)
	var msgs []compact.Message
	switch {
	case err == nil:
		if msgs, err = st.Messages(ctx, sess.ID, 0); err != nil {
			return nil, handoffDraft{}, err
		}
	case notFound(err) && len(tail) > 0:
		// A session the ledger has not seen yet: all of it is in the tail.
		// As the ledger will store it: the handoff file is named after it.
		sess = store.Session{ID: in.SessionID, Source: string(info.format), Project: st.StoredKey(cmpOr(info.project, in.Cwd)),
			GitBranch: st.StoredKey(info.branch)}
	default:
		return nil, handoffDraft{}, err
	}
	d, err := e.draftHandoff(ctx, st, sess, append(msgs, tail...), req)
	return st, d, err
}

// SessionStartOutput is Claude Code's SessionStart hook output.
type SessionStartOutput struct {
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// NewSessionStartOutput injects md as a session's starting context.
func NewSessionStartOutput(md string) SessionStartOutput {
	var out SessionStartOutput
	out.HookSpecificOutput.HookEventName = "SessionStart"
	out.HookSpecificOutput.AdditionalContext = md
	return out
}

// sessionStart returns the resume context to inject:
//
//	source            whose context
//	compact, resume   this session's (after ingesting what is new, when the
//	                  ledger can be written)
//	clear             the project's latest other session (the new session has a new id)
//	startup           the same, only with --startup
//	anything else     none
//
// A session or project ledger has never seen gets nothing. The context
// comes from a read: it is injected whether or not the ingest could write
// (a ledger another process is writing, or one this user cannot write).
func (e *Engine) sessionStart(ctx context.Context, in HookInput, o HookOptions, c hookClocks, r *hookResult) {
	req := ResumeRequest{Budget: handoff.DefaultResumeBudget, MaxChars: MaxHookContext}
	if in.Source == "" && agentconfig.IsPluginAgent(o.Agent) {
		in.Source = e.startSource(ctx, in, c, r)
		r.note("%s session start, taken as %s", AgentName(o.Agent), in.Source)
	}
	switch {
	case in.Source == "compact" || in.Source == "resume":
		if in.TranscriptPath != "" {
			e.hookIngest(ctx, in, c, r)
			if r.err != nil {
				// A warning, and still the context the ledger holds.
				r.warn, r.err = r.err, nil
			}
		}
		req.Session = in.SessionID
		if req.Session == "" {
			r.outcome = store.OutcomeNothing
			r.note("no session_id")
			return
		}
	case in.Source == "clear" || in.Source == "startup" && o.Startup:
		req.Project, req.Exclude = in.Cwd, in.SessionID
		req.MaxChars -= 400 // room for the line saying whose context it is
	default:
		if in.Source == "startup" && e.crossAgentOffer(ctx, in, o, r) {
			return
		}
		r.outcome = store.OutcomeNothing
		r.note("source %q: nothing to inject (install with --startup to inject at startup)", in.Source)
		return
	}
	res, err := e.Resume(ctx, req)
	if notFound(err) {
		r.outcome = store.OutcomeNothing
		r.note("nothing to inject: %v", err)
		return
	}
	if err != nil {
		r.err = err
		return
	}
	md := res.Markdown
	if req.Project != "" {
		// Another session's context: say whose, and how recent.
		md = e.projectHandoffLine(ctx, res.Session) + "\n" + md
	}
	r.out = NewSessionStartOutput(md)
	if r.outcome == store.OutcomeNothing {
		r.outcome = store.OutcomeOK // its ingest had nothing new, but it injected
	}
	r.note("injected %d characters of resume context of session %s", utf8.RuneCountInString(res.Markdown), ShortID(res.Session.ID))
}

// PostToolUseOutput tells the user (systemMessage) and the agent
// (additionalContext) that the context is filling.
type PostToolUseOutput struct {
	SystemMessage      string `json:"systemMessage"`
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// postToolUse suggests a handoff and /clear past 80% of the window or at
// 50, 100 and 150 tool calls, once per threshold. (The ingest is done.)
func (e *Engine) postToolUse(ctx context.Context, st *store.Store, sess store.Session, r *hookResult) any {
	why, err := contextFilling(ctx, st, sess)
	if lockHeld(ctx, err) {
		r.deferred("%s: a suggestion, if due, waits for the next event", notWritten(err))
		return nil
	}
	if why == "" || err != nil {
		r.err = err
		return nil
	}
	// The command names the session only by a plain id (handoff.PlainID):
	// an id is recorded data, and a command is run.
	short, full := "`ledger compact "+ShortID(sess.ID)+"`", "`ledger compact "+sess.ID+"`"
	if !handoff.PlainID(sess.ID) {
		short = "`ledger compact` with this session's id (`ledger sessions` lists it)"
		full = short
	}
	var out PostToolUseOutput
	out.SystemMessage = fmt.Sprintf("ledger: %s. Consider a handoff and a fresh start: run %s, then /clear.", why, short)
	out.HookSpecificOutput.HookEventName = "PostToolUse"
	out.HookSpecificOutput.AdditionalContext = fmt.Sprintf("ledger: %s. Long contexts degrade; at a good stopping point, suggest the user write a handoff (%s) and /clear.", why, full)
	r.note("suggested a handoff: %s", why)
	return out
}

// contextFilling says why to suggest a handoff now, or "": the first time
// the context passes 80% of the window, else the first time the session's
// tool calls reach 50, 100 or 150. Each threshold is announced once (a
// session mark). The window must be one the agent stated (FromAgent):
// ledger's table is a guess, and a guess once told Claude Code its context
// was 495% full (990,100 tokens of the 200,000 ledger assumed for a model
// with 1M).
func contextFilling(ctx context.Context, st *store.Store, sess store.Session) (string, error) {
	win := compact.ContextLimit(sess.Model, nil).Reported(sess.ContextWindow)
	budget := compact.Budget{ContextLimit: win.Tokens, MessageTokens: sess.ContextTokens}
	if win.FromAgent && budget.ShouldCompact() {
		first, err := st.Mark(ctx, sess.ID, "context-80")
		if err != nil || first {
			why := fmt.Sprintf("the context is %.0f%% full (%d of %d tokens)", 100*float64(sess.ContextTokens)/float64(win.Tokens), sess.ContextTokens, win.Tokens)
			return why, err
		}
	}
	for _, n := range [...]int64{50, 100, 150} {
		if sess.ToolCalls < n {
			continue
		}
		first, err := st.Mark(ctx, sess.ID, fmt.Sprintf("tools-%d", n))
		if err != nil || first {
			return fmt.Sprintf("this session has made %d tool calls", sess.ToolCalls), err
		}
	}
	return "", nil
}

// ShortID is the first 8 characters of a session id: enough as a prefix,
// as every front door shows one.
func ShortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// clearAgent tells whether agent's Stop can be blocked for clear mode:
// Claude Code's and Codex's.
func clearAgent(agent string) bool {
	return agent == "" || agent == "claude" || agent == "codex"
}
