package agenttest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Kinds of request: what the agent asked the model server for.
const (
	// KindTurn asks the model for an answer: the script is consulted.
	KindTurn = "turn"
	// KindCountTokens asks how many tokens a request would take (the
	// Anthropic count_tokens endpoint); answered from the body's size.
	KindCountTokens = "count_tokens"
	// KindModels asks for the model list (GET /v1/models of Chat
	// Completions); answered with the one model ChatModel names.
	KindModels = "models"
)

// Request is one request an agent sent, decoded into a shape every wire
// protocol shares, with the raw body beside it. A script reads it to decide
// its answer; a test reads the server's log of them to assert what the
// model was sent.
type Request struct {
	// Seq is the request's place in the order of arrival, from 1.
	Seq int
	// Protocol is the wire protocol's name ("anthropic", "openai-responses",
	// "openai-chat", "gemini").
	Protocol string
	// Kind is KindTurn, KindCountTokens or KindModels.
	Kind string
	// Method, Path and Query are the HTTP request line's.
	Method, Path, Query string
	// Header is the request's header.
	Header http.Header
	// Body is the request body as sent (JSON).
	Body json.RawMessage
	// Model is the model the request names.
	Model string
	// Stream says the agent asked for a streamed (SSE) answer.
	Stream bool
	// System is the system prompt (Anthropic system, OpenAI instructions,
	// Chat Completions' system and developer messages, Gemini
	// systemInstruction).
	System string
	// Tools are the tools the request offers the model, in its order.
	Tools []Tool
	// Messages is the conversation the request carries, oldest first.
	Messages []Message

	// includeUsage: a Chat Completions stream asked for a usage chunk
	// (stream_options.include_usage).
	includeUsage bool
}

// Tool is a tool offered to the model.
type Tool struct {
	// Name is the tool's name, as a call must name it.
	Name string
	// Kind is how calls pass their input: "function" (a JSON object) or
	// "custom" (free text, such as Codex's apply_patch); other kinds are
	// the provider's own tools (Anthropic's web search: its "type").
	Kind string
}

// Message is one message of a request's conversation. Protocols that send
// tool calls and results as items of their own (OpenAI Responses) give one
// Message per item.
type Message struct {
	// Role is "user", "assistant", "system", "developer" or "tool".
	Role string
	// Text is the message's text parts, joined by newlines.
	Text string
	// Calls are the tool calls an assistant message made.
	Calls []Call
	// Results are the tool results the message carries.
	Results []ToolResult
}

// ToolResult is a tool's result as the agent sends it back.
type ToolResult struct {
	CallID  string
	Text    string
	IsError bool
}

// Tool returns the offered tool named name.
func (r *Request) Tool(name string) (Tool, bool) {
	for _, t := range r.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// HasTool reports whether the request offers a tool named name.
func (r *Request) HasTool(name string) bool {
	_, ok := r.Tool(name)
	return ok
}

// FirstTool returns the first of names the request offers, or "".
func (r *Request) FirstTool(names ...string) string {
	for _, n := range names {
		if r.HasTool(n) {
			return n
		}
	}
	return ""
}

// Last returns the last message, or a zero Message when there is none.
func (r *Request) Last() Message {
	if len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// LastUserText is the text of the last message with role "user" ("" when
// there is none).
func (r *Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Text
		}
	}
	return ""
}

// Contains reports whether s is in the system prompt or in any message's
// text or tool results: whether the model was sent s.
func (r *Request) Contains(s string) bool {
	if strings.Contains(r.System, s) {
		return true
	}
	for _, m := range r.Messages {
		if strings.Contains(m.Text, s) {
			return true
		}
		for _, res := range m.Results {
			if strings.Contains(res.Text, s) {
				return true
			}
		}
	}
	return false
}

// Results lists every tool result the request carries, oldest first.
func (r *Request) Results() []ToolResult {
	var out []ToolResult
	for _, m := range r.Messages {
		out = append(out, m.Results...)
	}
	return out
}
