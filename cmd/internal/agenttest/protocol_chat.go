package agenttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// openaiChat is OpenAI's Chat Completions API, as Qwen Code, Copilot CLI
// (offline, with a provider URL), OpenCode and Pi call it: POST
// /v1/chat/completions, streamed as server-sent events when the body says
// "stream": true, and GET /v1/models (Copilot CLI lists the provider's
// models first). A stream is:
//
//	a chunk with delta.role "assistant"
//	a chunk with delta.content (the text), when there is text
//	per tool call, a chunk with delta.tool_calls[{index, id, type,
//	  function: {name, arguments: ""}}], then one with the arguments
//	a chunk with an empty delta and finish_reason ("stop", "tool_calls")
//	with stream_options.include_usage: a chunk with "choices": [] and
//	  usage (prompt_tokens, prompt_tokens_details.cached_tokens,
//	  completion_tokens, total_tokens); without it, the usage rides on the
//	  finish chunk, as OpenAI-compatible servers commonly send it
//	data: [DONE]
type openaiChat struct{}

func (openaiChat) name() string { return "openai-chat" }

func (openaiChat) routes() []string {
	return []string{"POST /v1/chat/completions", "GET /v1/models"}
}

// ChatModel is the model id the Chat Completions model list offers.
const ChatModel = "agenttest-model"

// chatRequest is the part of a Chat Completions request the server reads.
type chatRequest struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"` // a string, parts, or null
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

func (openaiChat) decode(hr *http.Request, req *Request) error {
	if hr.Method == http.MethodGet {
		req.Kind = KindModels
		return nil
	}
	req.Kind = KindTurn
	var b chatRequest
	if err := json.Unmarshal(req.Body, &b); err != nil {
		return fmt.Errorf("decode body: %w", err)
	}
	req.Model, req.Stream = b.Model, b.Stream
	req.includeUsage = b.StreamOptions != nil && b.StreamOptions.IncludeUsage
	for _, t := range b.Tools {
		req.Tools = append(req.Tools, Tool{Name: cmpOr(t.Function.Name, t.Type), Kind: t.Type})
	}
	var system []string
	for _, m := range b.Messages {
		msg := Message{Role: m.Role, Text: responsesText(m.Content)}
		switch m.Role {
		case "system", "developer":
			system = append(system, msg.Text)
		case "tool":
			msg.Results = []ToolResult{{CallID: m.ToolCallID, Text: msg.Text}}
			msg.Text = ""
		}
		for _, c := range m.ToolCalls {
			msg.Calls = append(msg.Calls, Call{ID: c.ID, Name: c.Function.Name, Raw: c.Function.Arguments})
		}
		req.Messages = append(req.Messages, msg)
	}
	req.System = strings.Join(system, "\n")
	return nil
}

var chatIDs atomic.Int64

func chatID(prefix string) string {
	return fmt.Sprintf("%s_agenttest%06d", prefix, chatIDs.Add(1))
}

// chatUsage is a usage object of the API: prompt_tokens counts the cached
// tokens too.
func chatUsage(u Usage) map[string]any {
	prompt := u.Context()
	return map[string]any{
		"prompt_tokens":             prompt,
		"prompt_tokens_details":     map[string]any{"cached_tokens": u.CacheRead},
		"completion_tokens":         u.OutputTokens,
		"completion_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens":              prompt + u.OutputTokens,
	}
}

func (openaiChat) write(w http.ResponseWriter, req *Request, turn Turn) error {
	if req.Kind == KindModels {
		return writeJSON(w, map[string]any{"object": "list", "data": []any{
			map[string]any{"id": ChatModel, "object": "model", "created": 0, "owned_by": "agenttest"}}})
	}
	type call struct{ id, name, args string }
	var calls []call
	for _, c := range turn.Calls {
		args, err := c.inputJSON()
		if err != nil {
			return err
		}
		if !json.Valid([]byte(args)) {
			return fmt.Errorf("the arguments of %s are not JSON: %q", c.Name, args)
		}
		id := c.ID
		if id == "" {
			id = chatID("call")
		}
		calls = append(calls, call{id, c.Name, args})
	}
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	id, created := chatID("chatcmpl"), time.Now().Unix()
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": nil}
		if turn.Text != "" || len(calls) == 0 {
			msg["content"] = turn.Text
		}
		if len(calls) > 0 {
			var tc []any
			for _, c := range calls {
				tc = append(tc, map[string]any{"id": c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": c.args}})
			}
			msg["tool_calls"] = tc
		}
		return writeJSON(w, map[string]any{"id": id, "object": "chat.completion", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": chatUsage(turn.Usage)})
	}
	sse := newSSE(w)
	chunk := func(delta map[string]any, finish any, extra map[string]any) {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		for k, v := range extra {
			c[k] = v
		}
		sse.event("", c)
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	if turn.Text != "" {
		chunk(map[string]any{"content": turn.Text}, nil, nil)
	}
	for i, c := range calls {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.id, "type": "function",
			"function": map[string]any{"name": c.name, "arguments": ""}}}}, nil, nil)
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": c.args}}}}, nil, nil)
	}
	if req.includeUsage {
		chunk(map[string]any{}, finish, nil)
		sse.event("", map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{}, "usage": chatUsage(turn.Usage)})
	} else {
		chunk(map[string]any{}, finish, map[string]any{"usage": chatUsage(turn.Usage)})
	}
	sse.raw("[DONE]")
	return sse.err
}
