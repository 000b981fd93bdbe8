package transcript

// Gemini CLI and Qwen Code (a fork of it) both keep a message's content as
// the Gemini API's parts: {"text"} (with "thought": true for reasoning),
// {"functionCall": {id, name, args}}, {"functionResponse": {id, name,
// response}}, {"inlineData"} and {"fileData"} for images and files.

import (
	"encoding/json"
	"strings"

	"github.com/agentledger/ledger/compact"
)

// genaiPart is one part of a Gemini API content.
type genaiPart struct {
	Text             *string         `json:"text"`
	Thought          bool            `json:"thought"`
	FunctionCall     *genaiCall      `json:"functionCall"`
	FunctionResponse *genaiResponse  `json:"functionResponse"`
	InlineData       json.RawMessage `json:"inlineData"`
	FileData         json.RawMessage `json:"fileData"`
}

type genaiCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type genaiResponse struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

// genaiUsage is the API's usageMetadata (Qwen Code's records) or Gemini
// CLI's "tokens" under the API's names.
type genaiUsage struct {
	PromptTokenCount        int64 `json:"promptTokenCount"`
	CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
	ThoughtsTokenCount      int64 `json:"thoughtsTokenCount"`
	CachedContentTokenCount int64 `json:"cachedContentTokenCount"`
}

// usage is u as ledger counts it: the prompt's cached tokens apart (the
// API counts them inside promptTokenCount), the reasoning inside the
// output as Claude's output_tokens has it. Nil when it counts nothing.
func (u genaiUsage) usage() *compact.Usage {
	if u.PromptTokenCount <= 0 && u.CandidatesTokenCount <= 0 {
		return nil
	}
	cached := min(max(u.CachedContentTokenCount, 0), max(u.PromptTokenCount, 0))
	return &compact.Usage{InputTokens: max(u.PromptTokenCount, 0) - cached, CacheReadInputTokens: cached,
		OutputTokens: max(u.CandidatesTokenCount, 0) + max(u.ThoughtsTokenCount, 0)}
}

// decodeParts reads a content that is a list of parts or a plain string
// (Gemini CLI writes a model's text as a string). ok is false for anything
// else.
func decodeParts(raw json.RawMessage) (parts []genaiPart, ok bool) {
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return nil, true
	case raw[0] == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		if s == "" {
			return nil, true
		}
		return []genaiPart{{Text: &s}}, true
	case raw[0] == '[':
		if json.Unmarshal(raw, &parts) != nil {
			return nil, false
		}
		return parts, true
	case raw[0] == '{':
		// A single part where a list is meant.
		var p genaiPart
		if json.Unmarshal(raw, &p) != nil {
			return nil, false
		}
		return []genaiPart{p}, true
	}
	return nil, false
}

// partBlocks turns parts into blocks: text, thinking, tool calls (whose id
// is the call's), tool results, images. A function response is a
// tool_result; results says whether any part was one.
func partBlocks(parts []genaiPart) (blocks []compact.Block, results bool) {
	for _, p := range parts {
		switch {
		case p.FunctionCall != nil:
			blocks = append(blocks, compact.Block{Kind: compact.BlockToolUse, ToolName: p.FunctionCall.Name,
				ToolID: p.FunctionCall.ID, Input: jsonInput(p.FunctionCall.Args)})
		case p.FunctionResponse != nil:
			text, failed := responseText(p.FunctionResponse.Response)
			blocks = append(blocks, compact.Block{Kind: compact.BlockToolResult, ToolID: p.FunctionResponse.ID,
				ToolName: p.FunctionResponse.Name, Text: text, IsError: failed})
			results = true
		case p.Text != nil && p.Thought:
			blocks = append(blocks, compact.Block{Kind: compact.BlockThinking, Text: *p.Text})
		case p.Text != nil:
			blocks = append(blocks, compact.Block{Kind: compact.BlockText, Text: *p.Text})
		case len(p.InlineData) > 0 || len(p.FileData) > 0:
			blocks = append(blocks, compact.Block{Kind: compact.BlockImage})
		}
	}
	return blocks, results
}

// jsonInput is a tool call's arguments as JSON text ("{}" for none).
func jsonInput(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return "{}"
	}
	return string(raw)
}

// responseText reads a function response: {"output": "..."} as the
// agents write it, {"error": "..."} for a failed call, anything else as
// its JSON. failed says the response was an error.
func responseText(raw json.RawMessage) (text string, failed bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	var r struct {
		Output json.RawMessage `json:"output"`
		Error  json.RawMessage `json:"error"`
	}
	if raw[0] != '{' || json.Unmarshal(raw, &r) != nil {
		return rawText(raw), false
	}
	var parts []string
	if len(r.Output) > 0 && string(r.Output) != "null" {
		parts = append(parts, rawText(r.Output))
	}
	if len(r.Error) > 0 && string(r.Error) != "null" {
		parts = append(parts, rawText(r.Error))
		failed = true
	}
	if parts == nil {
		return string(raw), false
	}
	return strings.Join(parts, "\n"), failed
}

// textOf joins the text parts of parts (not thoughts).
func textOf(parts []genaiPart) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Text == nil || p.Thought {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(*p.Text)
	}
	return b.String()
}

// snapshotText is a compression summary without what the agent appends
// after its <state_snapshot> (Qwen Code: "Resume the prior task using the
// summary above..."), trimmed.
func snapshotText(s string) string {
	const end = "</state_snapshot>"
	if i := strings.Index(s, end); i >= 0 {
		s = s[:i+len(end)]
	}
	return strings.TrimSpace(s)
}
