package transcript

// GitHub Copilot CLI writes each session's events to
// ~/.copilot/session-state/<session>/events.jsonl ($COPILOT_HOME instead of
// ~/.copilot), one {"type", "data", "id", "timestamp", "parentId"} object
// per line (agentId on a sub-agent's events). Read from Copilot CLI
// 1.0.102's event schema (copilot-sdk/generated/session-events.d.ts in its
// package) and its real output:
//
//	type                           what the reader does
//	-----------------------------  ---------------------------------------------
//	session.start                  Session{ID, Project (context.cwd),
//	                               GitBranch (context.branch), Model, Time}
//	session.resume                 Session{Project, GitBranch, Model}
//	session.model_change           Session{Model (newModel)}
//	session.title_changed          Session{Title}
//	session.usage_record           Session{Usage}: the context at that model
//	                               call (inputTokens counts the cached ones,
//	                               which are split out), and ContextWindow
//	                               (maxPromptTokens); a sub-agent's are not
//	                               the session's context, and are skipped
//	user.message                   a user Message (content, as typed); Meta
//	                               when injected (a source such as a skill,
//	                               autopilot's continuation)
//	assistant.message              an assistant Message: reasoningText as
//	                               thinking, content as text, toolRequests as
//	                               tool_use; Model; ResponseID (apiCallId)
//	tool.execution_complete        a tool Message with a tool_result block
//	                               (result.content, or error.message when the
//	                               call failed)
//	session.compaction_complete    a Boundary when success: trigger ("manual",
//	                               else auto), pre/postCompactionTokens,
//	                               summaryContent
//	hook.start, hook.end           skipped: hook runs (ledger's own context
//	                               among them)
//	system.message                 skipped: the system prompt, every run
//	model.*, assistant.turn_*,     skipped: telemetry, the compaction's
//	  session.* (others), ...      start, shutdown summaries, rewinds (the
//	                               events they remove were said)
//	no type, or data not an object bad input, counted in Result.Skipped
//
// A message's uuid is its event's id; messages are parented to the one
// before them (as Codex's), events having their own chain through skipped
// events. Lines before the session's id is known (no session.start, no id
// in the file's folder name) are skipped and counted.

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/agentledger/ledger/compact"
)

// copilotLine is an event.
type copilotLine struct {
	Type      string          `json:"type"`
	Data      json.RawMessage `json:"data"`
	ID        string          `json:"id"`
	Timestamp string          `json:"timestamp"`
	AgentID   string          `json:"agentId"`
}

// copilotData holds the fields of every event the reader uses; each type
// fills its own.
type copilotData struct {
	// session.start, session.resume
	SessionID     string `json:"sessionId"`
	StartTime     string `json:"startTime"`
	SelectedModel string `json:"selectedModel"`
	Context       *struct {
		Cwd    string `json:"cwd"`
		Branch string `json:"branch"`
	} `json:"context"`
	// session.model_change, session.title_changed
	NewModel string `json:"newModel"`
	Title    string `json:"title"`
	// session.usage_record
	Usage *struct {
		InputTokens      int64  `json:"inputTokens"`
		OutputTokens     int64  `json:"outputTokens"`
		CacheReadTokens  int64  `json:"cacheReadTokens"`
		CacheWriteTokens int64  `json:"cacheWriteTokens"`
		MaxPromptTokens  int64  `json:"maxPromptTokens"`
		Initiator        string `json:"initiator"`
	} `json:"usage"`
	// user.message, assistant.message
	Content                 *string `json:"content"`
	Source                  string  `json:"source"`
	IsAutopilotContinuation bool    `json:"isAutopilotContinuation"`
	ReasoningText           string  `json:"reasoningText"`
	Model                   string  `json:"model"`
	APICallID               string  `json:"apiCallId"`
	ToolRequests            []struct {
		ToolCallID string          `json:"toolCallId"`
		Name       string          `json:"name"`
		Arguments  json.RawMessage `json:"arguments"`
	} `json:"toolRequests"`
	// tool.execution_complete
	ToolCallID string `json:"toolCallId"`
	Success    *bool  `json:"success"`
	Result     *struct {
		Content string `json:"content"`
	} `json:"result"`
	Error *copilotError `json:"error"`
	// session.compaction_complete
	Trigger              string `json:"trigger"`
	PreCompactionTokens  int64  `json:"preCompactionTokens"`
	PostCompactionTokens int64  `json:"postCompactionTokens"`
	SummaryContent       string `json:"summaryContent"`
}

// copilotError is an event's error: an object with a message (a tool's
// failure), or a bare string (a compaction that failed, as Copilot CLI
// writes some): either is read, never taken for a malformed record.
type copilotError struct {
	Message string
}

func (e *copilotError) UnmarshalJSON(b []byte) error {
	var text string
	if json.Unmarshal(b, &text) == nil {
		e.Message = text
		return nil
	}
	var obj struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		return err
	}
	e.Message = obj.Message
	return nil
}

// copilotUsed reports whether the reader uses events of type t.
func copilotUsed(t string) bool {
	switch t {
	case "session.start", "session.resume", "session.model_change", "session.title_changed", "session.usage_record",
		"user.message", "assistant.message", "tool.execution_complete", "session.compaction_complete":
		return true
	}
	return false
}

type copilotParser struct {
	st *State
	fn func(Record) error
}

func newCopilotParser(st *State, fn func(Record) error) *copilotParser {
	return &copilotParser{st: st, fn: fn}
}

