package transcript

// Pi (@mariozechner/pi-coding-agent) keeps each session in
// ~/.pi/agent/sessions/--<cwd, / → ->--/<time>_<uuid>.jsonl: a header line,
// then entries that form a tree by id and parentId (session format version
// 3, read as of pi 0.73.1):
//
//	type                  what the reader does
//	--------------------  ----------------------------------------------------
//	session               the header: Session{ID, Project (cwd), Time}
//	message user          a user Message (text, images)
//	message assistant     an assistant Message: text, thinking, a tool_use per
//	                      toolCall; Usage (input, cacheRead, cacheWrite,
//	                      output), Model, ResponseID; Session{Model}
//	message toolResult    a tool Message with a tool_result block
//	message bashExecution a Meta user message: a command the user ran with !
//	message custom,       a Meta message (an extension's, or a summary pi
//	  branchSummary       made of a branch left)
//	message               a Message marked CompactSummary
//	  compactionSummary
//	custom_message        a Meta user message: what an extension injected
//	                      (ledger's own start context among them)
//	compaction            a Boundary: Summary (pi's summary, with its lists of
//	                      files read and modified), PreTokens (tokensBefore);
//	                      none for one right under a compaction (the same
//	                      compaction run twice: see the compaction case)
//	branch_summary        a Meta user message holding the summary of the
//	                      branch left
//	model_change          Session{Model}
//	session_info          Session{Title} (the name given with /name)
//	thinking_level_change skipped on purpose, as are label and custom (an
//	  label, custom       extension's state, never sent to the model)
//	no type, or no id     bad input, counted in Result.Skipped
//
// Branches. Going back in the tree (/tree) appends the new branch to the same
// file, its first entry the child of an earlier one. Pi continues from the
// last entry of the file: the conversation is the path from that latest leaf
// to the root. The reader reads every entry in file order, as it reads
// Claude Code's rewinds: what an abandoned branch did happened (its files
// were written), and a later read cannot take back what an earlier one
// stored. Each message keeps its parent (parentId, through the entries the
// reader skips), so the tree is in the ledger, and since the latest branch
// is the latest in the file, a session's latest messages, its model and its
// context in use are the latest leaf's.
//
// Entry ids are 8 hex digits, unique within their file (pi checks); they are
// the messages' uuids. Pi writes nothing until the first assistant message
// arrives, then appends whole lines: an unfinished session may have no file.

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/agentledger/ledger/compact"
)

// FormatPi is Pi's session JSONL.
const FormatPi Format = "pi"

// piTypes are the entry types Pi writes, the header aside.
var piTypes = map[string]bool{
	"message": true, "model_change": true, "thinking_level_change": true, "compaction": true,
	"branch_summary": true, "custom": true, "custom_message": true, "label": true, "session_info": true,
}

// piEntry holds the fields of every entry type the reader uses.
type piEntry struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	ParentID  *string         `json:"parentId"`
	Timestamp json.RawMessage `json:"timestamp"` // ISO 8601 text, or Unix ms

	// session (header)
	Cwd string `json:"cwd"`

	// message
	Message *piMessage `json:"message"`

	// model_change
	ModelID string `json:"modelId"`

	// compaction, branch_summary
	Summary      string `json:"summary"`
	TokensBefore int64  `json:"tokensBefore"`

	// custom_message
	Content json.RawMessage `json:"content"`

	// session_info
	Name string `json:"name"`
}

// piMessage is an AgentMessage: pi-ai's user, assistant and toolResult
// messages and pi's own kinds.
type piMessage struct {
	Role         string          `json:"role"`
	Content      json.RawMessage `json:"content"` // a string or blocks
	Model        string          `json:"model"`
	Usage        *piUsage        `json:"usage"`
	StopReason   string          `json:"stopReason"`
	ErrorMessage string          `json:"errorMessage"`
	ResponseID   string          `json:"responseId"`
	ToolCallID   string          `json:"toolCallId"`
	IsError      bool            `json:"isError"`
	Command      string          `json:"command"`
	Output       string          `json:"output"`
	ExitCode     *int64          `json:"exitCode"`
	Summary      string          `json:"summary"`
}

// piUsage is pi-ai's usage: input excludes the cache reads and writes.
type piUsage struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
}

