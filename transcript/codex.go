package transcript

// Codex CLI writes rollouts to ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl,
// one {"timestamp","type","payload"} object per line:
//
//	type / payload.type            what the reader does
//	-----------------------------  ---------------------------------------------
//	session_meta                   Session{ID, Project (cwd), GitBranch, Time}
//	turn_context                   Session{Model, Project}
//	response_item message          a Message: user, assistant, or developer as a
//	                               Meta system message; injected user context
//	                               (<environment_context>, AGENTS.md, ...) is Meta
//	response_item function_call,   an assistant Message with a tool_use block
//	  custom_tool_call,            (custom tools such as apply_patch take raw
//	  local_shell_call,            text, not JSON, as input)
//	  web_search_call
//	response_item *_call_output    a tool Message with a tool_result block
//	response_item reasoning        an assistant Message with a thinking block
//	                               (the summary texts)
//	response_item (other types)    skipped: ghost snapshots and the like
//	response_item with metadata    skipped: the model's answer to a compaction
//	  compaction_output (0.169)    request, which the compacted line holds;
//	                               the token_count after it (that request's
//	                               own usage) is passed over too
//	response_item developer        skipped: ledger's own hook output (its
//	  message from ledger          <ledger-record> fence, its offer of another
//	                               agent's session), which Codex hands the
//	                               model as a developer message
//	compacted                      a Boundary (the compaction itself)
//	event_msg token_count          Session{Usage, ContextWindow}, and UsageOf:
//	                               the model's last item since the previous
//	                               token_count (none: a repeat, after a tool's
//	                               output or the next request); an all-zero
//	                               usage (the compaction's own call) is ignored
//	event_msg task_started         Session{ContextWindow}
//	event_msg context_compacted    skipped: announces the `compacted` line
//	event_msg user_message,        skipped: copies of response items
//	  agent_message,
//	  agent_reasoning
//	event_msg (other types)        skipped: task_complete, turn_aborted,
//	                               item_completed, thread_settings_applied ...
//	token_usage_record (0.169)     skipped: each response's usage, which the
//	                               token_count events carry too
//	world_state (0.169)            skipped: the settings and instructions in
//	                               force (turn_context gives the model)
//	any other type                 skipped: newer Codex line kinds
//	no type or payload             bad input, counted in Result.Skipped
//
// Codex items have no uuid: a message's uuid is "codex-" and 24 hex digits
// of the SHA-256 of its line, so reading a file again gives the same uuids,
// and each message is parented to the one before it (a boundary included,
// as in Claude Code, whose summary follows its boundary).

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/agentledger/ledger/compact"
)

// codexLine is a rollout line.
type codexLine struct {
	Timestamp timeText      `json:"timestamp"`
	Type      string        `json:"type"`
	Payload   *codexPayload `json:"payload"`
	// Metadata is 0.16x's metadata of a response item.
	Metadata *struct {
		// CompactionOutput marks the model's answer to a compaction
		// request: the summary, which the compacted line holds too.
		CompactionOutput bool `json:"compaction_output"`
	} `json:"metadata"`
}

