package engine

// The hooks of Gemini CLI, Qwen Code and GitHub Copilot CLI, as each one
// runs them (read from their sources and their real payloads,
// testdata/agents/*/hooks), and what ledger does at each:
//
//	agent        event (theirs)        ledger's            its input
//	-----------  --------------------  ------------------  ---------------------
//	Gemini CLI   SessionStart          SessionStart        Claude Code's fields
//	             PreCompress           PreCompact          (session_id,
//	             AfterAgent            Stop                transcript_path, cwd,
//	             SessionEnd            SessionEnd          hook_event_name,
//	                                                       source, trigger,
//	                                                       reason)
//	Qwen Code    SessionStart, PreCompact, PostCompact,    Claude Code's
//	             Stop, SessionEnd (Claude Code's names)
//	Copilot CLI  sessionStart          SessionStart        camelCase, and no
//	             preCompact            PreCompact          event name: the
//	             agentStop             Stop                command line says it
//	             sessionEnd            SessionEnd          (--event); its
//	             (the PascalCase aliases SessionStart,     PascalCase aliases
//	             PreCompact, Stop, SessionEnd also         send Claude Code's
//	             reach ledger's hook)                      fields
//
// What differs from Claude Code:
//   - Gemini CLI fires PreCompress before every turn, whether or not it
//     then compresses (it checks its threshold after the hook). ledger
//     writes a handoff only when a compression is due: a manual /compress,
//     or a context (the last prompt's tokens) at Gemini CLI's threshold,
//     model.compressionThreshold of its settings (default half of its
//     1,048,576-token window); and at most once per point of the
//     conversation.
//   - Gemini CLI's hook timeouts are in milliseconds; it reads a hook's
//     stderr as its output when stdout is empty (a warning reaches the
//     user as a message).
//   - Copilot CLI injects the context of the native sessionStart only, as
//     {"additionalContext": ...}; its sessionStart and sessionEnd carry no
//     transcript path, so ledger uses the files it already read for the
//     session (never a path made from an id).
//   - Qwen Code's SessionEnd does not fire in a -p run: Stop ingests.
//   - Clear mode (blocking a compaction or a stop) is Claude Code's and
//     Codex's only.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tidwall/gjson"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/store"
)

// AgentHookEvent is one hook ledger installs for an agent: the agent's own
// event name, ledger's event it is, and the timeout written beside it (in
// seconds; the agent's unit is the installer's business).
type AgentHookEvent struct {
	Name    string
	Event   string
	Timeout int
}

// AgentHookEvents are the hooks ledger installs for agent, in the order
// they are written; ok is false for an agent whose hooks ledger does not
// install this way. The timeouts are well above each event's budget
// (HookEvents), as for Claude Code.
func AgentHookEvents(agent string) (events []AgentHookEvent, ok bool) {
	switch agent {
	case "claude", "", "codex":
		list := HookEvents()
		if agent == "codex" {
			list = CodexHookEvents()
		}
		for _, ev := range list {
			events = append(events, AgentHookEvent{Name: ev.Name, Event: ev.Name, Timeout: ev.Timeout})
		}
		return events, true
	case "gemini":
		return []AgentHookEvent{
			{"SessionStart", "SessionStart", 10},
			{"PreCompress", "PreCompact", 60},
			{"AfterAgent", "Stop", 15},
			{"SessionEnd", "SessionEnd", 5},
		}, true
	case "qwen":
		return []AgentHookEvent{
			{"SessionStart", "SessionStart", 10},
			{"PreCompact", "PreCompact", 60},
			{"PostCompact", "PostCompact", 10},
			{"Stop", "Stop", 15},
			{"SessionEnd", "SessionEnd", 5},
		}, true
	case "copilot":
		return []AgentHookEvent{
			{"sessionStart", "SessionStart", 10},
			{"preCompact", "PreCompact", 60},
			{"agentStop", "Stop", 15},
			{"sessionEnd", "SessionEnd", 5},
		}, true
	}
	return nil, false
}

