package transcript

// Claude Code writes one JSON object per line to
// ~/.claude/projects/<project>/<session>.jsonl; subagents write sidechain
// files that carry their parent's sessionId, isSidechain:true and agentId.
// Every line type seen in real transcripts (Claude Code 1.0.98 to 2.1.152)
// is used or skipped on purpose:
//
//	type / subtype                 what the reader does
//	-----------------------------  ---------------------------------------------
//	user, assistant                a Message (text, thinking, tool_use,
//	                               tool_result, image blocks); an assistant line
//	                               also gives Model, ResponseID and Usage, and
//	                               Session{ContextWindow} 1M when its
//	                               requestedModel ends in "[1m]" (2.1.3x); a
//	                               user line the user did not type is Meta: by
//	                               its origin.kind, promptSource, turnOrigin,
//	                               textNotTyped, handedOff or toolUseResult where
//	                               the build records them, else by its text's
//	                               prefix (command wrappers, notifications)
//	user + isCompactSummary        the summary a compaction left: a Message with
//	                               CompactSummary set, parented to its boundary
//	system compact_boundary        a Boundary (compactMetadata trigger,
//	                               preTokens, postTokens; the preservedSegment
//	                               a partial compaction kept, with the count of
//	                               preservedMessages; logicalParentUuid, or the
//	                               preserved tail when there is one: 2.1.3x may
//	                               name a line it never wrote)
//	system local_command           a Meta system Message: a slash command the
//	                               user ran (/model, /mcp) and its stdout; later
//	                               lines are chained to it
//	system (other subtypes)        skipped: stop_hook_summary, turn_duration,
//	                               api_error, informational are telemetry
//	summary, ai-title              a session title (not a compaction summary):
//	                               Session{Title} (summary, aiTitle)
//	custom-title                   the user's title (/rename): Session{Title}
//	                               from customTitle; ai-title and summary
//	                               lines after it leave it
//	progress                       skipped: hook, bash and agent progress is
//	                               streaming output already in the tool_result
//	file-history-snapshot          skipped: file backups for undo, no content
//	queue-operation                prompts typed while the agent ran. enqueue
//	                               holds the text; dequeue means it arrives
//	                               later as a user line; remove means it was
//	                               handed to the running turn and is written
//	                               nowhere else (up to 2.1.x builds that
//	                               persist attachments): a user Message then;
//	                               popAll gave it back to the input box
//	attachment queued_command      the same prompt, where attachments are
//	                               persisted: a user Message, once
//	attachment (other types)       skipped, links of the uuid chain: hook
//	                               output (hook_success,
//	                               hook_additional_context: ledger's own
//	                               context among them), reminders, files,
//	                               tool and skill listings, prompt_snapshot
//	last-prompt                    skipped: a copy of the last user prompt
//	cost-state                     Session{Cost}: the session's cost and the
//	                               lines its edits added and removed so far
//	                               (cumulative across resumes: the latest holds)
//	api-request                    Session{ContextWindow} 1M when its params
//	                               carry the 1M beta; nothing else
//	api-request-shape,             skipped: the request's shape and message
//	  api-request-blob, tools-used,  blobs (kept for Claude Code's own resume),
//	  atis-latch, mode               the tools used so far, internal latches,
//	                               the permission mode
//	any other type                 skipped: newer Claude Code line kinds
//	no type, not an object         bad input, counted in Result.Skipped
//
// Lines skipped on purpose that have a uuid (progress, stop_hook_summary,
// turn_duration, attachments) are still links of the uuid chain: Claude
// Code parents the next message to them. The reader remembers each one's
// nearest used ancestor and parents messages (and a boundary's logical
// parent) to that, so the chain the store sees has no gaps. Every line's sessionId, cwd and
// gitBranch feed the session facts the reader emits when they change.

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/agentledger/ledger/compact"
)