// codexPayload holds the fields of every payload type the reader uses;
// each type fills its own.
type codexPayload struct {
	Type string `json:"type"`

	// session_meta
	ID        string   `json:"id"`
	Timestamp timeText `json:"timestamp"`
	Cwd       string   `json:"cwd"`
	Git       *struct {
		Branch string `json:"branch"`
	} `json:"git"`

	// turn_context
	Model string `json:"model"`

	// event_msg task_started, token_count
	ModelContextWindow int64 `json:"model_context_window"`
	Info               *struct {
		LastTokenUsage *struct {
			InputTokens       int64 `json:"input_tokens"`
			CachedInputTokens int64 `json:"cached_input_tokens"`
			OutputTokens      int64 `json:"output_tokens"`
		} `json:"last_token_usage"`
		ModelContextWindow int64 `json:"model_context_window"`
	} `json:"info"`

	// response_item
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"` // message parts; reasoning text
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"` // a JSON string, usually
	Input     json.RawMessage `json:"input"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
	Status    string          `json:"status"`
	Summary   json.RawMessage `json:"summary"` // reasoning: parts; turn_context: a string
	Action    json.RawMessage `json:"action"`

	// compacted
	Message json.RawMessage `json:"message"`
}

// codexPart is one part of message content or reasoning.
type codexPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// codexMetaPrefixes start user messages that Codex injected: environment,
// instructions, permissions, shell commands run with '!', aborted turns.
var codexMetaPrefixes = []string{
	"<environment_context>",
	"<user_instructions>",
	"# AGENTS.md",
	"<INSTRUCTIONS>",
	"<permissions",
	"<user_shell_command>",
	"<turn_aborted>",
	"<collaboration_mode>",
	"<personality",
	"<skill",
}

// ledgerOutputPrefixes start the context ledger's own hooks give an
// agent: the recorded-data fence around a resume, and the one-line offer
// of another agent's session. It is ledger's, not conversation.
var ledgerOutputPrefixes = []string{`<ledger-record source="ledger"`, "ledger: this project's latest work is"}

// codexUsed reports whether the reader uses lines of type t with payload
// type pt.
func codexUsed(t, pt string) bool {
	switch t {
	case "session_meta", "turn_context", "compacted":
		return true
	case "event_msg":
		return pt == "token_count" || pt == "task_started"
	case "response_item":
		switch pt {
		case "message", "function_call", "custom_tool_call", "local_shell_call", "web_search_call",
			"function_call_output", "custom_tool_call_output", "reasoning":
			return true
		}
	}
	return false
}

// codexParser reads Codex rollout lines for one Read.
type codexParser struct {
	st *State
	fn func(Record) error
}

func newCodexParser(st *State, fn func(Record) error) *codexParser {
	return &codexParser{st: st, fn: fn}
}

func (p *codexParser) finish() error { return nil }

func (p *codexParser) line(data []byte, lineNo int, off int64) (string, error) {
	var l codexLine
	if err := json.Unmarshal(data, &l); err != nil {
		if isTypeError(err) && l.Type != "" && l.Payload != nil && !codexUsed(l.Type, l.Payload.Type) {
			// A line kind the reader skips anyway, with a field shaped
			// unlike the ones it knows: not bad input.
			return "", nil
		}
		return jsonReason(FormatCodex, data, err), nil
	}
	if l.Type == "" || l.Payload == nil {
		return "not a codex record", nil
	}
	pl := l.Payload
	at := parseTime(string(l.Timestamp))
	rec := Record{Line: lineNo, Offset: off}

	switch l.Type {
	case "session_meta":
		if pl.ID != "" {
			p.st.SessionID = pl.ID
		}
		info := &SessionInfo{ID: p.st.SessionID, Project: pl.Cwd, Time: parseTime(string(pl.Timestamp))}
		if info.Time.IsZero() {
			info.Time = at
		}
		if pl.Git != nil {
			info.GitBranch = pl.Git.Branch
		}
		rec.Session = info
	case "turn_context":
		rec.Session = &SessionInfo{ID: p.st.SessionID, Model: pl.Model, Project: pl.Cwd}
	case "event_msg":
		rec.Session = p.event(pl)
	case "response_item":
		if l.Metadata != nil && l.Metadata.CompactionOutput {
			// The compaction's own answer: the summary, which the
			// compacted line carries; and the token_count after it is the
			// compaction request's, not the conversation's.
			p.st.carry().compacting = true
			return "", nil
		}
		m, reason := p.item(pl, data)
		if m == nil {
			return reason, nil
		}
		m.Time = at
		rec.Message = m
	case "compacted":
		rec.Boundary = p.boundary(pl, data, at)
	}
	if rec.Message == nil && rec.Boundary == nil && rec.Session == nil {
		return "", nil
	}
	return "", p.fn(rec)
}

// event returns the session facts of an event_msg, nil for the events
// skipped on purpose.
func (p *codexParser) event(pl *codexPayload) *SessionInfo {
	switch pl.Type {
	case "task_started":
		if pl.ModelContextWindow > 0 {
			return &SessionInfo{ID: p.st.SessionID, ContextWindow: pl.ModelContextWindow}
		}
	case "token_count":
		if pl.Info == nil {
			return nil
		}
		info := &SessionInfo{ID: p.st.SessionID, ContextWindow: pl.Info.ModelContextWindow}
		// Codex counts cached tokens inside input_tokens: split them out so
		// that Usage.ContextTokens() is input_tokens again. The usage of a
		// compaction request (between its answer and the compacted line)
		// is not the conversation's context.
		if u := pl.Info.LastTokenUsage; u != nil && u.InputTokens > 0 && !p.st.carry().compacting {
			info.Usage = &compact.Usage{
				InputTokens:          u.InputTokens - u.CachedInputTokens,
				CacheReadInputTokens: u.CachedInputTokens,
				OutputTokens:         u.OutputTokens,
			}
			p.st.LastContextTokens = u.InputTokens
			info.UsageOf, p.st.Answered = p.st.Answered, ""
		}
		if info.Usage == nil && info.ContextWindow == 0 {
			return nil
		}
		return info
	}
	return nil
}

// item returns the message of a response item, nil for the item types
// skipped on purpose, or nil and why the item is malformed.
func (p *codexParser) item(pl *codexPayload, data []byte) (*compact.Message, string) {
	var m *compact.Message
	switch pl.Type {
	case "message":
		var ok bool
		if m, ok = p.message(pl); !ok {
			return nil, "malformed codex record (payload.content)"
		}
		if m == nil {
			return nil, ""
		}
	case "function_call":
		m = p.newMessage(compact.RoleAssistant, compact.Block{Kind: compact.BlockToolUse,
			ToolName: pl.Name, ToolID: pl.CallID, Input: rawText(pl.Arguments)})
	case "custom_tool_call":
		m = p.newMessage(compact.RoleAssistant, compact.Block{Kind: compact.BlockToolUse,
			ToolName: pl.Name, ToolID: pl.CallID, Input: rawText(pl.Input)})
	case "local_shell_call":
		m = p.newMessage(compact.RoleAssistant, compact.Block{Kind: compact.BlockToolUse,
			ToolName: "local_shell", ToolID: pl.CallID, Input: string(pl.Action)})
	case "web_search_call":
		m = p.newMessage(compact.RoleAssistant, compact.Block{Kind: compact.BlockToolUse,
			ToolName: "web_search", ToolID: pl.ID, Input: string(pl.Action)})
	case "function_call_output", "custom_tool_call_output":
		text, failed := codexOutput(pl.Output)
		m = p.newMessage(compact.RoleTool, compact.Block{Kind: compact.BlockToolResult,
			ToolID: pl.CallID, Text: text, IsError: failed || pl.Status == "failed"})
	case "reasoning":
		m = p.newMessage(compact.RoleAssistant, compact.Block{Kind: compact.BlockThinking,
			Text: reasoningText(pl)})
	default:
		return nil, ""
	}
	m.UUID = lineUUID("codex-", data)
	m.ParentUUID = p.st.LastUUID
	p.st.LastUUID = m.UUID
	if m.Role == compact.RoleAssistant {
		p.st.Answered = m.UUID
	}
	return m, ""
}

func (p *codexParser) newMessage(role compact.Role, blocks ...compact.Block) *compact.Message {
	return &compact.Message{SessionID: p.st.SessionID, Role: role, Blocks: blocks}
}

// message returns the message of a message item; ok is false when its
// content is neither parts nor a string.
func (p *codexParser) message(pl *codexPayload) (m *compact.Message, ok bool) {
	var parts []codexPart
	switch {
	case len(pl.Content) == 0 || string(pl.Content) == "null":
	case pl.Content[0] == '[':
		if json.Unmarshal(pl.Content, &parts) != nil {
			return nil, false
		}
	case pl.Content[0] == '"':
		var s string
		if json.Unmarshal(pl.Content, &s) != nil {
			return nil, false
		}
		parts = []codexPart{{Type: "input_text", Text: s}}
	default:
		return nil, false
	}
	blocks := make([]compact.Block, 0, len(parts))
	for _, part := range parts {
		switch part.Type {
		case "input_text", "output_text", "text":
			blocks = append(blocks, compact.Block{Kind: compact.BlockText, Text: part.Text})
		case "input_image", "image":
			blocks = append(blocks, compact.Block{Kind: compact.BlockImage})
		default:
			blocks = append(blocks, compact.Block{Kind: compact.BlockText, Text: "[" + part.Type + "]"})
		}
	}
	if (pl.Role == "developer" || pl.Role == "system") && len(blocks) > 0 && blocks[0].Kind == compact.BlockText &&
		hasAnyPrefix(blocks[0].Text, ledgerOutputPrefixes) {
		return nil, true // ledger's own hook output, which Codex hands the model as a developer message
	}
	m = p.newMessage(compact.Role(pl.Role), blocks...)
	switch pl.Role {
	case "developer", "system":
		m.Role, m.Meta = compact.RoleSystem, true
	case "user":
		m.Meta = len(blocks) > 0 && blocks[0].Kind == compact.BlockText &&
			hasAnyPrefix(blocks[0].Text, codexMetaPrefixes)
		if !m.Meta {
			p.st.carry().userCompact = strings.TrimSpace(m.Text()) == "/compact"
		}
	case "":
		m.Role = compact.RoleAssistant
	}
	return m, true
}

func (p *codexParser) boundary(pl *codexPayload, data []byte, at time.Time) *compact.Boundary {
	trigger := "auto"
	c := p.st.carry()
	if c.userCompact {
		trigger = "manual"
	}
	uuid := lineUUID("codex-", data)
	b := compact.NewBoundary(p.st.SessionID, uuid, trigger, at, p.st.LastContextTokens, 0)
	b.LogicalParentUUID = p.st.LastUUID
	b.Summary = rawText(pl.Message)
	p.st.LastUUID = uuid
	c.userCompact, c.compacting = false, false
	return &b
}

// rawText is a JSON string's text, or any other JSON value as written
// (function arguments are a JSON string holding JSON; a producer that
// wrote the object itself still gets it kept).
func rawText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}

// reasoningText joins a reasoning item's summary texts, or its raw
// reasoning text when it has no summary.
func reasoningText(pl *codexPayload) string {
	texts := func(raw json.RawMessage) string {
		if len(raw) == 0 || raw[0] != '[' {
			return ""
		}
		var parts []codexPart
		if json.Unmarshal(raw, &parts) != nil {
			return ""
		}
		var sb strings.Builder
		for _, part := range parts {
			if part.Text == "" {
				continue
			}
			if sb.Len() > 0 {
				sb.WriteString("\n\n")
			}
			sb.WriteString(part.Text)
		}
		return sb.String()
	}
	if s := texts(pl.Summary); s != "" {
		return s
	}
	return texts(pl.Content)
}

// codexOutput reads a tool call's output: a string, possibly holding JSON
// {"output":...,"metadata":{"exit_code":N}}, or an array of content items.
// It reports whether the output says the call failed: a non-zero exit code
// in the metadata or in the "Exit code: N" / "Process exited with code N"
// header of shell output.
func codexOutput(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return string(raw), false
		}
		if strings.HasPrefix(s, "{") {
			var wrapped struct {
				Output   *string `json:"output"`
				Metadata *struct {
					ExitCode *int64 `json:"exit_code"`
				} `json:"metadata"`
			}
			if json.Unmarshal([]byte(s), &wrapped) == nil && wrapped.Output != nil {
				failed := wrapped.Metadata != nil && wrapped.Metadata.ExitCode != nil && *wrapped.Metadata.ExitCode != 0
				return *wrapped.Output, failed
			}
		}
		return s, shellFailed(s)
	case '[':
		var parts []codexPart
		if json.Unmarshal(raw, &parts) == nil {
			var sb strings.Builder
			for i, part := range parts {
				if i > 0 {
					sb.WriteByte('\n')
				}
				switch part.Type {
				case "input_text", "output_text", "text":
					sb.WriteString(part.Text)
				case "input_image", "image":
					sb.WriteString("[image]")
				default:
					sb.WriteString("[" + part.Type + "]")
				}
			}
			return sb.String(), false
		}
	case '{':
		var obj struct {
			Content *string `json:"content"`
			Success *bool   `json:"success"`
		}
		if json.Unmarshal(raw, &obj) == nil && obj.Content != nil {
			return *obj.Content, obj.Success != nil && !*obj.Success
		}
	}
	return string(raw), false
}

// shellFailed reads the exit code from the header Codex puts before shell
// output ("Exit code: 1", "Process exited with code 1"), looking only at
// the lines before "Output:".
func shellFailed(s string) bool {
	for i := 0; i < 6 && s != ""; i++ {
		line, rest, _ := strings.Cut(s, "\n")
		s = rest
		if line == "Output:" {
			return false
		}
		for _, prefix := range []string{"Exit code: ", "Process exited with code "} {
			if n, ok := strings.CutPrefix(line, prefix); ok {
				code, err := strconv.Atoi(strings.TrimSpace(n))
				return err == nil && code != 0
			}
		}
	}
	return false
}
