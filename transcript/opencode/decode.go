package opencode

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/transcript"
)

// messageData is the JSON of a message row's data column.
type messageData struct {
	Role string `json:"role"`
	Time struct {
		Created   int64 `json:"created"`
		Completed int64 `json:"completed"`
	} `json:"time"`
	Error   json.RawMessage `json:"error"`
	ModelID string          `json:"modelID"`
	Model   *struct {
		ModelID string `json:"modelID"`
	} `json:"model"` // a user message's
	Mode    string          `json:"mode"`
	Summary json.RawMessage `json:"summary"` // true on a compaction's summary; an object on user messages
	Tokens  *tokens         `json:"tokens"`
	Path    *struct {
		Cwd string `json:"cwd"`
	} `json:"path"`
}

// tokens is a message's or a step's token count. OpenCode's input leaves
// out the cache reads and writes, and its output the reasoning.
type tokens struct {
	Input     int64 `json:"input"`
	Output    int64 `json:"output"`
	Reasoning int64 `json:"reasoning"`
	Cache     struct {
		Read  int64 `json:"read"`
		Write int64 `json:"write"`
	} `json:"cache"`
}

func (t *tokens) usage() *compact.Usage {
	if t == nil || t.Input+t.Output+t.Reasoning+t.Cache.Read+t.Cache.Write == 0 {
		return nil
	}
	return &compact.Usage{InputTokens: t.Input, CacheReadInputTokens: t.Cache.Read,
		CacheCreationInputTokens: t.Cache.Write, OutputTokens: t.Output + t.Reasoning}
}

// partData is the JSON of a part row's data column, every type's fields.
type partData struct {
	Type string `json:"type"`

	// text, reasoning
	Text      string `json:"text"`
	Synthetic bool   `json:"synthetic"`
	Ignored   bool   `json:"ignored"`

	// tool
	Tool   string `json:"tool"`
	CallID string `json:"callID"`
	State  *struct {
		Status string          `json:"status"`
		Input  json.RawMessage `json:"input"`
		Output json.RawMessage `json:"output"`
		Error  json.RawMessage `json:"error"`
	} `json:"state"`

	// file
	Filename string `json:"filename"`
	Mime     string `json:"mime"`

	// compaction
	Auto bool `json:"auto"`

	// subtask
	Description string `json:"description"`
	Prompt      string `json:"prompt"`
	Agent       string `json:"agent"`
}

// Row is a message row with its parts, as read from the database.
type Row struct {
	ID      string
	Created int64 // ms
	Data    []byte
	Parts   []PartRow
	tooBig  bool // Data over maxValue, not read
}

// PartRow is a part row.
type PartRow struct {
	ID      string
	Created int64 // ms
	Data    []byte
}

// Settled tells whether a message is there to stay as read: an assistant
// message once complete (or failed), a user message once it has parts.
// Until then its parts are still being written (a text streams into its
// part, a tool part goes from pending to running to completed).
func Settled(r Row) bool {
	var m messageData
	if json.Unmarshal(r.Data, &m) != nil {
		return true // bad input never settles better: read it as it is
	}
	switch m.Role {
	case "assistant":
		return m.Time.Completed > 0 || isSet(m.Error)
	case "user":
		return len(r.Parts) > 0
	}
	return true
}

