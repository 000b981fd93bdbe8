package transcript

// Qwen Code (a fork of Gemini CLI) writes one record per line to
// ~/.qwen/projects/<cwd, every non-alphanumeric as "-">/chats/<session>.jsonl
// ($QWEN_RUNTIME_DIR or $QWEN_HOME instead of ~/.qwen). Records are shaped
// like Claude Code's lines (uuid, parentUuid, sessionId, timestamp, type,
// cwd, gitBranch) but hold Gemini API content: message {role, parts}.
// Read from Qwen Code 0.24.4's source (chatRecordingService) and its real
// output:
//
//	type / subtype                 what the reader does
//	-----------------------------  ---------------------------------------------
//	user                           a user Message (text, images)
//	assistant                      an assistant Message (text, thought parts as
//	                               thinking, functionCall parts as tool_use);
//	                               Model, Usage (usageMetadata), and the
//	                               session's ContextWindow (contextWindowSize)
//	tool_result                    a tool Message of tool_result blocks (the
//	                               functionResponse parts); toolCallResult
//	                               status "error" marks them failed
//	system chat_compression        a Boundary: systemPayload.info's
//	                               originalTokenCount and newTokenCount, the
//	                               trigger (triggerReason "manual" or not), and
//	                               the summary, the first user text of
//	                               compressedHistory
//	system custom_title            Session{Title}
//	system session_model           Session{Model}
//	system (other subtypes)        skipped: ui_telemetry (a copy of the usage),
//	                               attribution_snapshot, slash_command, rewind
//	                               (its records stay: they were said), ...
//	any other type                 skipped: newer record kinds
//	no type, no uuid or sessionId  bad input, counted in Result.Skipped
//
// Every record's sessionId, cwd and gitBranch go with its message as the
// session's facts. Messages keep Qwen Code's own uuid and parentUuid.

import (
	"encoding/json"
	"time"

	"github.com/agentledger/ledger/compact"
)

// qwenLine is a Qwen Code record.
type qwenLine struct {
	UUID              string `json:"uuid"`
	ParentUUID        string `json:"parentUuid"`
	SessionID         string `json:"sessionId"`
	Timestamp         string `json:"timestamp"`
	Type              string `json:"type"`
	Subtype           string `json:"subtype"`
	Cwd               string `json:"cwd"`
	GitBranch         string `json:"gitBranch"`
	Model             string `json:"model"`
	ContextWindowSize int64  `json:"contextWindowSize"`
	Message           *struct {
		Role  string          `json:"role"`
		Parts json.RawMessage `json:"parts"`
	} `json:"message"`
	UsageMetadata  *genaiUsage `json:"usageMetadata"`
	ToolCallResult *struct {
		Status string `json:"status"`
	} `json:"toolCallResult"`
	SystemPayload json.RawMessage `json:"systemPayload"`
}

// qwenCompression is a chat_compression record's payload.
type qwenCompression struct {
	Info *struct {
		OriginalTokenCount int64  `json:"originalTokenCount"`
		NewTokenCount      int64  `json:"newTokenCount"`
		CompressionStatus  *int   `json:"compressionStatus"`
		TriggerReason      string `json:"triggerReason"`
	} `json:"info"`
	CompressedHistory []struct {
		Role  string          `json:"role"`
		Parts json.RawMessage `json:"parts"`
	} `json:"compressedHistory"`
}

// qwenCompressed is the compressionStatus of a compression that was
// applied (the service's COMPRESSED).
const qwenCompressed = 1

type qwenParser struct {
	st *State
	fn func(Record) error
}

func newQwenParser(st *State, fn func(Record) error) *qwenParser {
	return &qwenParser{st: st, fn: fn}
}

func (p *qwenParser) finish() error { return nil }

