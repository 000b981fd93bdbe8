package compact

import (
	"strings"
	"time"
)

// Role says who produced a message.
type Role string

// Roles used across transcript formats. Codex "developer" messages map to
// RoleSystem; tool outputs that arrive as their own records map to RoleTool.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleSystem    Role = "system"
	RoleTool      Role = "tool"
)

// BlockKind is the type of one content block.
type BlockKind string

// Content block kinds, named as Claude Code names them. Codex items map onto
// these: function_call and custom_tool_call are tool_use, their outputs are
// tool_result, reasoning is thinking.
const (
	BlockText       BlockKind = "text"
	BlockThinking   BlockKind = "thinking"
	BlockToolUse    BlockKind = "tool_use"
	BlockToolResult BlockKind = "tool_result"
	BlockImage      BlockKind = "image"
)

// Block is one piece of a message's content.
type Block struct {
	Kind BlockKind `json:"kind"`
	// Text is the text of a text or thinking block, or the flattened content
	// of a tool_result.
	Text string `json:"text,omitempty"`
	// ToolName is the tool a tool_use calls (Edit, Bash, apply_patch, ...).
	ToolName string `json:"tool_name,omitempty"`
	// ToolID links a tool_use to its tool_result (Claude's tool_use id and
	// tool_use_id, Codex's call_id).
	ToolID string `json:"tool_id,omitempty"`
	// Input is the tool_use input as raw JSON (or raw text for Codex custom
	// tools such as apply_patch, whose input is a patch, not JSON).
	Input string `json:"input,omitempty"`
	// IsError marks a tool_result the tool reported as failed.
	IsError bool `json:"is_error,omitempty"`
}

// Usage is the token accounting of one API response.
type Usage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
}

// ContextTokens is the context in use at the API call: everything the model
// read, cached or not. Leaving out cache reads undercounts by most of the
// window in a long session.
func (u Usage) ContextTokens() int64 {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

// Message is one conversation message: a transcript line in Claude Code, a
// response item in Codex.
type Message struct {
	UUID       string    `json:"uuid"`
	ParentUUID string    `json:"parent_uuid,omitempty"`
	SessionID  string    `json:"session_id"`
	Role       Role      `json:"role"`
	Blocks     []Block   `json:"blocks"`
	Time       time.Time `json:"time"`
	// Model is the model that produced an assistant message.
	Model string `json:"model,omitempty"`
	// ResponseID identifies the API response an assistant line belongs to
	// (message.id + requestId): one response can span several lines.
	ResponseID string `json:"response_id,omitempty"`
	// Usage is the response's token usage, when the transcript records it.
	// Lines of one response repeat it; count it once per ResponseID, from
	// the last line.
	Usage *Usage `json:"usage,omitempty"`
	// Meta marks lines the agent injected rather than the user typed
	// (isMeta, command caveats, hook output).
	Meta bool `json:"meta,omitempty"`
	// CompactSummary marks the summary message a compaction left behind.
	CompactSummary bool `json:"compact_summary,omitempty"`
	// Sidechain marks subagent messages that share their parent's session.
	Sidechain bool   `json:"sidechain,omitempty"`
	AgentID   string `json:"agent_id,omitempty"`
}

// Text joins the message's text blocks (not thinking, not tools).
func (m Message) Text() string {
	var sb strings.Builder
	for _, b := range m.Blocks {
		if b.Kind == BlockText {
			if sb.Len() > 0 {
				sb.WriteByte('\n')
			}
			sb.WriteString(b.Text)
		}
	}
	return sb.String()
}

// SearchText is the message as one text, a line per block: its text and
// thinking, each tool call's name and input, and tool output. It is what
// full-text search indexes and what secret detection scans.
func (m Message) SearchText() string {
	var sb strings.Builder
	for _, b := range m.Blocks {
		var part string
		switch b.Kind {
		case BlockText, BlockThinking, BlockToolResult:
			part = b.Text
		case BlockToolUse:
			part = b.ToolName + " " + b.Input
		case BlockImage:
			part = "[image]"
		}
		if part == "" {
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(part)
	}
	return sb.String()
}

// Kind is the message's dominant block kind: the first tool_use or
// tool_result block if there is one, else thinking if that is all there is,
// else text.
func (m Message) Kind() BlockKind {
	kind := BlockText
	for i, b := range m.Blocks {
		switch b.Kind {
		case BlockToolUse, BlockToolResult:
			return b.Kind
		case BlockThinking, BlockImage:
			if i == 0 {
				kind = b.Kind
			}
		}
	}
	return kind
}

// ToolName is the name of the message's first tool_use, if any.
func (m Message) ToolName() string {
	for _, b := range m.Blocks {
		if b.Kind == BlockToolUse {
			return b.ToolName
		}
	}
	return ""
}

// Boundary marks a compaction in a conversation, shaped like Claude Code's
// compact_boundary system line.
type Boundary struct {
	Type      string    `json:"type"`    // always "system"
	Subtype   string    `json:"subtype"` // always "compact_boundary"
	UUID      string    `json:"uuid"`
	SessionID string    `json:"session_id"`
	Time      time.Time `json:"time"`
	Trigger   string    `json:"trigger"` // "manual" or "auto"
	// PreTokens is the context in use just before the compaction.
	PreTokens int64 `json:"pre_tokens"`
	// PostTokens is the context in use just after it (0 when not known).
	PostTokens int64 `json:"post_tokens"`
	// LogicalParentUUID is the last message before the boundary; it may
	// point to a uuid absent from the transcript.
	LogicalParentUUID string `json:"logical_parent_uuid,omitempty"`
	// Summary is the compaction's summary text, when known.
	Summary string `json:"summary,omitempty"`
	// Preserved is the part of the conversation a partial compaction kept
	// verbatim, nil when the summary replaced all of it.
	Preserved *Preserved `json:"preserved,omitempty"`
}

// Preserved is the segment of the conversation a compaction kept as it
// was (Claude Code 2.1.3x's compactMetadata.preservedSegment and
// preservedMessages): from HeadUUID to TailUUID, the messages just before
// the compaction, Messages of them.
type Preserved struct {
	HeadUUID string `json:"head_uuid"`
	TailUUID string `json:"tail_uuid"`
	Messages int    `json:"messages"`
}

// Cost is what a session cost, as the agent reports it (Claude Code's
// cost-state record): its spend in US dollars at list prices, and the
// lines its edits added and removed.
type Cost struct {
	USD          float64 `json:"usd"`
	LinesAdded   int64   `json:"lines_added"`
	LinesRemoved int64   `json:"lines_removed"`
}

// NewBoundary returns a Boundary with its fixed type and subtype set.
func NewBoundary(sessionID, uuid, trigger string, at time.Time, pre, post int64) Boundary {
	return Boundary{Type: "system", Subtype: "compact_boundary", UUID: uuid, SessionID: sessionID,
		Time: at, Trigger: trigger, PreTokens: pre, PostTokens: post}
}
