package agenttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
)

// anthropicMessages is Anthropic's Messages API, as Claude Code calls it:
// POST /v1/messages (Claude Code adds ?beta=true), streamed as server-sent
// events when the body says "stream": true, and POST
// /v1/messages/count_tokens. The event sequence is the API's:
//
//	message_start (usage: input and cache tokens), then per content block
//	content_block_start, content_block_delta (text_delta or
//	input_json_delta), content_block_stop; message_delta (stop_reason,
//	usage with output_tokens), message_stop
type anthropicMessages struct{}

func (anthropicMessages) name() string { return "anthropic" }

func (anthropicMessages) routes() []string {
	return []string{"POST /v1/messages", "POST /v1/messages/count_tokens"}
}

// anthropicRequest is the part of a Messages request the server reads.
type anthropicRequest struct {
	Model    string          `json:"model"`
	Stream   bool            `json:"stream"`
	System   json.RawMessage `json:"system"` // a string or text blocks
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"` // a string or blocks
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
		Type string `json:"type"` // "" or "custom" for client tools; the server tool's type else
	} `json:"tools"`
}

// anthropicBlock is a content block of a request.
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"` // tool_result: a string or blocks
	IsError   bool            `json:"is_error"`
}

func (anthropicMessages) decode(hr *http.Request, req *Request) error {
	req.Kind = KindTurn
	if strings.HasSuffix(hr.URL.Path, "/count_tokens") {
		req.Kind = KindCountTokens
	}
	var b anthropicRequest
	if err := json.Unmarshal(req.Body, &b); err != nil {
		return fmt.Errorf("decode body: %w", err)
	}
	req.Model, req.Stream = b.Model, b.Stream
	req.System = anthropicText(b.System)
	for _, t := range b.Tools {
		kind := "function"
		if t.Type != "" && t.Type != "custom" {
			kind = t.Type
		}
		req.Tools = append(req.Tools, Tool{Name: t.Name, Kind: kind})
	}
	for _, m := range b.Messages {
		msg := Message{Role: m.Role}
		var texts []string
		if len(m.Content) > 0 && m.Content[0] == '"' {
			var s string
			if err := json.Unmarshal(m.Content, &s); err != nil {
				return fmt.Errorf("decode message content: %w", err)
			}
			texts = append(texts, s)
		} else if len(m.Content) > 0 && string(m.Content) != "null" {
			var blocks []anthropicBlock
			if err := json.Unmarshal(m.Content, &blocks); err != nil {
				return fmt.Errorf("decode message content: %w", err)
			}
			for _, bl := range blocks {
				switch bl.Type {
				case "text":
					texts = append(texts, bl.Text)
				case "tool_use", "server_tool_use":
					msg.Calls = append(msg.Calls, Call{ID: bl.ID, Name: bl.Name, Raw: string(bl.Input)})
				case "tool_result":
					msg.Results = append(msg.Results, ToolResult{CallID: bl.ToolUseID, Text: anthropicText(bl.Content), IsError: bl.IsError})
				}
			}
		}
		msg.Text = strings.Join(texts, "\n")
		req.Messages = append(req.Messages, msg)
	}
	return nil
}

// anthropicText is the text of a system prompt or tool result: a string,
// or the texts of its blocks joined by newlines.
func anthropicText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []anthropicBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return string(raw)
	}
	var texts []string
	for _, b := range blocks {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// anthropicIDs numbers the ids the protocol makes up (messages, tool
// uses), across servers: ids stay unique within a test binary.
var anthropicIDs atomic.Int64

func anthropicID(prefix string) string {
	return fmt.Sprintf("%s_agenttest%06d", prefix, anthropicIDs.Add(1))
}

// anthropicUsage is a usage object of the API.
func anthropicUsage(u Usage) map[string]any {
	return map[string]any{
		"input_tokens":                u.InputTokens,
		"cache_creation_input_tokens": u.CacheWrite,
		"cache_read_input_tokens":     u.CacheRead,
		"output_tokens":               u.OutputTokens,
	}
}

func (anthropicMessages) write(w http.ResponseWriter, req *Request, turn Turn) error {
	if req.Kind == KindCountTokens {
		// Roughly four bytes a token: the figure only has to be plausible.
		return writeJSON(w, map[string]any{"input_tokens": len(req.Body)/4 + 1})
	}
	type block struct {
		start map[string]any // content_block_start's content_block
		delta map[string]any // content_block_delta's delta
		final map[string]any // the block in a whole message
	}
	var blocks []block
	if turn.Text != "" || len(turn.Calls) == 0 {
		text := turn.Text
		blocks = append(blocks, block{
			start: map[string]any{"type": "text", "text": ""},
			delta: map[string]any{"type": "text_delta", "text": text},
			final: map[string]any{"type": "text", "text": text},
		})
	}
	for _, c := range turn.Calls {
		in, err := c.inputJSON()
		if err != nil {
			return err
		}
		if !json.Valid([]byte(in)) {
			return fmt.Errorf("the input of %s is not JSON: %q", c.Name, in)
		}
		id := c.ID
		if id == "" {
			id = anthropicID("toolu")
		}
		blocks = append(blocks, block{
			start: map[string]any{"type": "tool_use", "id": id, "name": c.Name, "input": map[string]any{}},
			delta: map[string]any{"type": "input_json_delta", "partial_json": in},
			final: map[string]any{"type": "tool_use", "id": id, "name": c.Name, "input": json.RawMessage(in)},
		})
	}
	stop := "end_turn"
	if len(turn.Calls) > 0 {
		stop = "tool_use"
	}
	id := anthropicID("msg")
	u := turn.Usage
	if !req.Stream {
		content := make([]any, len(blocks))
		for i, b := range blocks {
			content[i] = b.final
		}
		return writeJSON(w, map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": req.Model, "content": content,
			"stop_reason": stop, "stop_sequence": nil, "usage": anthropicUsage(u),
		})
	}
	sse := newSSE(w)
	start := u
	start.OutputTokens = 1 // as the API does: the output is counted at the end
	sse.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": req.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": anthropicUsage(start),
	}})
	for i, b := range blocks {
		sse.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": b.start})
		sse.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": b.delta})
		sse.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	sse.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": anthropicUsage(u)})
	sse.event("message_stop", map[string]any{"type": "message_stop"})
	return sse.err
}
