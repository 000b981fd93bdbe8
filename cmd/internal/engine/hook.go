package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/store"
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
}

// maxHookInput caps what a hook reads from stdin: hook inputs are small; a
// runaway writer must not make the hook slow.
const maxHookInput = 4 << 20

// DecodeHookInput reads a hook's input. Anything but one JSON object of at
// most 4 MB that names its event is an error.
func DecodeHookInput(r io.Reader) (HookInput, error) {
	var in HookInput
	b, err := io.ReadAll(io.LimitReader(r, maxHookInput+1))
	if err != nil {
		return in, fmt.Errorf("read hook input: %w", err)
	}
	if len(b) > maxHookInput {
		return in, fmt.Errorf("hook input larger than %d bytes", maxHookInput)
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return in, fmt.Errorf("hook input is not JSON: %w", err)
	}
	if in.Event == "" {
		return in, errors.New("hook input has no hook_event_name")
	}
	return in, nil
}

// HookEvent is a Claude Code event ledger handles. Deadline is how long
// ledger allows itself; Timeout (seconds) is what is written to
// settings.json beside it, a little longer, so that ledger gives up before
// Claude Code does.
type HookEvent struct {
	Name     string
	Deadline time.Duration
	Timeout  int
}

// HookEvents are the events ledger hooks, in the order they are written to
// settings.json. SessionEnd's default timeout is 1.5 s: what does not fit
// in its deadline is picked up by the next ingest.
func HookEvents() []HookEvent {
	return []HookEvent{
		{"SessionStart", 5 * time.Second, 10},
		{"PreCompact", 45 * time.Second, 60},
		{"PostToolUse", 2 * time.Second, 5},
		{"Stop", 10 * time.Second, 15},
		{"SessionEnd", 1 * time.Second, 5},
	}
}

// HookDeadline is the deadline of an event ledger handles; ok is false for
// any other event.
func HookDeadline(event string) (d time.Duration, ok bool) {
	for _, ev := range HookEvents() {
		if ev.Name == event {
			return ev.Deadline, true
		}
	}
	return 0, false
}

// HookOptions are the flags written into a hook's command line.
type HookOptions struct {
	Mode    string // "assist", or "clear": block auto-compaction once the handoff is written
	Startup bool   // inject the project's latest handoff at brand-new sessions too
}

// BlockError asks Claude Code to block the event (the hook exits 2 with
// the reason on stderr).
type BlockError struct{ Reason string }

func (e BlockError) Error() string { return e.Reason }

// Hook handles one hook event and returns what the hook prints on stdout
// (nil for nothing). Each event does:
//
//	PreCompact    ingest, write a handoff and a compaction record, once per
//	              compaction; in clear mode, block an auto compaction
//	SessionStart  inject resume context (see sessionStart)
//	PostToolUse   ingest; suggest a handoff past 80% of the window and at
//	              50, 100 and 150 tool calls, once each
//	Stop          ingest, then bring the session's resume state up to date
//	SessionEnd    the same
func (e *Engine) Hook(ctx context.Context, in HookInput, o HookOptions) (any, error) {
	switch in.Event {
	case "PreCompact":
		return nil, e.preCompact(ctx, in, o)
	case "SessionStart":
		return e.sessionStart(ctx, in, o)
	case "PostToolUse":
		return e.postToolUse(ctx, in)
	case "Stop", "SessionEnd":
		return nil, e.stopIngest(ctx, in)
	}
	return nil, nil
}

// stopIngest reads what is new in the hook's transcript, then refreshes
// the session's resume state: where the agent stops is where a later
// resume starts, and it should find the extraction done.
func (e *Engine) stopIngest(ctx context.Context, in HookInput) error {
	if err := e.hookIngest(ctx, in); err != nil {
		return err
	}
	if in.SessionID == "" {
		return nil
	}
	if err := e.RefreshResumeState(ctx, in.SessionID); err != nil && !notFound(err) {
		return fmt.Errorf("resume state: %w", err)
	}
	return nil
}

// hookIngest reads what is new in the hook's transcript.
func (e *Engine) hookIngest(ctx context.Context, in HookInput) error {
	if in.TranscriptPath == "" {
		return errors.New("hook input has no transcript_path")
	}
	_, err := e.IngestFile(ctx, e.expandHome(in.TranscriptPath))
	return err
}

