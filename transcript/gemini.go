package transcript

// Gemini CLI keeps each session in
// ~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl
// ($GEMINI_CLI_HOME/.gemini instead of ~/.gemini), a log of records
// (chatRecordingService in Gemini CLI 0.61.0, read from its source and its
// real output). Loading a session, Gemini CLI replays the log: a message
// record upserts its id (the last copy wins), {"$set": {...}} patches the
// session, {"$set": {"messages": [...]}} replaces the message list, and
// {"$rewindTo": id} drops that message and every later one.
//
// ledger keeps everything that was said, so it reads the log as events,
// not as the last state:
//
//	record                         what the reader does
//	-----------------------------  ---------------------------------------------
//	header {sessionId,             Session{ID, Time (startTime)}; a resumed
//	  projectHash, startTime}      session appends the header again
//	user message {id, type:        a user Message of its text (uuid: the id);
//	  "user", content}             a leading <hook_context>…</hook_context>, a
//	                               SessionStart hook's context, is a Meta
//	                               Message of its own (uuid id#hook_context);
//	                               a <state_snapshot> (a log rewritten from
//	                               the compressed history) a Meta summary;
//	                               each functionResponse part is a tool Message
//	                               (uuid <call id>#result)
//	gemini message {id, type:      an assistant Message of its thoughts
//	  "gemini", content, thoughts, (thinking) and text, with Model and Usage
//	  tokens, model, toolCalls}    (tokens); each tool call an assistant
//	                               Message of its own (uuid <call id>#call),
//	                               the first carrying the usage when there is
//	                               no text (and Session{Usage} then, for a
//	                               copy written before its calls); once a
//	                               call has a result or a final status, a
//	                               tool Message (uuid <call id>#result)
//	info, error, warning messages  skipped: what the UI showed
//	{"$set": {"messages": [...]}}  the message list as the model now sees it:
//	                               its messages are copies (some under new
//	                               ids), not new ones, and are not emitted.
//	                               A compression is such a rewrite whose user
//	                               message holds a <state_snapshot>: a Boundary
//	                               (uuid: that message's id; the summary; the
//	                               last prompt's tokens before it), once per
//	                               snapshot. The rewrite's first message,
//	                               Gemini CLI's <session_context>, names the
//	                               workspace: Session{Project}
//	{"$set": {...}} (other keys)   summary: Session{Title}; sessionId: the
//	                               session's id; lastUpdated: Session{Time}
//	{"$rewindTo": id}              the rewound messages stay (they were said);
//	                               the next message is parented to the one
//	                               before id, so they are a dead branch
//	anything else, no session id   bad input, counted in Result.Skipped
//
// A message record comes again when Gemini CLI updates it (its tokens, its
// tool calls and their results), so every part of a message has a uuid of
// its own, made from the record's id or the tool call's: whichever copy a
// read meets first, a part is stored once, and later copies add only the
// parts they bring. Reading a log again from its start (after a rewrite of
// its head) yields the same uuids, which the store keeps once.

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/agentledger/ledger/compact"
)

// geminiLine is a record of Gemini CLI's log: a header, a patch, a rewind
// or a message.
type geminiLine struct {
	SessionID   *string         `json:"sessionId"`
	ProjectHash *string         `json:"projectHash"`
	StartTime   string          `json:"startTime"`
	Set         json.RawMessage `json:"$set"`
	RewindTo    *string         `json:"$rewindTo"`
	ID          *string         `json:"id"`
	geminiMessage
}

// geminiMessage is a message record (and an element of $set.messages).
type geminiMessage struct {
	ID        string          `json:"id"`
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	Thoughts  []struct {
		Subject     string `json:"subject"`
		Description string `json:"description"`
	} `json:"thoughts"`
	Tokens *struct {
		Input    int64 `json:"input"`
		Output   int64 `json:"output"`
		Cached   int64 `json:"cached"`
		Thoughts int64 `json:"thoughts"`
	} `json:"tokens"`
	Model     string `json:"model"`
	ToolCalls []struct {
		ID     string          `json:"id"`
		Name   string          `json:"name"`
		Args   json.RawMessage `json:"args"`
		Result json.RawMessage `json:"result"`
		Status string          `json:"status"`
	} `json:"toolCalls"`
}

// geminiSet is what the reader uses of a $set patch.
type geminiSet struct {
	SessionID   *string         `json:"sessionId"`
	Summary     *string         `json:"summary"`
	LastUpdated string          `json:"lastUpdated"`
	Messages    json.RawMessage `json:"messages"`
}

// geminiCarry is what a read of a Gemini log carries to the next: the
// parent each recent message was given (for a rewind to it), and the
// latest compression snapshot seen. Like carry's lists, parents is only
// appended to or re-sliced, never written in place.
type geminiCarry struct {
	Parents  [][2]string `json:"parents,omitempty"`
	Snapshot string      `json:"snapshot,omitempty"`
}