// claudeLine is the part of a Claude Code line the reader uses. Fields not
// listed (toolUseResult, snapshot, data, hookInfos, ...) are validated but
// not decoded.
type claudeLine struct {
	Type              string
	Subtype           string
	UUID              string
	ParentUUID        string
	LogicalParentUUID string
	SessionID         string
	Timestamp         string
	Cwd               string
	GitBranch         string
	IsMeta            bool
	IsSidechain       bool
	IsCompactSummary  bool
	AgentID           string
	RequestID         string
	Message           []byte // raw: decoded only for user and assistant lines
	Content           []byte // raw: system lines
	Summary           string // summary lines
	CustomTitle       string // custom-title lines (the user named the session)
	AITitle           string // ai-title lines (Claude Code named it)
	CompactMetadata   []byte // raw
	Operation         string // queue-operation lines
	Attachment        []byte // raw: attachment lines
	// Who wrote a user line, on builds that record it: origin.kind
	// ("human", "task-notification", "coordinator", ...), promptSource
	// ("typed", "queued", "sdk", "system", ...), turnOrigin ("human",
	// "sdk", "unknown"); textNotTyped and handedOff mark text the user did
	// not type; toolUseResult marks a tool's result.
	Origin, PromptSource, TurnOrigin string
	NotTyped, ToolUseResult          bool
	// RequestedModel is the model an assistant line was asked of, as the
	// user named it ("claude-sonnet-4-5[1m]"); read leniently.
	RequestedModel string
	Params         []byte // raw: api-request lines
	// Cost fields of cost-state lines, raw.
	TotalCostUSD, TotalLinesAdded, TotalLinesRemoved []byte
	// Payload marks a Codex line, which is not a Claude record.
	Payload bool
	// Bad names the first field of an unexpected JSON type.
	Bad string
}

// decodeClaudeLine reads data into l, or returns why it cannot ("" when it
// could).
func decodeClaudeLine(data []byte, l *claudeLine) string {
	str := func(name string, v []byte, dst *string) {
		if s, ok := asString(v); ok {
			*dst = s
		} else if l.Bad == "" {
			l.Bad = name
		}
	}
	boolean := func(name string, v []byte, dst *bool) {
		if b, ok := asBool(v); ok {
			*dst = b
		} else if l.Bad == "" {
			l.Bad = name
		}
	}
	kind := eachField(data, func(k, v []byte) {
		switch key(k) {
		case "type":
			str("type", v, &l.Type)
		case "subtype":
			str("subtype", v, &l.Subtype)
		case "uuid":
			str("uuid", v, &l.UUID)
		case "parentUuid":
			str("parentUuid", v, &l.ParentUUID)
		case "logicalParentUuid":
			str("logicalParentUuid", v, &l.LogicalParentUUID)
		case "sessionId":
			str("sessionId", v, &l.SessionID)
		case "timestamp":
			// Of another type than a string, the time is unknown; the
			// record is still read.
			l.Timestamp, _ = asString(v)
		case "cwd":
			str("cwd", v, &l.Cwd)
		case "gitBranch":
			str("gitBranch", v, &l.GitBranch)
		case "agentId":
			str("agentId", v, &l.AgentID)
		case "requestId":
			str("requestId", v, &l.RequestID)
		case "summary":
			str("summary", v, &l.Summary)
		case "customTitle":
			str("customTitle", v, &l.CustomTitle)
		case "aiTitle":
			str("aiTitle", v, &l.AITitle)
		case "isMeta":
			boolean("isMeta", v, &l.IsMeta)
		case "isSidechain":
			boolean("isSidechain", v, &l.IsSidechain)
		case "isCompactSummary":
			boolean("isCompactSummary", v, &l.IsCompactSummary)
		case "message":
			l.Message = v
		case "content":
			l.Content = v
		case "compactMetadata":
			l.CompactMetadata = v
		case "operation":
			str("operation", v, &l.Operation)
		case "attachment":
			l.Attachment = v
		case "origin":
			fieldsOf(v, func(k, v []byte) {
				if key(k) == "kind" {
					l.Origin, _ = asString(v)
				}
			})
		case "promptSource":
			l.PromptSource, _ = asString(v)
		case "turnOrigin":
			l.TurnOrigin, _ = asString(v)
		case "textNotTyped", "handedOff":
			if b, _ := asBool(v); b {
				l.NotTyped = true
			}
		case "toolUseResult":
			l.ToolUseResult = string(v) != "null"
		case "requestedModel":
			l.RequestedModel, _ = asString(v)
		case "params":
			l.Params = v
		case "totalCostUSD":
			l.TotalCostUSD = v
		case "totalLinesAdded":
			l.TotalLinesAdded = v
		case "totalLinesRemoved":
			l.TotalLinesRemoved = v
		case "payload":
			l.Payload = string(v) != "null"
		}
	})
	switch kind {
	case scanInvalid:
		return "invalid json"
	case scanNotObject:
		return "not a claude record"
	}
	return ""
}