func (p *copilotParser) finish() error { return nil }

func (p *copilotParser) line(data []byte, lineNo int, off int64) (string, error) {
	var l copilotLine
	if err := json.Unmarshal(data, &l); err != nil {
		return jsonReason(FormatCopilot, data, err), nil
	}
	if l.Type == "" || len(l.Data) == 0 || l.Data[0] != '{' {
		return "not a copilot record", nil
	}
	if !copilotUsed(l.Type) {
		return "", nil
	}
	var d copilotData
	if err := json.Unmarshal(l.Data, &d); err != nil {
		return jsonReason(FormatCopilot, l.Data, err), nil
	}
	if l.Type == "session.start" && d.SessionID != "" {
		p.st.SessionID = d.SessionID
	}
	if p.st.SessionID == "" {
		return "copilot event before the session's id is known", nil
	}
	if l.ID == "" && (strings.HasPrefix(l.Type, "user.") || strings.HasPrefix(l.Type, "assistant.") ||
		strings.HasPrefix(l.Type, "tool.") || l.Type == "session.compaction_complete") {
		return "malformed copilot record (no id)", nil
	}
	at := parseTime(l.Timestamp)
	rec := Record{Line: lineNo, Offset: off}
	sid := p.st.SessionID
	switch l.Type {
	case "session.start", "session.resume":
		info := &SessionInfo{ID: sid, Model: d.SelectedModel, Time: at}
		if t := parseTime(d.StartTime); !t.IsZero() {
			info.Time = t
		}
		if d.Context != nil {
			info.Project, info.GitBranch = d.Context.Cwd, d.Context.Branch
		}
		rec.Session = info
	case "session.model_change":
		rec.Session = &SessionInfo{ID: sid, Model: d.NewModel, Time: at}
	case "session.title_changed":
		rec.Session = &SessionInfo{ID: sid, Title: d.Title}
	case "session.usage_record":
		u := d.Usage
		if u == nil || l.AgentID != "" || u.Initiator == "sub-agent" || u.InputTokens <= 0 {
			return "", nil
		}
		read, write := max(u.CacheReadTokens, 0), max(u.CacheWriteTokens, 0)
		rec.Session = &SessionInfo{ID: sid, Time: at, ContextWindow: max(u.MaxPromptTokens, 0),
			Usage: &compact.Usage{InputTokens: max(u.InputTokens-read-write, 0),
				CacheReadInputTokens: read, CacheCreationInputTokens: write, OutputTokens: max(u.OutputTokens, 0)}}
	case "user.message":
		if d.Content == nil {
			return "malformed copilot record (data.content)", nil
		}
		m := p.message(l, compact.RoleUser, at, compact.Block{Kind: compact.BlockText, Text: *d.Content})
		m.Meta = d.Source != "" || d.IsAutopilotContinuation
		rec.Message = m
	case "assistant.message":
		var blocks []compact.Block
		if d.ReasoningText != "" {
			blocks = append(blocks, compact.Block{Kind: compact.BlockThinking, Text: d.ReasoningText})
		}
		if d.Content != nil && *d.Content != "" {
			blocks = append(blocks, compact.Block{Kind: compact.BlockText, Text: *d.Content})
		}
		for _, t := range d.ToolRequests {
			blocks = append(blocks, compact.Block{Kind: compact.BlockToolUse, ToolName: t.Name, ToolID: t.ToolCallID,
				Input: jsonInput(t.Arguments)})
		}
		if len(blocks) == 0 {
			return "", nil
		}
		m := p.message(l, compact.RoleAssistant, at, blocks...)
		m.Model, m.ResponseID = d.Model, d.APICallID
		rec.Message = m
	case "tool.execution_complete":
		b := compact.Block{Kind: compact.BlockToolResult, ToolID: d.ToolCallID, IsError: d.Success != nil && !*d.Success}
		if d.Result != nil {
			b.Text = d.Result.Content
		}
		if d.Error != nil && d.Error.Message != "" {
			b.Text = strings.TrimSpace(b.Text + "\n" + d.Error.Message)
			b.IsError = true
		}
		rec.Message = p.message(l, compact.RoleTool, at, b)
	case "session.compaction_complete":
		if d.Success == nil || !*d.Success || l.AgentID != "" {
			return "", nil
		}
		trigger := "auto"
		if d.Trigger == "manual" {
			trigger = "manual"
		}
		b := compact.NewBoundary(sid, l.ID, trigger, at, max(d.PreCompactionTokens, 0), max(d.PostCompactionTokens, 0))
		b.LogicalParentUUID = p.st.LastUUID
		b.Summary = strings.TrimSpace(d.SummaryContent)
		p.st.LastUUID = l.ID
		rec.Boundary = &b
	}
	if rec.Message == nil && rec.Boundary == nil && rec.Session == nil {
		return "", nil
	}
	return "", p.fn(rec)
}

// message is the Message of event l, chained to the one before.
func (p *copilotParser) message(l copilotLine, role compact.Role, at time.Time, blocks ...compact.Block) *compact.Message {
	m := &compact.Message{UUID: l.ID, ParentUUID: p.st.LastUUID, SessionID: p.st.SessionID, Role: role, Time: at,
		Blocks: blocks, Sidechain: l.AgentID != "", AgentID: l.AgentID}
	if !m.Sidechain {
		p.st.LastUUID = m.UUID
	}
	return m
}