// geminiParents is how many recent messages' parents a read carries: a
// rewind goes back a few turns.
const geminiParents = 64

const (
	hookContextOpen  = "<hook_context>"
	hookContextClose = "</hook_context>"
)

type geminiParser struct {
	st *State
	fn func(Record) error
}

func newGeminiParser(st *State, fn func(Record) error) *geminiParser {
	return &geminiParser{st: st, fn: fn}
}

func (p *geminiParser) finish() error { return nil }

// gem is the State's Gemini carry.
func (p *geminiParser) gem() *geminiCarry {
	return &p.st.carry().gemini
}

func (p *geminiParser) line(data []byte, lineNo int, off int64) (string, error) {
	var l geminiLine
	if err := json.Unmarshal(data, &l); err != nil {
		return jsonReason(FormatGemini, data, err), nil
	}
	rec := Record{Line: lineNo, Offset: off}
	switch {
	case l.RewindTo != nil:
		p.rewind(*l.RewindTo)
		return "", nil
	case l.ID != nil:
		if p.st.SessionID == "" {
			return "gemini message before the session's header", nil
		}
		// The message's own "id" is the line's: the embedded field is
		// shadowed by the pointer that tells a message from the rest.
		l.geminiMessage.ID = *l.ID
		return "", p.message(l.geminiMessage, rec)
	case len(l.Set) > 0:
		return p.set(l.Set, rec)
	case l.SessionID != nil && l.ProjectHash != nil:
		if *l.SessionID == "" {
			return "malformed gemini record (sessionId)", nil
		}
		p.st.SessionID = *l.SessionID
		rec.Session = &SessionInfo{ID: p.st.SessionID, Time: parseTime(l.StartTime)}
		return "", p.fn(rec)
	}
	return "not a gemini record", nil
}

// rewind parents what comes next to the message before id.
func (p *geminiParser) rewind(id string) {
	g := p.gem()
	for i := len(g.Parents) - 1; i >= 0; i-- {
		if g.Parents[i][0] == id {
			p.st.LastUUID = g.Parents[i][1]
			return
		}
	}
}

// remember notes the parent a message's first part was given.
func (p *geminiParser) remember(id string) {
	g := p.gem()
	for i := len(g.Parents) - 1; i >= 0; i-- {
		if g.Parents[i][0] == id {
			return // a later copy of the message
		}
	}
	if len(g.Parents) >= 2*geminiParents {
		g.Parents = g.Parents[len(g.Parents)-geminiParents:]
	}
	g.Parents = append(g.Parents[:len(g.Parents):len(g.Parents)], [2]string{id, p.st.LastUUID})
}

// emit hands a message on, chained to the one before. A part met again
// right after itself (a tool result in the call's record and then in the
// user record that sends it back) is not handed on twice.
func (p *geminiParser) emit(rec Record, m *compact.Message) error {
	if m.UUID == p.st.LastUUID {
		return nil
	}
	m.SessionID, m.ParentUUID = p.st.SessionID, p.st.LastUUID
	p.st.LastUUID = m.UUID
	rec.Message = m
	return p.fn(rec)
}

// message emits the parts of a message record.
func (p *geminiParser) message(g geminiMessage, rec Record) error {
	if g.ID == "" {
		return nil
	}
	at := parseTime(g.Timestamp)
	parts, ok := decodeParts(g.Content)
	if !ok {
		parts = nil // a content of another shape: its tool calls still count
	}
	switch g.Type {
	case "user":
		p.remember(g.ID)
		return p.user(g, parts, at, rec)
	case "gemini":
		p.remember(g.ID)
		return p.gemini(g, parts, at, rec)
	}
	return nil
}