// hookSession ingests what is new in the hook's transcript and returns its
// session.
func (e *Engine) hookSession(ctx context.Context, in HookInput) (*store.Store, store.Session, error) {
	if err := e.hookIngest(ctx, in); err != nil {
		return nil, store.Session{}, err
	}
	return e.Session(ctx, in.SessionID)
}

// preCompact writes a handoff and a compaction record (source hook)
// before Claude Code compacts, once per compaction however often the event
// fires. In clear mode an auto compaction is then blocked, so that the
// user clears instead; never when the handoff failed.
func (e *Engine) preCompact(ctx context.Context, in HookInput, o HookOptions) error {
	_, sess, err := e.hookSession(ctx, in)
	if err != nil {
		return err
	}
	trigger := in.Trigger
	if trigger != "manual" && trigger != "auto" {
		trigger = "auto"
	}
	req := HandoffRequest{Trigger: trigger, Budget: handoff.DefaultBudget, Source: "hook", Once: true}
	if in.CustomInstructions != nil {
		req.Note = *in.CustomInstructions
	}
	h, err := e.WriteHandoff(ctx, sess.ID, req)
	if err != nil {
		return err
	}
	if o.Mode == "clear" && in.Trigger == "auto" {
		return BlockError{fmt.Sprintf("handoff %d is written. Rather than compacting, run /clear: the new session starts from the handoff (clear, don't compact).", h.ID)}
	}
	return nil
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
//	compact, resume   this session's (after ingesting what is new)
//	clear             the project's latest other session (the new session has a new id)
//	startup           the same, only with --startup
//	anything else     none
//
// A session or project ledger has never seen gets nothing.
func (e *Engine) sessionStart(ctx context.Context, in HookInput, o HookOptions) (any, error) {
	req := ResumeRequest{Budget: handoff.DefaultResumeBudget, MaxChars: MaxHookContext}
	switch {
	case in.Source == "compact" || in.Source == "resume":
		if in.TranscriptPath != "" {
			if err := e.hookIngest(ctx, in); err != nil {
				return nil, err
			}
		}
		req.Session = in.SessionID
		if req.Session == "" {
			return nil, nil
		}
	case in.Source == "clear" || in.Source == "startup" && o.Startup:
		req.Project, req.Exclude = in.Cwd, in.SessionID
	default:
		return nil, nil
	}
	r, err := e.Resume(ctx, req)
	if notFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return NewSessionStartOutput(r.Markdown), nil
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

// postToolUse ingests what is new and, past 80% of the window or at 50,
// 100 and 150 tool calls, suggests a handoff and /clear, once per
// threshold.
func (e *Engine) postToolUse(ctx context.Context, in HookInput) (any, error) {
	st, sess, err := e.hookSession(ctx, in)
	if err != nil {
		return nil, err
	}
	why, err := contextFilling(ctx, st, sess)
	if why == "" || err != nil {
		return nil, err
	}
	var out PostToolUseOutput
	out.SystemMessage = fmt.Sprintf("ledger: %s. Consider a handoff and a fresh start: run `ledger compact %s`, then /clear.", why, shortID(sess.ID))
	out.HookSpecificOutput.HookEventName = "PostToolUse"
	out.HookSpecificOutput.AdditionalContext = fmt.Sprintf("ledger: %s. Long contexts degrade; at a good stopping point, suggest the user write a handoff (`ledger compact %s`) and /clear.", why, sess.ID)
	return out, nil
}

// contextFilling says why to suggest a handoff now, or "": the first time
// the context passes 80% of the window, else the first time the session's
// tool calls reach 50, 100 or 150. Each threshold is announced once (a
// session mark).
func contextFilling(ctx context.Context, st *store.Store, sess store.Session) (string, error) {
	win := compact.ContextLimit(sess.Model, nil).Reported(sess.ContextWindow)
	budget := compact.Budget{ContextLimit: win.Tokens, MessageTokens: sess.ContextTokens}
	if budget.ShouldCompact() {
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

// shortID is the first 8 characters of a session id: enough as a prefix.
func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
