package agenttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
)

// openaiResponses is OpenAI's Responses API, as Codex CLI calls it: POST
// /v1/responses (the provider's base_url ends in /v1), streamed as
// server-sent events. Codex reads these events of the stream:
//
//	response.created          the answer begins
//	response.output_item.done one per output item: a message
//	                          (output_text), a function_call (JSON
//	                          arguments as a string) or a custom_tool_call
//	                          (free-text input, apply_patch)
//	response.completed        the answer ends: its id and usage
//	                          (input_tokens with input_tokens_details
//	                          .cached_tokens, output_tokens, total_tokens)
//
// A stream that ends without response.completed is an error to Codex.
type openaiResponses struct{}

func (openaiResponses) name() string { return "openai-responses" }

func (openaiResponses) routes() []string { return []string{"POST /v1/responses"} }

// responsesRequest is the part of a Responses request the server reads.
type responsesRequest struct {
	Model        string            `json:"model"`
	Stream       bool              `json:"stream"`
	Instructions string            `json:"instructions"`
	Input        json.RawMessage   `json:"input"` // a string or items
	Tools        []json.RawMessage `json:"tools"`
}

// responsesItem is an input item.
type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"` // parts or a string
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"` // a string, or content parts
}

func (openaiResponses) decode(hr *http.Request, req *Request) error {
	req.Kind = KindTurn
	var b responsesRequest
	if err := json.Unmarshal(req.Body, &b); err != nil {
		return fmt.Errorf("decode body: %w", err)
	}
	req.Model, req.Stream, req.System = b.Model, b.Stream, b.Instructions
	for _, raw := range b.Tools {
		var t struct {
			Type string `json:"type"`
			Name string `json:"name"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return fmt.Errorf("decode tool: %w", err)
		}
		req.Tools = append(req.Tools, Tool{Name: cmpOr(t.Name, t.Type), Kind: t.Type})
	}
	if len(b.Input) > 0 && b.Input[0] == '"' {
		var s string
		if err := json.Unmarshal(b.Input, &s); err != nil {
			return fmt.Errorf("decode input: %w", err)
		}
		req.Messages = append(req.Messages, Message{Role: "user", Text: s})
		return nil
	}
	var items []responsesItem
	if err := json.Unmarshal(b.Input, &items); err != nil {
		return fmt.Errorf("decode input: %w", err)
	}
	for _, it := range items {
		switch it.Type {
		case "message", "":
			req.Messages = append(req.Messages, Message{Role: it.Role, Text: responsesText(it.Content)})
		case "function_call":
			req.Messages = append(req.Messages, Message{Role: "assistant", Calls: []Call{{ID: it.CallID, Name: it.Name, Raw: it.Arguments}}})
		case "custom_tool_call":
			req.Messages = append(req.Messages, Message{Role: "assistant", Calls: []Call{{ID: it.CallID, Name: it.Name, Raw: it.Input}}})
		case "function_call_output", "custom_tool_call_output":
			req.Messages = append(req.Messages, Message{Role: "tool", Results: []ToolResult{{CallID: it.CallID, Text: responsesText(it.Output)}}})
		default:
			// reasoning, compaction and other items: kept as a message of
			// their kind, without text, so a test can count them.
			req.Messages = append(req.Messages, Message{Role: it.Type})
		}
	}
	return nil
}

// responsesText is the text of message content or a tool output: a
// string, or its parts' texts joined by newlines.
func responsesText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		var obj struct {
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(raw, &obj) == nil && obj.Content != nil {
			return responsesText(obj.Content)
		}
		return string(raw)
	}
	var texts []string
	for _, p := range parts {
		if p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

var responsesIDs atomic.Int64

func responsesID(prefix string) string {
	return fmt.Sprintf("%s_agenttest%06d", prefix, responsesIDs.Add(1))
}

func (openaiResponses) write(w http.ResponseWriter, req *Request, turn Turn) error {
	var items []map[string]any
	if turn.Text != "" || len(turn.Calls) == 0 {
		items = append(items, map[string]any{
			"type": "message", "id": responsesID("msg"), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": turn.Text, "annotations": []any{}}},
		})
	}
	for _, c := range turn.Calls {
		id := c.ID
		if id == "" {
			id = responsesID("call")
		}
		if t, _ := req.Tool(c.Name); t.Kind == "custom" {
			in := c.Raw
			if in == "" {
				if s, ok := c.Input.(string); ok {
					in = s
				}
			}
			items = append(items, map[string]any{"type": "custom_tool_call", "id": responsesID("ctc"), "call_id": id,
				"name": c.Name, "input": in, "status": "completed"})
			continue
		}
		args, err := c.inputJSON()
		if err != nil {
			return err
		}
		items = append(items, map[string]any{"type": "function_call", "id": responsesID("fc"), "call_id": id,
			"name": c.Name, "arguments": args, "status": "completed"})
	}
	u := turn.Usage
	// Responses count cached tokens inside input_tokens.
	input := u.InputTokens + u.CacheRead + u.CacheWrite
	usage := map[string]any{
		"input_tokens":          input,
		"input_tokens_details":  map[string]any{"cached_tokens": u.CacheRead},
		"output_tokens":         u.OutputTokens,
		"output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens":          input + u.OutputTokens,
	}
	id := responsesID("resp")
	output := make([]any, len(items))
	for i, it := range items {
		output[i] = it
	}
	response := map[string]any{"id": id, "object": "response", "status": "completed", "model": req.Model,
		"output": output, "usage": usage}
	if !req.Stream {
		return writeJSON(w, response)
	}
	sse := newSSE(w)
	sse.event("response.created", map[string]any{"type": "response.created",
		"response": map[string]any{"id": id, "object": "response", "status": "in_progress", "model": req.Model, "output": []any{}}})
	for i, it := range items {
		sse.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": i, "item": it})
		if it["type"] == "message" {
			sse.event("response.output_text.delta", map[string]any{"type": "response.output_text.delta",
				"item_id": it["id"], "output_index": i, "content_index": 0, "delta": turn.Text})
		}
		sse.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": i, "item": it})
	}
	sse.event("response.completed", map[string]any{"type": "response.completed", "response": response})
	return sse.err
}