// user emits a user record: a hook's context, the user's text, the tool
// results it carries.
func (p *geminiParser) user(g geminiMessage, parts []genaiPart, at time.Time, rec Record) error {
	text := partBlocksOf(parts, false)
	if len(text) > 0 && text[0].Kind == compact.BlockText && strings.HasPrefix(text[0].Text, hookContextOpen) {
		if end := strings.Index(text[0].Text, hookContextClose); end >= 0 {
			hook := text[0].Text[len(hookContextOpen):end]
			rest := strings.TrimLeft(text[0].Text[end+len(hookContextClose):], "\r\n")
			if strings.TrimSpace(hook) != "" {
				m := &compact.Message{UUID: g.ID + "#hook_context", Role: compact.RoleUser, Time: at, Meta: true,
					Blocks: []compact.Block{{Kind: compact.BlockText, Text: strings.TrimSpace(hook)}}}
				if err := p.emit(rec, m); err != nil {
					return err
				}
			}
			if rest == "" {
				text = text[1:]
			} else {
				text[0].Text = rest
			}
		}
	}
	if len(text) > 0 {
		m := &compact.Message{UUID: g.ID, Role: compact.RoleUser, Time: at, Blocks: text}
		if text[0].Kind == compact.BlockText && strings.HasPrefix(strings.TrimSpace(text[0].Text), "<state_snapshot>") {
			// A compression's summary written as a message of its own (a
			// log Gemini CLI rewrote from the history it holds): no request.
			m.Meta, m.CompactSummary = true, true
		}
		if err := p.emit(rec, m); err != nil {
			return err
		}
	}
	for i, part := range parts {
		if part.FunctionResponse == nil {
			continue
		}
		r := part.FunctionResponse
		out, failed := responseText(r.Response)
		m := &compact.Message{UUID: geminiCallUUID(r.ID, g.ID, i) + "#result", Role: compact.RoleTool, Time: at,
			Blocks: []compact.Block{{Kind: compact.BlockToolResult, ToolID: r.ID, ToolName: r.Name, Text: out, IsError: failed}}}
		if err := p.emit(rec, m); err != nil {
			return err
		}
	}
	return nil
}

// gemini emits a model record: its thoughts and text, each tool call, and
// each call's result once it has one.
func (p *geminiParser) gemini(g geminiMessage, parts []genaiPart, at time.Time, rec Record) error {
	var usage *compact.Usage
	if t := g.Tokens; t != nil {
		usage = genaiUsage{PromptTokenCount: t.Input, CandidatesTokenCount: t.Output, ThoughtsTokenCount: t.Thoughts,
			CachedContentTokenCount: t.Cached}.usage()
		if t.Input > 0 {
			p.st.LastContextTokens = t.Input
		}
	}
	var blocks []compact.Block
	for _, th := range g.Thoughts {
		text := th.Description
		if th.Subject != "" {
			text = th.Subject + ": " + th.Description
		}
		if strings.TrimSpace(text) != "" {
			blocks = append(blocks, compact.Block{Kind: compact.BlockThinking, Text: text})
		}
	}
	blocks = append(blocks, partBlocksOf(parts, false)...)
	if usage != nil || g.Model != "" {
		rec.Session = &SessionInfo{ID: p.st.SessionID, Model: g.Model, Usage: usage}
	}
	// The usage goes with the response's first message: its text, else its
	// first tool call (the meter reads the latest usage of a message).
	callUsage := usage
	if len(blocks) > 0 {
		m := &compact.Message{UUID: g.ID, Role: compact.RoleAssistant, Time: at, Blocks: blocks, Model: g.Model, Usage: usage}
		if err := p.emit(rec, m); err != nil {
			return err
		}
		rec.Session, callUsage = nil, nil
	} else if rec.Session != nil {
		if err := p.fn(rec); err != nil {
			return err
		}
		rec.Session = nil
	}
	// Tool calls: in toolCalls (a live session), or as functionCall parts
	// (a message the CLI rebuilt from history).
	for i, part := range parts {
		if c := part.FunctionCall; c != nil {
			if err := p.call(rec, geminiCallUUID(c.ID, g.ID, i), c.ID, c.Name, c.Args, at, g.Model, callUsage); err != nil {
				return err
			}
			callUsage = nil
		}
	}
	for i, tc := range g.ToolCalls {
		key := geminiCallUUID(tc.ID, g.ID, 1000+i)
		if err := p.call(rec, key, tc.ID, tc.Name, tc.Args, at, g.Model, callUsage); err != nil {
			return err
		}
		callUsage = nil
		hasResult := len(tc.Result) > 0 && string(tc.Result) != "null"
		if !hasResult && tc.Status != "error" && tc.Status != "cancelled" {
			continue // not run yet
		}
		out, failed := geminiResult(tc.Result)
		m := &compact.Message{UUID: key + "#result", Role: compact.RoleTool, Time: at,
			Blocks: []compact.Block{{Kind: compact.BlockToolResult, ToolID: tc.ID, ToolName: tc.Name, Text: out,
				IsError: failed || tc.Status == "error" || tc.Status == "cancelled"}}}
		if err := p.emit(rec, m); err != nil {
			return err
		}
	}
	return nil
}

// call emits one tool call, with the response's usage when it is the
// response's first message.
func (p *geminiParser) call(rec Record, key, id, name string, args json.RawMessage, at time.Time, model string, usage *compact.Usage) error {
	m := &compact.Message{UUID: key + "#call", Role: compact.RoleAssistant, Time: at, Model: model, Usage: usage,
		Blocks: []compact.Block{{Kind: compact.BlockToolUse, ToolName: name, ToolID: id, Input: jsonInput(args)}}}
	return p.emit(rec, m)
}