// claudeMessage is the Anthropic API message a user or assistant line
// holds.
type claudeMessage struct {
	ID      string
	Role    string
	Model   string
	Content []byte // raw: a string or an array of blocks
	Usage   *compact.Usage
}

// decodeClaudeMessage reads the message object v; ok is false when v is
// not one or has fields of unexpected types.
func decodeClaudeMessage(v []byte) (m claudeMessage, ok bool) {
	ok = true
	str := func(v []byte, dst *string) {
		if s, good := asString(v); good {
			*dst = s
		} else {
			ok = false
		}
	}
	isObj := fieldsOf(v, func(k, v []byte) {
		switch key(k) {
		case "id":
			str(v, &m.ID)
		case "role":
			str(v, &m.Role)
		case "model":
			str(v, &m.Model)
		case "content":
			m.Content = v
		case "usage":
			if string(v) == "null" {
				return
			}
			u, good := decodeUsage(v)
			m.Usage = u
			ok = ok && good
		}
	})
	return m, ok && isObj
}

// decodeUsage reads an Anthropic usage object.
func decodeUsage(v []byte) (*compact.Usage, bool) {
	var u compact.Usage
	ok := true
	num := func(v []byte, dst *int64) {
		if n, good := asInt(v); good {
			*dst = n
		} else {
			ok = false
		}
	}
	isObj := fieldsOf(v, func(k, v []byte) {
		switch key(k) {
		case "input_tokens":
			num(v, &u.InputTokens)
		case "cache_creation_input_tokens":
			num(v, &u.CacheCreationInputTokens)
		case "cache_read_input_tokens":
			num(v, &u.CacheReadInputTokens)
		case "output_tokens":
			num(v, &u.OutputTokens)
		}
	})
	return &u, ok && isObj
}

// claudeMetaPrefixes start user text that Claude Code injected rather than
// the user typed: slash-command wrappers and their output, bash-mode
// wrappers, hook output, reminders, notifications, interruption markers.
var claudeMetaPrefixes = []string{
	"<local-command-caveat>",
	"<command-name>",
	"<command-message>",
	"<command-args>",
	"<local-command-stdout>",
	"<local-command-stderr>",
	"<bash-input>",
	"<bash-stdout>",
	"<bash-stderr>",
	"<system-reminder>",
	"<user-prompt-submit-hook>",
	"<task-notification>",
	"<bash-notification>",
	"[Request interrupted by user",
	"Unknown slash command:",
}

// claudeUsed reports whether the reader uses lines of type t.
func claudeUsed(t string) bool {
	switch t {
	case "user", "assistant", "system", "summary", "custom-title", "ai-title":
		return true
	}
	return false
}

// claudeParser reads Claude Code lines for one Read.
type claudeParser struct {
	st *State
	fn func(Record) error
	// emitted is the session identity last emitted in this read.
	emitted SessionInfo
	// title is a summary line's title held until a line names the
	// session; titleLine and titleOff locate that summary line.
	title     string
	titleLine int
	titleOff  int64
	hasTitle  bool
}

func newClaudeParser(st *State, fn func(Record) error) *claudeParser {
	return &claudeParser{st: st, fn: fn}
}