func (p *qwenParser) line(data []byte, lineNo int, off int64) (string, error) {
	var l qwenLine
	if err := json.Unmarshal(data, &l); err != nil {
		return jsonReason(FormatQwen, data, err), nil
	}
	if l.Type == "" || l.UUID == "" || l.SessionID == "" {
		return "not a qwen record", nil
	}
	p.st.SessionID = l.SessionID
	at := parseTime(l.Timestamp)
	rec := Record{Line: lineNo, Offset: off}
	info := &SessionInfo{ID: l.SessionID, Project: l.Cwd, GitBranch: l.GitBranch, Time: at}
	switch l.Type {
	case "user", "assistant", "tool_result":
		if l.Message == nil {
			return "malformed qwen record (message)", nil
		}
		parts, ok := decodeParts(l.Message.Parts)
		if !ok {
			return "malformed qwen record (message.parts)", nil
		}
		blocks, _ := partBlocks(parts)
		m := &compact.Message{UUID: l.UUID, ParentUUID: l.ParentUUID, SessionID: l.SessionID, Time: at, Blocks: blocks}
		switch l.Type {
		case "user":
			m.Role = compact.RoleUser
		case "assistant":
			m.Role, m.Model = compact.RoleAssistant, l.Model
			if l.UsageMetadata != nil {
				m.Usage = l.UsageMetadata.usage()
			}
			info.Model, info.ContextWindow = l.Model, max(l.ContextWindowSize, 0)
		case "tool_result":
			m.Role = compact.RoleTool
			if l.ToolCallResult != nil && (l.ToolCallResult.Status == "error" || l.ToolCallResult.Status == "cancelled") {
				for i := range m.Blocks {
					if m.Blocks[i].Kind == compact.BlockToolResult {
						m.Blocks[i].IsError = true
					}
				}
			}
		}
		p.st.LastUUID = m.UUID
		rec.Message, rec.Session = m, info
	case "system":
		switch l.Subtype {
		case "chat_compression":
			b, reason := p.boundary(l, at)
			if b == nil {
				return reason, nil
			}
			rec.Boundary, rec.Session = b, info
		case "custom_title":
			var t struct {
				CustomTitle string `json:"customTitle"`
			}
			if json.Unmarshal(l.SystemPayload, &t) != nil {
				return "malformed qwen record (systemPayload)", nil
			}
			info.Title = t.CustomTitle
			rec.Session = info
		case "session_model":
			info.Model = qwenModel(l.SystemPayload)
			rec.Session = info
		default:
			return "", nil
		}
	default:
		return "", nil
	}
	return "", p.fn(rec)
}

// boundary is the compaction of a chat_compression record, or nil and
// why not (a compression that was not applied is none).
func (p *qwenParser) boundary(l qwenLine, at time.Time) (*compact.Boundary, string) {
	var c qwenCompression
	if json.Unmarshal(l.SystemPayload, &c) != nil {
		return nil, "malformed qwen record (systemPayload)"
	}
	if c.Info != nil && c.Info.CompressionStatus != nil && *c.Info.CompressionStatus != qwenCompressed {
		return nil, ""
	}
	trigger := "auto"
	var pre, post int64
	if c.Info != nil {
		if c.Info.TriggerReason == "manual" {
			trigger = "manual"
		}
		pre, post = max(c.Info.OriginalTokenCount, 0), max(c.Info.NewTokenCount, 0)
	}
	b := compact.NewBoundary(l.SessionID, l.UUID, trigger, at, pre, post)
	b.LogicalParentUUID = p.st.LastUUID
	for _, h := range c.CompressedHistory {
		if h.Role != "user" {
			continue
		}
		if parts, ok := decodeParts(h.Parts); ok {
			b.Summary = snapshotText(textOf(parts))
		}
		break
	}
	p.st.LastUUID = l.UUID
	return &b, ""
}

// qwenModel reads a session_model payload: the model's name, or an object
// that holds it.
func qwenModel(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var m struct {
		Model   string `json:"model"`
		ModelID string `json:"modelId"`
	}
	if json.Unmarshal(raw, &m) == nil {
		return cmpOrString(m.Model, m.ModelID)
	}
	return ""
}

// cmpOrString is a when it is not "", else b.
func cmpOrString(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
