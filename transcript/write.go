package transcript

// Writing transcripts back. The ledger keeps messages, not the lines they
// were read from, so a transcript it writes is rebuilt from them in the
// agent's own format: each message one line that this package's readers
// read back to the same message (for Codex, whose messages have no uuids
// of their own, the same but for the uuids, which are hashes of the new
// lines), each compaction its boundary line, the session's facts (project,
// branch, title, model) where the format keeps them. Lines the readers skip
// (progress, hook output, token counts, file snapshots) are not in the
// ledger and are not written.

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"time"

	"github.com/agentledger/ledger/compact"
)

// SessionFacts is what a written transcript says of its session besides
// its messages.
type SessionFacts struct {
	ID        string
	Project   string // the folder the agent ran in
	GitBranch string
	Title     string
	Model     string
	Started   time.Time
}

// exportVersion is the "version" of the Claude Code lines written: the
// producer, so that a reader can tell a rebuilt transcript.
const exportVersion = "ledger-export"

// WriteClaude writes a session as Claude Code JSONL: a summary line with
// its title, then each message and compaction boundary in order.
func WriteClaude(w io.Writer, s SessionFacts, msgs []compact.Message, bounds []compact.Boundary) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if s.Title != "" {
		leaf := ""
		if len(msgs) > 0 {
			leaf = msgs[len(msgs)-1].UUID
		}
		if err := enc.Encode(map[string]any{"type": "summary", "summary": s.Title, "leafUuid": leaf}); err != nil {
			return err
		}
	}
	common := func(line map[string]any, sessionID string, at time.Time) map[string]any {
		if sessionID == "" {
			sessionID = s.ID
		}
		line["sessionId"] = sessionID
		line["userType"] = "external"
		line["version"] = exportVersion
		if s.Project != "" {
			line["cwd"] = s.Project
		}
		if s.GitBranch != "" {
			line["gitBranch"] = s.GitBranch
		}
		if !at.IsZero() {
			line["timestamp"] = at.UTC().Format(time.RFC3339Nano)
		}
		return line
	}
	writeBoundary := func(b compact.Boundary) error {
		line := common(map[string]any{"type": "system", "subtype": "compact_boundary", "uuid": b.UUID,
			"parentUuid": nil, "logicalParentUuid": b.LogicalParentUUID, "isSidechain": false, "isMeta": false,
			"level": "info", "content": "Conversation compacted",
			"compactMetadata": map[string]any{"trigger": b.Trigger, "preTokens": b.PreTokens}}, b.SessionID, b.Time)
		return enc.Encode(line)
	}
	pending := bounds
	for _, m := range msgs {
		// A boundary goes before the summary parented to it, or before the
		// first message after it.
		for len(pending) > 0 && (pending[0].UUID == m.ParentUUID || !m.Time.IsZero() && pending[0].Time.Before(m.Time)) {
			if err := writeBoundary(pending[0]); err != nil {
				return err
			}
			pending = pending[1:]
		}
		if err := enc.Encode(claudeLineOf(m, common)); err != nil {
			return err
		}
	}
	for _, b := range pending {
		if err := writeBoundary(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// claudeLineOf is a message as a Claude Code line.
func claudeLineOf(m compact.Message, common func(map[string]any, string, time.Time) map[string]any) map[string]any {
	var parent any
	if m.ParentUUID != "" {
		parent = m.ParentUUID
	}
	line := map[string]any{"uuid": m.UUID, "parentUuid": parent, "isSidechain": m.Sidechain}
	if m.AgentID != "" {
		line["agentId"] = m.AgentID
	}
	if m.Meta {
		line["isMeta"] = true
	}
	if m.CompactSummary {
		line["isCompactSummary"] = true
	}
	switch m.Role {
	case compact.RoleSystem:
		// A slash command the user ran, as Claude Code records it.
		line["type"], line["subtype"], line["level"] = "system", "local_command", "info"
		line["content"] = m.Text()
		return common(line, m.SessionID, m.Time)
	case compact.RoleAssistant:
		line["type"] = "assistant"
		msg := map[string]any{"type": "message", "role": "assistant", "content": claudeBlocks(m.Blocks, false)}
		if m.Model != "" {
			msg["model"] = m.Model
		}
		if id, req, ok := strings.Cut(m.ResponseID, ":"); ok {
			if id != "" {
				msg["id"] = id
			}
			if req != "" {
				line["requestId"] = req
			}
		}
		if u := m.Usage; u != nil {
			msg["usage"] = map[string]any{"input_tokens": u.InputTokens, "cache_creation_input_tokens": u.CacheCreationInputTokens,
				"cache_read_input_tokens": u.CacheReadInputTokens, "output_tokens": u.OutputTokens}
		}
		line["message"] = msg
	default:
		line["type"] = "user"
		line["message"] = map[string]any{"role": "user", "content": claudeBlocks(m.Blocks, true)}
	}
	return common(line, m.SessionID, m.Time)
}

// claudeBlocks is message content as Claude Code writes it: one text block
// of a user message as a plain string, anything else as blocks.
func claudeBlocks(blocks []compact.Block, user bool) any {
	if user && len(blocks) == 1 && blocks[0].Kind == compact.BlockText {
		return blocks[0].Text
	}
	out := make([]map[string]any, 0, len(blocks))
	for _, b := range blocks {
		switch b.Kind {
		case compact.BlockThinking:
			out = append(out, map[string]any{"type": "thinking", "thinking": b.Text, "signature": ""})
		case compact.BlockToolUse:
			tu := map[string]any{"type": "tool_use", "id": b.ToolID, "name": b.ToolName}
			if b.Input != "" {
				if json.Valid([]byte(b.Input)) {
					tu["input"] = json.RawMessage(b.Input)
				} else {
					tu["input"] = b.Input
				}
			}
			out = append(out, tu)
		case compact.BlockToolResult:
			out = append(out, map[string]any{"type": "tool_result", "tool_use_id": b.ToolID, "content": b.Text, "is_error": b.IsError})
		case compact.BlockImage:
			// The ledger keeps that there was an image, not the image.
			out = append(out, map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": ""}})
		default:
			out = append(out, map[string]any{"type": "text", "text": b.Text})
		}
	}
	return out
}

// WriteCodex writes a session as a Codex CLI rollout: its session_meta and
// turn_context, then each message as a response item and each compaction
// as a compacted line, in order.
func WriteCodex(w io.Writer, s SessionFacts, msgs []compact.Message, bounds []compact.Boundary) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	ts := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	write := func(at time.Time, typ string, payload map[string]any) error {
		return enc.Encode(map[string]any{"timestamp": ts(at), "type": typ, "payload": payload})
	}
	started := s.Started
	if started.IsZero() && len(msgs) > 0 {
		started = msgs[0].Time
	}
	meta := map[string]any{"id": s.ID, "timestamp": ts(started), "cwd": s.Project, "originator": exportVersion, "cli_version": ""}
	if s.GitBranch != "" {
		meta["git"] = map[string]any{"branch": s.GitBranch}
	}
	if err := write(started, "session_meta", meta); err != nil {
		return err
	}
	if s.Model != "" {
		if err := write(started, "turn_context", map[string]any{"cwd": s.Project, "model": s.Model}); err != nil {
			return err
		}
	}
	pending := bounds
	for _, m := range msgs {
		for len(pending) > 0 && !m.Time.IsZero() && pending[0].Time.Before(m.Time) {
			if err := write(pending[0].Time, "compacted", map[string]any{"message": pending[0].Summary}); err != nil {
				return err
			}
			pending = pending[1:]
		}
		if err := write(m.Time, "response_item", codexItemOf(m)); err != nil {
			return err
		}
		// The usage of the model's response this item ends, as Codex
		// reports it: a token_count after the item (input_tokens counting
		// the cached ones).
		if u := m.Usage; u != nil && m.Role == compact.RoleAssistant {
			last := map[string]any{"input_tokens": u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
				"cached_input_tokens": u.CacheReadInputTokens, "output_tokens": u.OutputTokens}
			if err := write(m.Time, "event_msg", map[string]any{"type": "token_count", "info": map[string]any{"last_token_usage": last}}); err != nil {
				return err
			}
		}
	}
	for _, b := range pending {
		if err := write(b.Time, "compacted", map[string]any{"message": b.Summary}); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// codexItemOf is a message as a Codex response item.
func codexItemOf(m compact.Message) map[string]any {
	if len(m.Blocks) == 1 {
		b := m.Blocks[0]
		switch b.Kind {
		case compact.BlockToolUse:
			switch {
			case b.ToolName == "local_shell" && json.Valid([]byte(b.Input)):
				return map[string]any{"type": "local_shell_call", "call_id": b.ToolID, "status": "completed", "action": json.RawMessage(b.Input)}
			case b.ToolName == "web_search" && json.Valid([]byte(b.Input)):
				return map[string]any{"type": "web_search_call", "id": b.ToolID, "status": "completed", "action": json.RawMessage(b.Input)}
			case json.Valid([]byte(b.Input)):
				return map[string]any{"type": "function_call", "name": b.ToolName, "call_id": b.ToolID, "arguments": b.Input}
			}
			return map[string]any{"type": "custom_tool_call", "name": b.ToolName, "call_id": b.ToolID, "input": b.Input, "status": "completed"}
		case compact.BlockToolResult:
			// The wrapped form carries the failure as the exit code.
			exit := 0
			if b.IsError {
				exit = 1
			}
			out, _ := json.Marshal(map[string]any{"output": b.Text, "metadata": map[string]any{"exit_code": exit}})
			return map[string]any{"type": "function_call_output", "call_id": b.ToolID, "output": string(out)}
		case compact.BlockThinking:
			summary := []map[string]any{}
			if b.Text != "" {
				summary = append(summary, map[string]any{"type": "summary_text", "text": b.Text})
			}
			return map[string]any{"type": "reasoning", "summary": summary}
		}
	}
	role, textType := "assistant", "output_text"
	switch m.Role {
	case compact.RoleUser:
		role, textType = "user", "input_text"
	case compact.RoleSystem:
		role, textType = "developer", "input_text"
	}
	parts := make([]map[string]any, 0, len(m.Blocks))
	for _, b := range m.Blocks {
		if b.Kind == compact.BlockImage {
			parts = append(parts, map[string]any{"type": "input_image", "image_url": ""})
			continue
		}
		parts = append(parts, map[string]any{"type": textType, "text": b.Text})
	}
	return map[string]any{"type": "message", "role": role, "content": parts}
}