func (p *claudeParser) line(data []byte, lineNo int, off int64) (string, error) {
	var l claudeLine
	if reason := decodeClaudeLine(data, &l); reason != "" {
		return reason, nil
	}
	if l.Type == "" {
		return "claude record without type", nil
	}
	if l.Payload {
		return "not a claude record (codex line?)", nil
	}
	if l.Bad != "" {
		if claudeUsed(l.Type) {
			return "malformed claude record (" + l.Bad + ")", nil
		}
		// A line kind the reader skips anyway, with a field shaped unlike
		// the ones it knows: not bad input, and still a link of the chain.
		p.skipLink(&l)
		return "", nil
	}

	// Decode a message whole before anything changes: a bad one is
	// dropped without a trace.
	var msg claudeMessage
	var blocks []compact.Block
	if l.Type == "user" || l.Type == "assistant" {
		if l.Message == nil || string(l.Message) == "null" {
			return "claude " + l.Type + " line without message", nil
		}
		var ok bool
		if msg, ok = decodeClaudeMessage(l.Message); !ok {
			return "malformed claude record (message)", nil
		}
		if blocks, ok = claudeContent(msg.Content); !ok {
			return "malformed claude record (message.content)", nil
		}
	}

	rec := Record{Line: lineNo, Offset: off}
	if l.SessionID != "" {
		p.st.SessionID = l.SessionID
	}
	rec.Session = p.session(&l)

	switch l.Type {
	case "user", "assistant":
		rec.Message = p.message(&l, &msg, blocks, data)
		if strings.HasSuffix(strings.ToLower(l.RequestedModel), "[1m]") {
			p.window(&rec, compact.Context1M)
		}
	case "api-request":
		p.apiRequest(&rec, &l)
	case "cost-state":
		if c, ok := claudeCost(&l); ok {
			if rec.Session == nil {
				rec.Session = &SessionInfo{ID: p.st.SessionID}
			}
			rec.Session.Cost = &c
		}
	case "system":
		switch l.Subtype {
		case "compact_boundary":
			rec.Boundary = p.boundary(&l, data)
		case "local_command":
			rec.Message = p.localCommand(&l, data)
		default:
			p.skipLink(&l)
		}
	case "queue-operation":
		rec.Message = p.queueOperation(&l, data)
	case "attachment":
		// Most attachments are Claude Code's own context (hook output,
		// files, reminders, tool listings), not conversation, yet links of
		// the chain: a compact_boundary's logicalParentUuid often names
		// the hook_additional_context that followed the last message.
		if rec.Message = p.attachment(&l, data); rec.Message == nil {
			p.skipLink(&l)
		}
	case "summary", "ai-title", "custom-title":
		title := l.Summary
		switch l.Type {
		case "custom-title":
			// The user's name for the session: Claude Code shows it over
			// its own, and re-writes its own later.
			title, p.st.CustomTitle = l.CustomTitle, true
		case "ai-title":
			if title = l.AITitle; p.st.CustomTitle {
				title = ""
			}
		case "summary":
			if p.st.CustomTitle {
				title = ""
			}
		}
		if title == "" {
			return "", nil
		}
		if p.st.SessionID == "" {
			// No session yet: hold the title for the first line that names one.
			p.title, p.titleLine, p.titleOff, p.hasTitle = title, lineNo, off, true
			return "", nil
		}
		if rec.Session == nil {
			rec.Session = &SessionInfo{ID: p.st.SessionID}
		}
		rec.Session.Title = title
	default:
		p.skipLink(&l)
	}
	if rec.Message == nil && rec.Boundary == nil && rec.Session == nil {
		return "", nil
	}
	return "", p.fn(rec)
}

// window states the session's window in rec.
func (p *claudeParser) window(rec *Record, tokens int64) {
	if rec.Session == nil {
		rec.Session = &SessionInfo{ID: p.st.SessionID}
	}
	rec.Session.ContextWindow = tokens
}

// apiRequest reads the window an api-request line states: its params name
// the model and the betas the request carried, and the 1M beta opens the
// window of the models that take it.
func (p *claudeParser) apiRequest(rec *Record, l *claudeLine) {
	var model string
	var betas []string
	fieldsOf(l.Params, func(k, v []byte) {
		switch key(k) {
		case "model":
			model, _ = asString(v)
		case "betas":
			elemsOf(v, func(v []byte) {
				if b, ok := asString(v); ok {
					betas = append(betas, b)
				}
			})
		}
	})
	if w := compact.ContextLimit(model, betas); w.FromAgent {
		p.window(rec, w.Tokens)
	}
}

// claudeCost reads a cost-state line; ok is false when its cost is not a
// number (Claude Code itself drops such a record).
func claudeCost(l *claudeLine) (compact.Cost, bool) {
	var c compact.Cost
	usd, err := strconv.ParseFloat(string(l.TotalCostUSD), 64)
	if err != nil || usd < 0 {
		return c, false
	}
	c.USD = usd
	c.LinesAdded, _ = asInt(l.TotalLinesAdded)
	c.LinesRemoved, _ = asInt(l.TotalLinesRemoved)
	return c, true
}