// piBlock is one content block.
type piBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// piParser reads Pi session lines for one Read.
type piParser struct {
	st *State
	fn func(Record) error
}

func newPiParser(st *State, fn func(Record) error) *piParser {
	return &piParser{st: st, fn: fn}
}

func (p *piParser) finish() error { return nil }

func (p *piParser) line(data []byte, lineNo int, off int64) (string, error) {
	var e piEntry
	if err := json.Unmarshal(data, &e); err != nil {
		if isTypeError(err) && e.Type != "" && e.Type != "session" && !piTypes[e.Type] {
			return "", nil // a newer entry kind, shaped unlike the ones read
		}
		return jsonReason(FormatPi, data, err), nil
	}
	rec := Record{Line: lineNo, Offset: off}
	at := piTime(e.Timestamp)
	if e.Type == "session" {
		if e.ID == "" {
			return "pi session header without id", nil
		}
		p.st.SessionID = e.ID
		rec.Session = &SessionInfo{ID: e.ID, Project: e.Cwd, Time: at}
		return "", p.fn(rec)
	}
	switch {
	case e.Type == "":
		return "not a pi record", nil
	case !piTypes[e.Type]:
		return "", nil // a newer entry kind
	case e.ID == "":
		return "pi entry without id", nil
	case p.st.SessionID == "":
		return "pi entry before the session header", nil
	}
	parent := ""
	if e.ParentID != nil {
		parent = p.st.carry().aliases.resolve(*e.ParentID)
	}
	sid := p.st.SessionID
	var m *compact.Message
	switch e.Type {
	case "message":
		if e.Message == nil {
			return "malformed pi record (message)", nil
		}
		var reason string
		if m, reason = p.message(e.Message); m == nil {
			if reason == "" {
				p.st.carry().aliases.add(e.ID, parentOf(e))
			}
			return reason, nil
		}
		if m.Role == compact.RoleAssistant && m.Model != "" {
			rec.Session = &SessionInfo{ID: sid, Model: m.Model}
		}
	case "custom_message":
		m = &compact.Message{Role: compact.RoleUser, Meta: true, Blocks: piContent(e.Content)}
	case "branch_summary":
		m = &compact.Message{Role: compact.RoleUser, Meta: true, Blocks: []compact.Block{{Kind: compact.BlockText, Text: e.Summary}}}
	case "compaction":
		if parent != "" && parent == p.st.PiCompaction {
			// The same compaction again: Pi prepares none on a branch that
			// ends with a compaction, yet 0.73.1 runs two at one point when
			// the check at a prompt's end and the one before the next
			// prompt race, both prepared from the same branch, the second
			// appended under the first. One point, one compaction: the
			// first, with its summary; what follows hangs on it.
			p.st.carry().aliases.add(e.ID, parent)
			return "", nil
		}
		b := compact.NewBoundary(sid, e.ID, "auto", at, e.TokensBefore, 0)
		b.LogicalParentUUID = parent
		b.Summary = e.Summary
		rec.Boundary = &b
		p.st.LastUUID, p.st.PiCompaction = e.ID, e.ID
		return "", p.fn(rec)
	case "model_change":
		rec.Session = &SessionInfo{ID: sid, Model: e.ModelID}
	case "session_info":
		if e.Name != "" {
			rec.Session = &SessionInfo{ID: sid, Title: e.Name}
		}
	}
	if m == nil {
		// Skipped on purpose: its children hang on its nearest ancestor.
		p.st.carry().aliases.add(e.ID, parentOf(e))
		if rec.Session == nil {
			return "", nil
		}
		return "", p.fn(rec)
	}
	m.UUID, m.ParentUUID, m.SessionID, m.Time = e.ID, parent, sid, at
	if m.Usage != nil {
		m.ResponseID = e.ID
	}
	p.st.LastUUID = e.ID
	rec.Message = m
	return "", p.fn(rec)
}

// parentOf is an entry's parentId ("" for a root).
func parentOf(e piEntry) string {
	if e.ParentID == nil {
		return ""
	}
	return *e.ParentID
}