// geminiCallUUID is the uuid stem of a tool call's parts: its id (unique in
// a session), or, for a call without one, its message's id and position.
func geminiCallUUID(callID, msgID string, i int) string {
	if callID != "" {
		return callID
	}
	return msgID + "#" + strconv.Itoa(i)
}

// geminiResult reads a tool call's result: a list of parts (function
// responses, text), a string, or a function response object.
func geminiResult(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	if raw[0] == '"' {
		return rawText(raw), false
	}
	parts, ok := decodeParts(raw)
	if !ok {
		return string(raw), false
	}
	var texts []string
	failed := false
	for _, part := range parts {
		switch {
		case part.FunctionResponse != nil:
			t, f := responseText(part.FunctionResponse.Response)
			texts, failed = append(texts, t), failed || f
		case part.Text != nil:
			texts = append(texts, *part.Text)
		}
	}
	return strings.Join(texts, "\n"), failed
}

// partBlocksOf is partBlocks without tool calls and results (a Gemini
// record's are emitted as messages of their own).
func partBlocksOf(parts []genaiPart, tools bool) []compact.Block {
	blocks, _ := partBlocks(parts)
	if tools {
		return blocks
	}
	out := blocks[:0:0]
	for _, b := range blocks {
		if b.Kind != compact.BlockToolUse && b.Kind != compact.BlockToolResult {
			out = append(out, b)
		}
	}
	return out
}

// set reads a $set patch: the session's facts, and a compression when the
// message list it sets starts over from a snapshot.
func (p *geminiParser) set(raw json.RawMessage, rec Record) (string, error) {
	var s geminiSet
	if raw[0] != '{' {
		return "malformed gemini record ($set)", nil
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return jsonReason(FormatGemini, raw, err), nil
	}
	if s.SessionID != nil && *s.SessionID != "" {
		p.st.SessionID = *s.SessionID
	}
	if p.st.SessionID == "" {
		return "gemini patch before the session's header", nil
	}
	at := parseTime(s.LastUpdated)
	info := &SessionInfo{ID: p.st.SessionID, Time: at}
	if s.Summary != nil {
		info.Title = *s.Summary
	}
	var msgs []geminiMessage
	if len(s.Messages) > 0 && s.Messages[0] == '[' {
		if err := json.Unmarshal(s.Messages, &msgs); err != nil {
			return "malformed gemini record ($set.messages)", nil
		}
	}
	var snap *geminiMessage
	first := true
	for i := range msgs {
		if msgs[i].Type != "user" {
			continue
		}
		parts, _ := decodeParts(msgs[i].Content)
		text := textOf(parts)
		switch {
		case strings.HasPrefix(strings.TrimSpace(text), "<session_context>"):
			// Gemini CLI's own is the history's first message: a later
			// prompt that reads the same is the user's text, and chooses
			// no project.
			if dir := geminiWorkspace(text); dir != "" && first {
				info.Project = dir
			}
		case strings.Contains(text, "<state_snapshot>"):
			snap = &msgs[i]
		}
		first = false
	}
	if info.Title != "" || info.Project != "" || !info.Time.IsZero() {
		rec.Session = info
	}
	if snap != nil && snap.ID != "" && snap.ID != p.gem().Snapshot {
		parts, _ := decodeParts(snap.Content)
		b := compact.NewBoundary(p.st.SessionID, snap.ID, "auto", at, p.st.LastContextTokens, 0)
		b.LogicalParentUUID = p.st.LastUUID
		b.Summary = snapshotText(textOf(parts))
		p.gem().Snapshot = snap.ID
		p.st.LastUUID = snap.ID
		if err := p.fn(Record{Line: rec.Line, Offset: rec.Offset, Boundary: &b}); err != nil {
			return "", err
		}
	}
	if rec.Session == nil {
		return "", nil
	}
	return "", p.fn(rec)
}

// geminiWorkspace is the first workspace folder a <session_context> names
// ("- **Workspace Directories:**" then "  - <dir>" lines; older releases:
// "I'm currently working in the directory: <dir>"), or "".
func geminiWorkspace(text string) string {
	dir := ""
	if _, rest, ok := strings.Cut(text, "Workspace Directories:**\n"); ok {
		line, _, _ := strings.Cut(rest, "\n")
		if d, ok := strings.CutPrefix(strings.TrimSpace(line), "- "); ok {
			dir = d
		}
	} else if _, rest, ok := strings.Cut(text, "I'm currently working in the directory: "); ok {
		dir, _, _ = strings.Cut(rest, "\n")
	}
	dir = strings.TrimSpace(dir)
	if !strings.HasPrefix(dir, "/") && !(len(dir) > 2 && dir[1] == ':' && (dir[2] == '\\' || dir[2] == '/')) {
		return "" // not an absolute path: not what Gemini CLI writes
	}
	return dir
}