// session returns the session facts of l when they differ from what this
// read last emitted, with a held title once a session id is known.
func (p *claudeParser) session(l *claudeLine) *SessionInfo {
	changed := (l.SessionID != "" && l.SessionID != p.emitted.ID) ||
		(l.Cwd != "" && l.Cwd != p.emitted.Project) ||
		(l.GitBranch != "" && l.GitBranch != p.emitted.GitBranch)
	titled := p.hasTitle && p.st.SessionID != ""
	if !changed && !titled {
		return nil
	}
	if l.SessionID != "" {
		p.emitted.ID = l.SessionID
	}
	if l.Cwd != "" {
		p.emitted.Project = l.Cwd
	}
	if l.GitBranch != "" {
		p.emitted.GitBranch = l.GitBranch
	}
	info := &SessionInfo{ID: p.st.SessionID, Project: p.emitted.Project, GitBranch: p.emitted.GitBranch}
	if titled {
		info.Title = p.title
		p.hasTitle = false
	}
	return info
}

func (p *claudeParser) finish() error {
	if !p.hasTitle {
		return nil
	}
	p.hasTitle = false
	return p.fn(Record{Line: p.titleLine, Offset: p.titleOff,
		Session: &SessionInfo{ID: p.st.SessionID, Title: p.title}})
}

// skipLink remembers a line skipped on purpose as a link of the uuid chain.
func (p *claudeParser) skipLink(l *claudeLine) {
	if l.UUID != "" {
		p.st.carry().aliases.add(l.UUID, l.ParentUUID)
	}
}

// base fills what every Claude message shares.
func (p *claudeParser) base(l *claudeLine, data []byte, role compact.Role) *compact.Message {
	m := &compact.Message{
		UUID:       l.UUID,
		ParentUUID: p.st.carry().aliases.resolve(l.ParentUUID),
		SessionID:  l.SessionID,
		Role:       role,
		Time:       parseTime(l.Timestamp),
		Meta:       l.IsMeta,
		Sidechain:  l.IsSidechain,
		AgentID:    l.AgentID,
	}
	if m.UUID == "" {
		m.UUID = lineUUID("claude-", data)
	}
	if m.SessionID == "" {
		m.SessionID = p.st.SessionID
	}
	p.st.LastUUID = m.UUID
	return m
}

func (p *claudeParser) message(l *claudeLine, msg *claudeMessage, blocks []compact.Block, data []byte) *compact.Message {
	if l.Type == "user" && len(blocks) > 0 && blocks[0].Kind == compact.BlockText {
		// a queued prompt that arrives as a line of its own is no longer pending
		p.st.carry().dequeue(blocks[0].Text)
	}
	role := compact.Role(msg.Role)
	switch role {
	case compact.RoleUser, compact.RoleAssistant, compact.RoleSystem:
	default:
		role = compact.Role(l.Type)
	}
	m := p.base(l, data, role)
	m.Blocks = blocks
	m.CompactSummary = l.IsCompactSummary
	if role == compact.RoleUser && !m.Meta && len(blocks) > 0 && blocks[0].Kind == compact.BlockText {
		m.Meta = notTyped(l) || hasAnyPrefix(blocks[0].Text, claudeMetaPrefixes)
	}
	if l.Type == "assistant" {
		m.Model = msg.Model
		if msg.ID != "" || l.RequestID != "" {
			m.ResponseID = msg.ID + ":" + l.RequestID
		}
		m.Usage = msg.Usage
		if u := m.Usage; u != nil && !m.Sidechain && u.ContextTokens() > 0 {
			p.st.LastContextTokens = u.ContextTokens()
		}
	}
	return m
}

// notTyped tells, from the line's own record of who wrote it, that the
// user did not type a user line's text: Claude Code counts a line as the
// user's when its origin is human and it is no tool's result; a line with
// no origin, by its promptSource or turnOrigin. Lines of builds that
// record none of these are left to the text's prefix.
func notTyped(l *claudeLine) bool {
	switch {
	case l.NotTyped || l.ToolUseResult:
		return true
	case l.Origin != "":
		return l.Origin != "human"
	case l.PromptSource != "":
		return l.PromptSource == "system"
	case l.TurnOrigin != "":
		return l.TurnOrigin != "human" && l.TurnOrigin != "sdk" && l.TurnOrigin != "unknown"
	}
	return false
}

func (p *claudeParser) localCommand(l *claudeLine, data []byte) *compact.Message {
	m := p.base(l, data, compact.RoleSystem)
	m.Meta = true
	text, ok := asString(l.Content)
	if !ok {
		text = string(l.Content)
	}
	m.Blocks = []compact.Block{{Kind: compact.BlockText, Text: text}}
	return m
}