// isSet tells whether a JSON value is there and not null.
func isSet(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// decoder turns settled message rows of one session into records, in
// order, carrying the chain of uuids and the context in use in its cursor.
type decoder struct {
	session string // the ledger session the records belong to
	agentID string // a subagent's session id, when the session is one
	cur     *Cursor
	skip    func(reason string)
	// response is the message being decoded: the API response its parts'
	// usage belongs to, counted once.
	response string
}

// decode appends to recs the records of one message row, reads as the
// transcript readers do: bad JSON in a part skips that part (with its
// reason), bad JSON in the message skips the message.
func (d *decoder) decode(r Row, recs []transcript.Record) []transcript.Record {
	var m messageData
	if err := json.Unmarshal(r.Data, &m); err != nil {
		d.skip(fmt.Sprintf("message %s: %s", r.ID, reason(err)))
		return recs
	}
	d.response = r.ID
	at := msTime(r.Created)
	if m.Time.Created > 0 {
		at = msTime(m.Time.Created)
	}
	model := m.ModelID
	if model == "" && m.Model != nil {
		model = m.Model.ModelID
	}
	var usage *compact.Usage
	summary := m.Role == "assistant" && string(m.Summary) == "true"
	if m.Role == "assistant" && !summary {
		// The compaction's own call says nothing of the context in use.
		usage = m.Tokens.usage()
	}
	if m.Role == "assistant" && model != "" && d.agentID == "" {
		recs = append(recs, transcript.Record{Session: &transcript.SessionInfo{ID: d.session, Model: model}})
	}
	if summary {
		// The compaction's summary: one message, its text the parts'.
		var texts []string
		for _, p := range r.Parts {
			var pd partData
			if json.Unmarshal(p.Data, &pd) == nil && pd.Type == "text" && !pd.Synthetic {
				texts = append(texts, pd.Text)
			}
		}
		msg := d.message(r.ID, compact.RoleAssistant, at, compact.Block{Kind: compact.BlockText, Text: strings.Join(texts, "\n")})
		msg.CompactSummary, msg.Model = true, model
		return append(recs, transcript.Record{Message: msg})
	}
	for _, p := range r.Parts {
		var pd partData
		if err := json.Unmarshal(p.Data, &pd); err != nil {
			d.skip(fmt.Sprintf("part %s: %s", p.ID, reason(err)))
			continue
		}
		pat := at
		if p.Created > 0 {
			pat = msTime(p.Created)
		}
		recs = d.part(recs, m, p.ID, pd, pat, model, usage)
	}
	if m.Role == "assistant" && m.Tokens != nil && usage != nil {
		d.cur.Context = usage.ContextTokens()
	}
	return recs
}

// part appends the records of one part.
func (d *decoder) part(recs []transcript.Record, m messageData, id string, pd partData, at time.Time, model string, usage *compact.Usage) []transcript.Record {
	role := compact.RoleUser
	if m.Role == "assistant" {
		role = compact.RoleAssistant
	}
	var msg *compact.Message
	switch pd.Type {
	case "text":
		msg = d.message(id, role, at, compact.Block{Kind: compact.BlockText, Text: pd.Text})
		msg.Meta = pd.Synthetic || pd.Ignored
	case "reasoning":
		msg = d.message(id, compact.RoleAssistant, at, compact.Block{Kind: compact.BlockThinking, Text: pd.Text})
	case "file":
		name := pd.Filename
		if name == "" {
			name = pd.Mime
		}
		kind := compact.BlockText
		if strings.HasPrefix(pd.Mime, "image/") {
			kind = compact.BlockImage
		}
		msg = d.message(id, role, at, compact.Block{Kind: kind, Text: "[file: " + name + "]"})
	case "subtask":
		msg = d.message(id, role, at, compact.Block{Kind: compact.BlockText, Text: "[subtask " + pd.Agent + ": " + pd.Description + "]\n" + pd.Prompt})
		msg.Meta = true
	case "compaction":
		trigger := "manual"
		if pd.Auto {
			trigger = "auto"
		}
		b := compact.NewBoundary(d.session, id, trigger, at, d.cur.Context, 0)
		b.LogicalParentUUID = d.cur.Last
		d.cur.Last = id
		return append(recs, transcript.Record{Boundary: &b})
	case "tool":
		if pd.State == nil {
			d.skip("part " + id + ": a tool part without state")
			return recs
		}
		in := string(pd.State.Input)
		if !isSet(pd.State.Input) {
			in = "{}"
		}
		call := d.message(id, compact.RoleAssistant, at, compact.Block{Kind: compact.BlockToolUse, ToolName: pd.Tool, ToolID: pd.CallID, Input: in})
		call.Model, call.Usage = model, usage
		if usage != nil {
			call.ResponseID = d.response
		}
		recs = append(recs, transcript.Record{Message: call})
		switch pd.State.Status {
		case "completed", "error":
		default:
			return recs // never finished: the call alone
		}
		text, failed := jsonText(pd.State.Output), pd.State.Status == "error"
		if failed {
			text = jsonText(pd.State.Error)
		}
		res := d.message(id+"/result", compact.RoleTool, at, compact.Block{Kind: compact.BlockToolResult, ToolID: pd.CallID, Text: text, IsError: failed})
		return append(recs, transcript.Record{Message: res})
	default:
		// step-start, step-finish (the message holds their tokens), patch,
		// snapshot, agent, retry: nothing a reader of the session needs.
		return recs
	}
	if role == compact.RoleAssistant {
		msg.Model, msg.Usage = model, usage
		if usage != nil {
			msg.ResponseID = d.response
		}
	}
	return append(recs, transcript.Record{Message: msg})
}

// message makes a message of the session, chained to the previous one.
func (d *decoder) message(uuid string, role compact.Role, at time.Time, b compact.Block) *compact.Message {
	m := &compact.Message{UUID: uuid, ParentUUID: d.cur.Last, SessionID: d.session, Role: role, Time: at,
		Blocks: []compact.Block{b}}
	if d.agentID != "" {
		m.Sidechain, m.AgentID = true, d.agentID
	}
	d.cur.Last = uuid
	return m
}

// jsonText is a JSON string's text, or any other value as written.
func jsonText(raw json.RawMessage) string {
	if !isSet(raw) {
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

// msTime is a Unix time in milliseconds; 0 (or nonsense) is the zero time.
func msTime(ms int64) time.Time {
	if ms <= 0 || ms > 1e15 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// reason names what is wrong with a JSON column.
func reason(err error) string {
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) && typ.Field != "" {
		return "malformed data (" + typ.Field + ")"
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return "invalid json"
	}
	return "not an object"
}
