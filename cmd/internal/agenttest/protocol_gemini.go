package agenttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
)

// geminiAPI is Google's Gemini API (generativelanguage), as Gemini CLI
// calls it through @google/genai with GOOGLE_GEMINI_BASE_URL: POST
// /v1beta/models/{model}:{method}, the method after a colon in the last
// segment:
//
//	streamGenerateContent?alt=sse  a turn, streamed: each event a
//	                               GenerateContentResponse ("data: {...}")
//	generateContent                a turn as one JSON document (Gemini
//	                               CLI's router asking for JSON, its
//	                               compression and its verification)
//	countTokens                    {"totalTokens": N}
//
// A response is {candidates: [{content: {role: "model", parts: [{text} |
// {functionCall: {name, args}}]}, finishReason, index}], usageMetadata:
// {promptTokenCount (cached tokens included), cachedContentTokenCount,
// candidatesTokenCount, totalTokenCount}, modelVersion, responseId}. The
// stream sends the text in one event and the calls, the finishReason
// and the usage in the last.
type geminiAPI struct{}

func (geminiAPI) name() string { return "gemini" }

func (geminiAPI) routes() []string { return []string{"POST /v1beta/models/{call}"} }

// geminiContent is a Content of a request.
type geminiContent struct {
	Role  string `json:"role"`
	Parts []struct {
		Text         string `json:"text"`
		Thought      bool   `json:"thought"`
		FunctionCall *struct {
			ID   string          `json:"id"`
			Name string          `json:"name"`
			Args json.RawMessage `json:"args"`
		} `json:"functionCall"`
		FunctionResponse *struct {
			ID       string          `json:"id"`
			Name     string          `json:"name"`
			Response json.RawMessage `json:"response"`
		} `json:"functionResponse"`
	} `json:"parts"`
}

// geminiRequest is the part of a request the server reads (countTokens
// may wrap it in generateContentRequest).
type geminiRequest struct {
	Contents          []geminiContent `json:"contents"`
	SystemInstruction json.RawMessage `json:"systemInstruction"` // a Content or a string
	Tools             []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerateContentRequest *geminiRequest `json:"generateContentRequest"`
}

func (geminiAPI) decode(hr *http.Request, req *Request) error {
	model, method, ok := strings.Cut(hr.PathValue("call"), ":")
	if !ok {
		return fmt.Errorf("no method in %q (want MODEL:METHOD)", hr.PathValue("call"))
	}
	req.Model = model
	switch method {
	case "streamGenerateContent":
		req.Kind, req.Stream = KindTurn, true
	case "generateContent":
		req.Kind = KindTurn
	case "countTokens":
		req.Kind = KindCountTokens
	default:
		return fmt.Errorf("method %q is not served", method)
	}
	var b geminiRequest
	if err := json.Unmarshal(req.Body, &b); err != nil {
		return fmt.Errorf("decode body: %w", err)
	}
	if b.GenerateContentRequest != nil {
		b = *b.GenerateContentRequest
	}
	if len(b.SystemInstruction) > 0 && string(b.SystemInstruction) != "null" {
		var s string
		if json.Unmarshal(b.SystemInstruction, &s) == nil {
			req.System = s
		} else {
			var c geminiContent
			if err := json.Unmarshal(b.SystemInstruction, &c); err != nil {
				return fmt.Errorf("decode systemInstruction: %w", err)
			}
			req.System = geminiMessage(c).Text
		}
	}
	for _, t := range b.Tools {
		for _, f := range t.FunctionDeclarations {
			req.Tools = append(req.Tools, Tool{Name: f.Name, Kind: "function"})
		}
	}
	for _, c := range b.Contents {
		req.Messages = append(req.Messages, geminiMessage(c))
	}
	return nil
}

// geminiMessage is a Content as a Message: role "model" is "assistant",
// and a user content of function responses only is a "tool" message.
// Thoughts are not text.
func geminiMessage(c geminiContent) Message {
	m := Message{Role: c.Role}
	if m.Role == "model" {
		m.Role = "assistant"
	}
	var texts []string
	for _, p := range c.Parts {
		switch {
		case p.FunctionCall != nil:
			m.Calls = append(m.Calls, Call{ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Raw: string(p.FunctionCall.Args)})
		case p.FunctionResponse != nil:
			m.Results = append(m.Results, ToolResult{CallID: cmpOr(p.FunctionResponse.ID, p.FunctionResponse.Name),
				Text: string(p.FunctionResponse.Response)})
		case p.Text != "" && !p.Thought:
			texts = append(texts, p.Text)
		}
	}
	m.Text = strings.Join(texts, "\n")
	if m.Role == "user" && len(m.Results) > 0 && m.Text == "" && len(m.Calls) == 0 {
		m.Role = "tool"
	}
	return m
}

var geminiIDs atomic.Int64

func (geminiAPI) write(w http.ResponseWriter, req *Request, turn Turn) error {
	if req.Kind == KindCountTokens {
		return writeJSON(w, map[string]any{"totalTokens": len(req.Body)/4 + 1})
	}
	var calls []any
	for _, c := range turn.Calls {
		args, err := c.inputJSON()
		if err != nil {
			return err
		}
		if !json.Valid([]byte(args)) || !strings.HasPrefix(strings.TrimSpace(args), "{") {
			return fmt.Errorf("the args of %s are not a JSON object: %q", c.Name, args)
		}
		fc := map[string]any{"name": c.Name, "args": json.RawMessage(args)}
		if c.ID != "" {
			fc["id"] = c.ID
		}
		calls = append(calls, map[string]any{"functionCall": fc})
	}
	u := turn.Usage
	usage := map[string]any{
		"promptTokenCount":     u.Context(),
		"candidatesTokenCount": u.OutputTokens,
		"totalTokenCount":      u.Context() + u.OutputTokens,
	}
	if u.CacheRead > 0 {
		usage["cachedContentTokenCount"] = u.CacheRead
	}
	id := fmt.Sprintf("agenttest%06d", geminiIDs.Add(1))
	response := func(parts []any, last bool) map[string]any {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
		r := map[string]any{"candidates": []any{cand}, "modelVersion": req.Model, "responseId": id}
		if last {
			cand["finishReason"] = "STOP"
			r["usageMetadata"] = usage
		}
		return r
	}
	var text []any
	if turn.Text != "" || len(calls) == 0 {
		text = []any{map[string]any{"text": turn.Text}}
	}
	if !req.Stream {
		return writeJSON(w, response(append(text, calls...), true))
	}
	sse := newSSE(w)
	if len(calls) == 0 {
		sse.event("", response(text, true))
		return sse.err
	}
	if text != nil {
		sse.event("", response(text, false))
	}
	sse.event("", response(calls, true))
	return sse.err
}