func (p *claudeParser) boundary(l *claudeLine, data []byte) *compact.Boundary {
	var trigger, head, tail string
	var pre, post int64
	kept := -1
	tokens := func(v []byte) int64 {
		if n, ok := asInt(v); ok {
			return n
		}
		if f, err := strconv.ParseFloat(string(v), 64); err == nil {
			return int64(f)
		}
		return 0
	}
	fieldsOf(l.CompactMetadata, func(k, v []byte) {
		switch key(k) {
		case "trigger":
			var ok bool
			if trigger, ok = asString(v); !ok && json.Valid(v) && v[0] != '{' && v[0] != '[' {
				trigger = string(v) // a number (or a boolean) as its text
			}
		case "preTokens":
			pre = tokens(v)
		case "postTokens":
			post = tokens(v)
		case "preservedSegment":
			fieldsOf(v, func(k, v []byte) {
				switch key(k) {
				case "headUuid":
					head, _ = asString(v)
				case "tailUuid":
					tail, _ = asString(v)
				}
			})
		case "preservedMessages":
			fieldsOf(v, func(k, v []byte) {
				if key(k) == "uuids" {
					kept = 0
					elemsOf(v, func([]byte) { kept++ })
				}
			})
		}
	})
	uuid := l.UUID
	if uuid == "" {
		uuid = lineUUID("claude-", data)
	}
	sid := l.SessionID
	if sid == "" {
		sid = p.st.SessionID
	}
	b := compact.NewBoundary(sid, uuid, trigger, parseTime(l.Timestamp), pre, post)
	aliases := &p.st.carry().aliases
	b.LogicalParentUUID = aliases.resolve(l.LogicalParentUUID)
	if head != "" && tail != "" {
		// The segment kept ends with the last line before the compaction:
		// the logical parent, which 2.1.328 may name by a line it never
		// wrote (a hook's context it held in memory only).
		b.Preserved = &compact.Preserved{HeadUUID: aliases.resolve(head), TailUUID: aliases.resolve(tail), Messages: max(kept, 0)}
		b.LogicalParentUUID = b.Preserved.TailUUID
	}
	p.st.LastUUID = uuid
	return &b
}

// claudeContent decodes message content: a string is one text block, an
// array is blocks of any type (unknown ones become a text block naming
// their type). It reports false when the content is neither.
func claudeContent(raw []byte) ([]compact.Block, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true
	}
	switch raw[0] {
	case '"':
		return []compact.Block{{Kind: compact.BlockText, Text: unquote(raw)}}, true
	case '[':
		var out []compact.Block
		ok := true
		elemsOf(raw, func(v []byte) {
			b, good := claudeBlockOf(v)
			out = append(out, b)
			ok = ok && good
		})
		return out, ok
	}
	return nil, false
}

// claudeBlockOf decodes one content block; ok is false when it is not an
// object or has fields of unexpected types.
func claudeBlockOf(v []byte) (compact.Block, bool) {
	var typ, text, thinking, id, name, toolUseID string
	var input, content []byte
	var isError bool
	ok := true
	str := func(v []byte, dst *string) {
		if s, good := asString(v); good {
			*dst = s
		} else {
			ok = false
		}
	}
	isObj := fieldsOf(v, func(k, v []byte) {
		switch key(k) {
		case "type":
			str(v, &typ)
		case "text":
			str(v, &text)
		case "thinking":
			str(v, &thinking)
		case "id":
			str(v, &id)
		case "name":
			str(v, &name)
		case "tool_use_id":
			str(v, &toolUseID)
		case "input":
			input = v
		case "content":
			content = v
		case "is_error":
			b, good := asBool(v)
			isError, ok = b, ok && good
		}
	})
	if !isObj || !ok {
		return compact.Block{}, false
	}
	switch typ {
	case "text":
		return compact.Block{Kind: compact.BlockText, Text: text}, true
	case "thinking":
		return compact.Block{Kind: compact.BlockThinking, Text: thinking}, true
	case "redacted_thinking":
		return compact.Block{Kind: compact.BlockThinking}, true
	case "tool_use", "server_tool_use", "mcp_tool_use":
		if string(input) == "null" {
			input = nil
		}
		return compact.Block{Kind: compact.BlockToolUse, ToolName: name, ToolID: id, Input: string(input)}, true
	case "tool_result", "web_search_tool_result", "mcp_tool_result":
		return compact.Block{Kind: compact.BlockToolResult, ToolID: toolUseID,
			Text: flattenClaude(content), IsError: isError}, true
	case "image":
		return compact.Block{Kind: compact.BlockImage}, true
	}
	return compact.Block{Kind: compact.BlockText, Text: "[" + typ + "]"}, true
}

