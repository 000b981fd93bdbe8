package handoff

// A small transcript decoder for tests only: package transcript is the real
// one, written at the same time as this package, so the corpus test cannot
// lean on it yet. It reads just what Extract needs.

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/compact"
)

// session is a decoded transcript with the facts the caller of Extract
// would know from elsewhere (the ledger's session row).
type session struct {
	id, project, branch string
	compactions         int
	// summary is the text of the transcript's own compaction summary.
	summary string
	msgs    []compact.Message
}

// eachLine calls fn with every line of path, however long.
func eachLine(t *testing.T, path string, fn func(line []byte)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			fn(line)
		}
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Name      string          `json:"name"`
	ID        string          `json:"id"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

type claudeLine struct {
	Type             string    `json:"type"`
	Subtype          string    `json:"subtype"`
	UUID             string    `json:"uuid"`
	ParentUUID       string    `json:"parentUuid"`
	SessionID        string    `json:"sessionId"`
	Timestamp        time.Time `json:"timestamp"`
	IsMeta           bool      `json:"isMeta"`
	IsCompactSummary bool      `json:"isCompactSummary"`
	IsSidechain      bool      `json:"isSidechain"`
	AgentID          string    `json:"agentId"`
	Cwd              string    `json:"cwd"`
	GitBranch        string    `json:"gitBranch"`
	Message          *struct {
		Role    string          `json:"role"`
		Model   string          `json:"model"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// flatten turns a tool_result's content (a string or a list of blocks)
// into text.
func flatten(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []claudeBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func decodeClaude(t *testing.T, path string) session {
	t.Helper()
	var s session
	eachLine(t, path, func(raw []byte) {
		var l claudeLine
		if json.Unmarshal(raw, &l) != nil {
			return
		}
		if l.Cwd != "" && s.project == "" {
			s.project, s.branch, s.id = l.Cwd, l.GitBranch, l.SessionID
		}
		if l.Type == "system" && l.Subtype == "compact_boundary" {
			s.compactions++
		}
		if (l.Type != "user" && l.Type != "assistant") || l.Message == nil {
			return
		}
		m := compact.Message{UUID: l.UUID, ParentUUID: l.ParentUUID, SessionID: l.SessionID,
			Role: compact.Role(l.Type), Time: l.Timestamp, Model: l.Message.Model, Meta: l.IsMeta,
			CompactSummary: l.IsCompactSummary, Sidechain: l.IsSidechain, AgentID: l.AgentID}
		var text string
		if json.Unmarshal(l.Message.Content, &text) == nil {
			m.Blocks = []compact.Block{{Kind: compact.BlockText, Text: text}}
		} else {
			var blocks []claudeBlock
			if json.Unmarshal(l.Message.Content, &blocks) != nil {
				return
			}
			for _, b := range blocks {
				switch b.Type {
				case "text":
					m.Blocks = append(m.Blocks, compact.Block{Kind: compact.BlockText, Text: b.Text})
				case "thinking":
					m.Blocks = append(m.Blocks, compact.Block{Kind: compact.BlockThinking, Text: b.Thinking})
				case "tool_use":
					m.Blocks = append(m.Blocks, compact.Block{Kind: compact.BlockToolUse, ToolName: b.Name,
						ToolID: b.ID, Input: string(b.Input)})
				case "tool_result":
					m.Blocks = append(m.Blocks, compact.Block{Kind: compact.BlockToolResult, ToolID: b.ToolUseID,
						Text: flatten(b.Content), IsError: b.IsError})
				case "image":
					m.Blocks = append(m.Blocks, compact.Block{Kind: compact.BlockImage})
				}
			}
		}
		if l.IsCompactSummary {
			s.summary = m.Text()
		}
		s.msgs = append(s.msgs, m)
	})
	return s
}

type codexLine struct {
	Timestamp time.Time `json:"timestamp"`
	Type      string    `json:"type"`
	Payload   struct {
		Type      string                  `json:"type"`
		ID        string                  `json:"id"`
		Cwd       string                  `json:"cwd"`
		Git       struct{ Branch string } `json:"git"`
		Role      string                  `json:"role"`
		Content   []claudeBlock           `json:"content"`
		Name      string                  `json:"name"`
		Arguments string                  `json:"arguments"`
		Input     string                  `json:"input"`
		CallID    string                  `json:"call_id"`
		Output    json.RawMessage         `json:"output"`
		Message   string                  `json:"message"`
	} `json:"payload"`
}

// redacted matches the placeholders the corpus's author put in place of
// free text; the same text redacted in two records has the same len and sha.
var redacted = regexp.MustCompile(`^\[REDACTED_\w+ (len=\d+ sha=\w+)\]$`)

func typedKey(s string) string {
	s = strings.TrimSpace(s)
	if m := redacted.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return s
}

// decodeCodex reads a Codex rollout. A user response_item is something the
// user typed only when an event_msg user_message repeats it; the others
// (AGENTS.md, environment context) are marked Meta.
func decodeCodex(t *testing.T, path string) session {
	t.Helper()
	var s session
	typed := map[string]bool{}
	var userIdx []int
	eachLine(t, path, func(raw []byte) {
		var l codexLine
		if json.Unmarshal(raw, &l) != nil {
			return
		}
		p := l.Payload
		m := compact.Message{SessionID: s.id, Time: l.Timestamp}
		switch l.Type {
		case "session_meta":
			s.id, s.project, s.branch = p.ID, p.Cwd, p.Git.Branch
			return
		case "compacted":
			s.compactions++
			return
		case "event_msg":
			if p.Type == "user_message" {
				typed[typedKey(p.Message)] = true
			}
			return
		case "response_item":
		default:
			return
		}
		switch p.Type {
		case "message":
			switch p.Role {
			case "user":
				m.Role = compact.RoleUser
				userIdx = append(userIdx, len(s.msgs))
			case "assistant":
				m.Role = compact.RoleAssistant
			default:
				m.Role = compact.RoleSystem
			}
			for _, c := range p.Content {
				m.Blocks = append(m.Blocks, compact.Block{Kind: compact.BlockText, Text: c.Text})
			}
		case "function_call":
			m.Role = compact.RoleAssistant
			m.Blocks = []compact.Block{{Kind: compact.BlockToolUse, ToolName: p.Name, ToolID: p.CallID, Input: p.Arguments}}
		case "custom_tool_call":
			m.Role = compact.RoleAssistant
			m.Blocks = []compact.Block{{Kind: compact.BlockToolUse, ToolName: p.Name, ToolID: p.CallID, Input: p.Input}}
		case "function_call_output", "custom_tool_call_output":
			m.Role = compact.RoleTool
			var out string
			if json.Unmarshal(p.Output, &out) != nil {
				var obj struct {
					Content string `json:"content"`
				}
				_ = json.Unmarshal(p.Output, &obj)
				out = obj.Content
			}
			m.Blocks = []compact.Block{{Kind: compact.BlockToolResult, ToolID: p.CallID, Text: out}}
		default:
			return
		}
		s.msgs = append(s.msgs, m)
	})
	for _, i := range userIdx {
		s.msgs[i].Meta = !typed[typedKey(s.msgs[i].Text())]
	}
	return s
}