// hookEventOf is ledger's event for an agent's event name; a name it
// does not map (Claude Code's own, an alias, one ledger does not handle)
// is returned as it is, and the hook's dispatch ignores what it does not
// know.
func hookEventOf(agent, name string) string {
	evs, _ := AgentHookEvents(agent)
	for _, ev := range evs {
		if ev.Name == name {
			return ev.Event
		}
	}
	switch agent {
	case "gemini":
		switch name {
		case "AfterTool":
			return "PostToolUse"
		}
	case "copilot":
		switch name {
		case "postToolUse":
			return "PostToolUse"
		}
	}
	return name // Claude Code's names, and the aliases of the others
}

// copilotHookInput is the camelCase input of Copilot CLI's native events.
type copilotHookInput struct {
	SessionID          string      `json:"sessionId"`
	Cwd                string      `json:"cwd"`
	TranscriptPath     string      `json:"transcriptPath"`
	Source             string      `json:"source"`
	Trigger            string      `json:"trigger"`
	CustomInstructions *string     `json:"customInstructions"`
	Reason             string      `json:"reason"`
	ToolName           string      `json:"toolName"`
	StopHookActive     bool        `json:"stop_hook_active"`
	Timestamp          json.Number `json:"timestamp"` // milliseconds
}

// decodeAgentHookInput reads the input of agent's hook (b, one JSON
// object) as ledger's HookInput, its event named as ledger names it.
// event is the --event of the command line, for inputs that do not name
// theirs (Copilot CLI's native events).
func decodeAgentHookInput(agent, event string, b []byte) (HookInput, error) {
	var in HookInput
	var probe struct {
		Event *string `json:"hook_event_name"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return in, fmt.Errorf("hook input is not JSON: %w", err)
	}
	if agent == "copilot" && probe.Event == nil {
		if event == "" {
			return in, invalidf("copilot hook input has no event name: install with ledger hooks install --agent copilot (it passes --event)")
		}
		var c copilotHookInput
		if err := json.Unmarshal(b, &c); err != nil {
			return in, fmt.Errorf("hook input: %w", err)
		}
		in = HookInput{SessionID: c.SessionID, TranscriptPath: c.TranscriptPath, Cwd: c.Cwd, Event: event,
			Trigger: c.Trigger, CustomInstructions: c.CustomInstructions, Source: c.Source, Reason: c.Reason,
			ToolName: c.ToolName, StopHookActive: c.StopHookActive, copilotHook: event}
		in.copilotStamp, _ = c.Timestamp.Int64()
	} else if err := json.Unmarshal(b, &in); err != nil {
		return in, fmt.Errorf("hook input: %w", err)
	}
	if in.Event == "" {
		return in, invalidf("hook input has no hook_event_name")
	}
	in.Event = hookEventOf(agent, in.Event)
	if agent == "copilot" && in.Source == "new" {
		in.Source = "startup" // Copilot CLI's word for a brand-new session
	}
	return in, nil
}

// CopilotSessionStartOutput is Copilot CLI's sessionStart output: the
// context it injects (as a message before the first prompt).
type CopilotSessionStartOutput struct {
	AdditionalContext string `json:"additionalContext"`
}

// agentOutput is a hook's output in the form agent takes it: Copilot CLI's
// native sessionStart takes {"additionalContext"}; the others take Claude
// Code's.
func agentOutput(o HookOptions, in HookInput, out any) any {
	if s, ok := out.(SessionStartOutput); ok && o.Agent == "copilot" && o.Event != "" {
		return CopilotSessionStartOutput{AdditionalContext: s.HookSpecificOutput.AdditionalContext}
	}
	return out
}

// knownTranscript fills in a hook input without a transcript path (Copilot
// CLI's sessionStart and sessionEnd) with the file the ledger read the
// session from: a path the ledger recorded, looked up by the session's id,
// never made from it.
func (e *Engine) knownTranscript(ctx context.Context, in *HookInput) {
	if in.TranscriptPath != "" || in.SessionID == "" {
		return
	}
	st, err := e.Store(ctx)
	if err != nil {
		return
	}
	if paths, err := st.SessionFiles(ctx, in.SessionID); err == nil && len(paths) > 0 {
		in.TranscriptPath = paths[0]
	}
}

// geminiCompressionDue says whether Gemini CLI is about to compress the
// session at this PreCompress ("" when it is, else why not): a manual
// /compress always; an auto one when the context (the last prompt's
// tokens, as ingested) reaches the threshold. It reads what the ledger
// holds, so the hook's ingest comes first.
func (e *Engine) geminiCompressionDue(ctx context.Context, in HookInput) string {
	if in.Trigger == "manual" {
		return ""
	}
	_, sess, err := e.Session(ctx, in.SessionID)
	if err != nil {
		return "" // not known yet: ledger cannot tell, so it writes
	}
	win := compact.ContextLimit(sess.Model, nil).Reported(sess.ContextWindow)
	if sess.Model == "" && sess.ContextWindow == 0 {
		win.Tokens = compact.GeminiWindow // no model seen yet: Gemini CLI's window
	}
	threshold := e.geminiThreshold(in.Cwd)
	if float64(sess.ContextTokens) >= threshold*float64(win.Tokens) {
		return ""
	}
	return fmt.Sprintf("no compression due: the context is %d of %d tokens, and Gemini CLI compresses at %.0f%%",
		sess.ContextTokens, win.Tokens, 100*threshold)
}

// geminiThreshold is the share of the window at which Gemini CLI
// compresses: model.compressionThreshold of the project's settings, else
// the user's, else 0.5 (its default).
func (e *Engine) geminiThreshold(cwd string) float64 {
	var files []string
	if filepath.IsAbs(cwd) {
		files = append(files, filepath.Join(cwd, ".gemini", "settings.json"))
	}
	if e.home != "" {
		files = append(files, filepath.Join(e.home, ".gemini", "settings.json"))
	}
	for _, f := range files {
		b, err := readSmall(f, 1<<20)
		if err != nil {
			continue
		}
		if v := gjson.GetBytes(b, "model.compressionThreshold"); v.Type == gjson.Number && v.Float() > 0 && v.Float() <= 1 {
			return v.Float()
		}
	}
	return 0.5
}

// readSmall reads a regular file of at most limit bytes.
func readSmall(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > limit {
		return nil, fmt.Errorf("%s: not a small regular file", path)
	}
	return os.ReadFile(path)
}

// samePoint tells whether the session's latest hook compaction record was
// made at the point the conversation is at now (the same last message):
// Gemini CLI fires PreCompress again before the next turn when a
// compression did not shrink the context, and one point gets one handoff.
func samePoint(ctx context.Context, st *store.Store, session, lastUUID string) bool {
	if lastUUID == "" {
		return false
	}
	cs, err := st.Compactions(ctx, store.CompactionFilter{SessionID: session})
	if err != nil || len(cs) == 0 {
		return false
	}
	last := cs[len(cs)-1]
	return last.Source == "hook" && last.LogicalParentUUID == lastUUID
}

// geminiSkip says why a Gemini CLI PreCompress writes no handoff ("" when
// it writes one): no compression is due, or this point of the
// conversation has its handoff already.
func (e *Engine) geminiSkip(ctx context.Context, in HookInput) string {
	if why := e.geminiCompressionDue(ctx, in); why != "" {
		return why
	}
	st, sess, err := e.Session(ctx, in.SessionID)
	if err != nil {
		return ""
	}
	msgs, err := st.Messages(ctx, sess.ID, 0)
	if err == nil && samePoint(ctx, st, sess.ID, lastMainUUID(msgs)) {
		return "a handoff was written at this point of the conversation already"
	}
	return ""
}