// flattenClaude turns tool_result content into text: a string as is, an
// array of blocks as their texts joined by newlines, an image as "[image]",
// other blocks as their type in brackets.
func flattenClaude(raw []byte) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	switch raw[0] {
	case '"':
		return unquote(raw)
	case '[':
		var sb strings.Builder
		n := 0
		elemsOf(raw, func(v []byte) {
			var typ, text string
			fieldsOf(v, func(k, v []byte) {
				switch key(k) {
				case "type":
					typ, _ = asString(v)
				case "text":
					text, _ = asString(v)
				}
			})
			if n > 0 {
				sb.WriteByte('\n')
			}
			n++
			if typ == "text" {
				sb.WriteString(text)
			} else {
				sb.WriteString("[" + typ + "]")
			}
		})
		return sb.String()
	}
	return string(raw)
}

// queueOperation follows Claude Code's queue of prompts typed while the
// agent was busy. A prompt handed to the running turn ("remove") is written
// nowhere else in transcripts of builds that do not persist attachments,
// so it becomes a user message here; one taken between turns ("dequeue")
// arrives as a user line of its own; "popAll" gave the prompts back to the
// input box. Matching goes by text, not by queue order: not every build
// writes a dequeue for every enqueue.
func (p *claudeParser) queueOperation(l *claudeLine, data []byte) *compact.Message {
	c := p.st.carry()
	content, _ := asString(l.Content)
	switch l.Operation {
	case "enqueue":
		c.enqueue(content)
	case "dequeue":
		if content != "" {
			c.dequeue(content)
		}
	case "popAll":
		c.queued = nil
	case "remove":
		text, ok := c.take(content)
		if !ok || !typedPrompt(text) || c.wasDelivered(text) {
			return nil
		}
		c.deliver(text)
		return p.queuedPrompt(l, data, text)
	}
	return nil
}

// attachment reads the attachment lines newer builds persist: a
// queued_command of the "prompt" kind is a prompt the user typed while the
// agent was busy, handed to the running turn.
func (p *claudeParser) attachment(l *claudeLine, data []byte) *compact.Message {
	if l.IsMeta || l.IsSidechain {
		return nil
	}
	var typ, mode, origin string
	var prompt []byte
	fieldsOf(l.Attachment, func(k, v []byte) {
		switch key(k) {
		case "type":
			typ, _ = asString(v)
		case "commandMode":
			mode, _ = asString(v)
		case "prompt":
			prompt = v
		case "origin":
			fieldsOf(v, func(k, v []byte) {
				if key(k) == "kind" {
					origin, _ = asString(v)
				}
			})
		}
	})
	if typ != "queued_command" || (mode != "" && mode != "prompt") || (origin != "" && origin != "human") {
		return nil
	}
	var text string
	if s, ok := asString(prompt); ok {
		text = s
	} else if blocks, ok := claudeContent(prompt); ok {
		text = compact.Message{Blocks: blocks}.Text()
	}
	c := p.st.carry()
	c.dequeue(text)
	if !typedPrompt(text) || c.wasDelivered(text) {
		return nil
	}
	c.deliver(text)
	return p.queuedPrompt(l, data, text)
}

// queuedPrompt is a prompt delivered mid-turn, as a user message.
func (p *claudeParser) queuedPrompt(l *claudeLine, data []byte, text string) *compact.Message {
	parent := p.st.LastUUID
	m := p.base(l, data, compact.RoleUser)
	if m.ParentUUID == "" {
		m.ParentUUID = parent
	}
	m.Blocks = []compact.Block{{Kind: compact.BlockText, Text: text}}
	return m
}

// typedPrompt tells a prompt the user typed from a queued notification or
// a slash command (which runs locally, not as a prompt).
func typedPrompt(text string) bool {
	t := strings.TrimSpace(text)
	return t != "" && !strings.HasPrefix(t, "/") && !hasAnyPrefix(t, claudeMetaPrefixes)
}