// message maps a message entry's AgentMessage; nil with "" for a kind the
// reader skips, nil with a reason for a malformed one.
func (p *piParser) message(pm *piMessage) (*compact.Message, string) {
	m := &compact.Message{}
	switch pm.Role {
	case "user":
		m.Role, m.Blocks = compact.RoleUser, piContent(pm.Content)
	case "assistant":
		m.Role, m.Model = compact.RoleAssistant, pm.Model
		m.Blocks = piContent(pm.Content)
		if pm.StopReason == "error" && pm.ErrorMessage != "" {
			m.Blocks = append(m.Blocks, compact.Block{Kind: compact.BlockText, Text: "[error: " + pm.ErrorMessage + "]"})
		}
		if u := pm.Usage; u != nil && (u.Input > 0 || u.Output > 0 || u.CacheRead > 0 || u.CacheWrite > 0) {
			m.Usage = &compact.Usage{InputTokens: u.Input, CacheCreationInputTokens: u.CacheWrite,
				CacheReadInputTokens: u.CacheRead, OutputTokens: u.Output}
		}
	case "toolResult":
		m.Role = compact.RoleTool
		m.Blocks = []compact.Block{{Kind: compact.BlockToolResult, ToolID: pm.ToolCallID,
			Text: blocksText(piContent(pm.Content)), IsError: pm.IsError}}
	case "bashExecution":
		text := "!" + pm.Command
		if pm.Output != "" {
			text += "\n" + pm.Output
		}
		if pm.ExitCode != nil && *pm.ExitCode != 0 {
			text += "\n[exit code " + strconv.FormatInt(*pm.ExitCode, 10) + "]"
		}
		m.Role, m.Meta = compact.RoleUser, true
		m.Blocks = []compact.Block{{Kind: compact.BlockText, Text: text}}
	case "custom", "hookMessage":
		m.Role, m.Meta, m.Blocks = compact.RoleUser, true, piContent(pm.Content)
	case "branchSummary":
		m.Role, m.Meta = compact.RoleUser, true
		m.Blocks = []compact.Block{{Kind: compact.BlockText, Text: pm.Summary}}
	case "compactionSummary":
		m.Role, m.CompactSummary = compact.RoleUser, true
		m.Blocks = []compact.Block{{Kind: compact.BlockText, Text: pm.Summary}}
	case "":
		return nil, "malformed pi record (message.role)"
	default:
		return nil, ""
	}
	return m, ""
}

// piContent reads message content: a string, or text, image, thinking and
// toolCall blocks.
func piContent(raw json.RawMessage) []compact.Block {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil
		}
		return []compact.Block{{Kind: compact.BlockText, Text: s}}
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		return nil
	}
	blocks := make([]compact.Block, 0, len(parts))
	for _, part := range parts {
		var b piBlock
		if json.Unmarshal(part, &b) != nil {
			continue
		}
		switch b.Type {
		case "text":
			blocks = append(blocks, compact.Block{Kind: compact.BlockText, Text: b.Text})
		case "thinking":
			blocks = append(blocks, compact.Block{Kind: compact.BlockThinking, Text: b.Thinking})
		case "image":
			blocks = append(blocks, compact.Block{Kind: compact.BlockImage})
		case "toolCall":
			in := string(b.Arguments)
			if in == "" || in == "null" {
				in = "{}"
			}
			blocks = append(blocks, compact.Block{Kind: compact.BlockToolUse, ToolName: b.Name, ToolID: b.ID, Input: in})
		default:
			blocks = append(blocks, compact.Block{Kind: compact.BlockText, Text: "[" + b.Type + "]"})
		}
	}
	return blocks
}

// blocksText flattens blocks into a tool result's text.
func blocksText(blocks []compact.Block) string {
	var sb strings.Builder
	for i, b := range blocks {
		if i > 0 {
			sb.WriteByte('\n')
		}
		switch b.Kind {
		case compact.BlockImage:
			sb.WriteString("[image]")
		default:
			sb.WriteString(b.Text)
		}
	}
	return sb.String()
}

// piTime reads an entry's timestamp: ISO 8601 text, or Unix milliseconds.
func piTime(raw json.RawMessage) time.Time {
	if len(raw) == 0 {
		return time.Time{}
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return time.Time{}
		}
		return parseTime(s)
	}
	ms, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || ms <= 0 || ms > 1e15 {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms)).UTC()
}
