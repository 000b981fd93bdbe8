package agenttest

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// sseData reads an event stream's data lines, as the agents' clients do
// (the OpenAI SDK Qwen Code, Copilot CLI and Pi use; @google/genai for
// Gemini CLI): one JSON document per "data: " line, "[DONE]" ending it.
func sseData(t *testing.T, resp *http.Response) (docs []json.RawMessage, done bool) {
	t.Helper()
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q, want text/event-stream", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		if done {
			t.Errorf("data after [DONE]: %s", data)
		}
		if !json.Valid([]byte(data)) {
			t.Fatalf("event is not JSON: %q", data)
		}
		docs = append(docs, json.RawMessage(data))
	}
	return docs, done
}

// chatChunk is a Chat Completions stream chunk.
type chatChunk struct {
	Object  string `json:"object"`
	Choices []struct {
		Delta struct {
			Role      string `json:"role"`
			Content   string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		TotalTokens         int64 `json:"total_tokens"`
		PromptTokensDetails struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

// chatAnswer is a stream put together as the OpenAI SDK's
// ChatCompletionStream accumulates it: the content concatenated, tool
// calls by index (id and name from their first delta, the arguments
// concatenated), the finish reason, the usage.
type chatAnswer struct {
	text   string
	calls  []struct{ id, name, args string }
	finish string
	usage  *chatChunk
	// usageWithChoices: the usage came on a chunk that has choices.
	usageWithChoices bool
}

func readChat(t *testing.T, resp *http.Response) chatAnswer {
	t.Helper()
	docs, done := sseData(t, resp)
	if !done {
		t.Errorf("the stream did not end with [DONE]")
	}
	var a chatAnswer
	for _, d := range docs {
		var c chatChunk
		if err := json.Unmarshal(d, &c); err != nil {
			t.Fatalf("chunk %s: %v", d, err)
		}
		if c.Object != "chat.completion.chunk" {
			t.Errorf("chunk object %q", c.Object)
		}
		if c.Usage != nil {
			cc := c
			a.usage, a.usageWithChoices = &cc, len(c.Choices) > 0
		}
		for _, ch := range c.Choices {
			a.text += ch.Delta.Content
			for _, tc := range ch.Delta.ToolCalls {
				for len(a.calls) <= tc.Index {
					a.calls = append(a.calls, struct{ id, name, args string }{})
				}
				call := &a.calls[tc.Index]
				if tc.ID != "" {
					call.id = tc.ID
				}
				if tc.Function.Name != "" {
					call.name = tc.Function.Name
				}
				call.args += tc.Function.Arguments
			}
			if ch.FinishReason != nil {
				a.finish = *ch.FinishReason
			}
		}
	}
	return a
}

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("POST %s: %s: %s", url, resp.Status, b)
	}
	return resp
}

// TestChatCompletionsStream: a streamed Chat Completions answer with text
// and two tool calls, put together as the OpenAI SDK does, with the usage
// in a chunk of its own (choices empty) when stream_options asks for it;
// the request decoded into the log (the system message, the assistant's
// tool calls, the tool's result).
func TestChatCompletionsStream(t *testing.T) {
	t.Parallel()
	steps := NewSteps(Fixed(Turn{Text: "writing both", Calls: []Call{
		{Name: "write_file", Input: map[string]any{"file_path": "/p/a.txt", "content": "a\n"}},
		{ID: "call_fixed", Name: "run_shell_command", Input: map[string]any{"command": "ls"}},
	}, Usage: Usage{InputTokens: 100, CacheRead: 180_000, OutputTokens: 9}}))
	s := NewServer(t, Rules(steps.Next, Rule{Name: "compaction", When: IsQwenCompaction, Then: Always(QwenSnapshot("the summary"))}))
	body := `{"model":"m","stream":true,"stream_options":{"include_usage":true},
		"messages":[{"role":"system","content":"be brief"},
		{"role":"user","content":[{"type":"text","text":"write a.txt"}]},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c0","type":"function","function":{"name":"ls","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"c0","content":"a.txt b.txt"}],
		"tools":[{"type":"function","function":{"name":"write_file","parameters":{}}},{"type":"function","function":{"name":"run_shell_command"}}]}`
	a := readChat(t, post(t, s.URL()+"/v1/chat/completions", body))
	if a.text != "writing both" || a.finish != "tool_calls" || len(a.calls) != 2 {
		t.Fatalf("answer = %+v, want the text and two calls", a)
	}
	if c := a.calls[0]; c.id == "" || c.name != "write_file" || c.args != `{"content":"a\n","file_path":"/p/a.txt"}` {
		t.Errorf("first call = %+v", c)
	}
	if c := a.calls[1]; c.id != "call_fixed" || c.name != "run_shell_command" || c.args != `{"command":"ls"}` {
		t.Errorf("second call = %+v", c)
	}
	if u := a.usage; u == nil || a.usageWithChoices || u.Usage.PromptTokens != 180_100 || u.Usage.PromptTokensDetails.CachedTokens != 180_000 ||
		u.Usage.CompletionTokens != 9 || u.Usage.TotalTokens != 180_109 {
		t.Errorf("usage = %+v (on a chunk with choices: %v), want 180100 prompt (180000 cached), 9 completion, in a chunk of its own", u, a.usageWithChoices)
	}

	// The compaction request has its rule; the steps are not used up.
	a = readChat(t, post(t, s.URL()+"/v1/chat/completions", `{"model":"m","stream":true,"messages":[
		{"role":"user","content":"hi"},{"role":"user","content":"`+QwenCompressionDirective+`"}]}`))
	if !strings.Contains(a.text, "<state_snapshot>") || a.finish != "stop" || len(a.calls) != 0 {
		t.Errorf("compaction answer = %+v", a)
	}
	// Without include_usage, the usage rides on the finish chunk.
	if a.usage == nil || !a.usageWithChoices {
		t.Errorf("usage without include_usage = %+v (with choices %v), want it on the finish chunk", a.usage, a.usageWithChoices)
	}
	if steps.Taken() != 1 {
		t.Errorf("steps taken = %d, want 1", steps.Taken())
	}

	req := s.Requests()[0]
	if req.Protocol != "openai-chat" || req.Kind != KindTurn || !req.Stream || req.Model != "m" || req.System != "be brief" ||
		req.LastUserText() != "write a.txt" || !req.HasTool("write_file") || !req.HasTool("run_shell_command") {
		t.Errorf("request decoded as %+v", req)
	}
	if c := req.Messages[2].Calls; len(c) != 1 || c[0].ID != "c0" || c[0].Name != "ls" {
		t.Errorf("assistant calls = %+v", c)
	}
	if r := req.Results(); len(r) != 1 || r[0].CallID != "c0" || r[0].Text != "a.txt b.txt" || req.Last().Role != "tool" {
		t.Errorf("results = %+v", r)
	}
	if errs := s.Errors(); len(errs) > 0 {
		t.Errorf("server errors: %v", errs)
	}
}

// TestChatCompletionsWholeAndModels: an answer not streamed is one
// chat.completion (content null beside tool calls), and GET /v1/models
// lists a model (Copilot CLI asks before its first turn) without using
// the script.
func TestChatCompletionsWholeAndModels(t *testing.T) {
	t.Parallel()
	s := NewServer(t, Always(CallTool("create", map[string]any{"path": "a.txt", "file_text": "a"}).WithUsage(Usage{InputTokens: 50, OutputTokens: 5})))
	resp, err := http.Get(s.URL() + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	var models struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&models); err != nil || len(models.Data) != 1 || models.Data[0].ID != ChatModel {
		t.Errorf("models = %+v, %v", models, err)
	}
	resp.Body.Close()

	resp = post(t, s.URL()+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"go"}],"tools":[{"type":"function","function":{"name":"create"}}]}`)
	defer resp.Body.Close()
	var whole struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct {
				Content   *string `json:"content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			PromptTokens int64 `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&whole); err != nil {
		t.Fatal(err)
	}
	if len(whole.Choices) != 1 || whole.Object != "chat.completion" {
		t.Fatalf("answer = %+v", whole)
	}
	c := whole.Choices[0]
	if c.Message.Content != nil || len(c.Message.ToolCalls) != 1 || c.Message.ToolCalls[0].Function.Name != "create" ||
		c.Message.ToolCalls[0].Function.Arguments != `{"file_text":"a","path":"a.txt"}` || c.FinishReason != "tool_calls" || whole.Usage.PromptTokens != 50 {
		t.Errorf("answer = %+v", whole)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].Kind != KindModels || reqs[1].Stream || len(s.Turns()) != 1 {
		t.Errorf("requests: %s", s.Digest())
	}
}

// geminiChunk is a GenerateContentResponse.
type geminiChunk struct {
	Candidates []struct {
		Content struct {
			Role  string `json:"role"`
			Parts []struct {
				Text         *string `json:"text"`
				FunctionCall *struct {
					Name string         `json:"name"`
					Args map[string]any `json:"args"`
				} `json:"functionCall"`
			} `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	UsageMetadata *struct {
		PromptTokenCount        int64 `json:"promptTokenCount"`
		CachedContentTokenCount int64 `json:"cachedContentTokenCount"`
		CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
		TotalTokenCount         int64 `json:"totalTokenCount"`
	} `json:"usageMetadata"`
}

// TestGeminiStream: streamGenerateContent?alt=sse answers text, then the
// function calls with the finish reason and the usage, as @google/genai
// reads them (each event one GenerateContentResponse); the request's
// systemInstruction, functionDeclarations, functionCall and
// functionResponse parts are decoded into the log; the router's
// generateContent gets its JSON, and countTokens a count.
func TestGeminiStream(t *testing.T) {
	t.Parallel()
	steps := NewSteps(Fixed(Turn{Text: "on it", Calls: []Call{{Name: "write_file", Input: map[string]any{"file_path": "/p/a.txt", "content": "a\n"}}},
		Usage: Usage{InputTokens: 10, CacheRead: 900_000, OutputTokens: 7}}))
	s := NewServer(t, Rules(steps.Next,
		Rule{Name: "router", When: IsGeminiRouter, Then: Always(GeminiRouterAnswer())},
		Rule{Name: "compression", When: IsGeminiCompression, Then: Always(GeminiSnapshot("the summary"))}))
	body := `{"contents":[{"role":"user","parts":[{"text":"write a.txt"}]},
		{"role":"model","parts":[{"text":"thinking","thought":true},{"functionCall":{"id":"f0","name":"list_directory","args":{"dir_path":"."}}}]},
		{"role":"user","parts":[{"functionResponse":{"id":"f0","name":"list_directory","response":{"output":"b.txt"}}}]}],
		"systemInstruction":{"role":"user","parts":[{"text":"be brief"}]},
		"tools":[{"functionDeclarations":[{"name":"write_file"},{"name":"list_directory"}]}],
		"generationConfig":{"temperature":0}}`
	docs, _ := sseData(t, post(t, s.URL()+"/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse", body))
	var text string
	var calls []string
	var finish string
	var usage *geminiChunk
	for _, d := range docs {
		var c geminiChunk
		if err := json.Unmarshal(d, &c); err != nil {
			t.Fatal(err)
		}
		if len(c.Candidates) != 1 || c.Candidates[0].Content.Role != "model" {
			t.Fatalf("chunk %s", d)
		}
		for _, p := range c.Candidates[0].Content.Parts {
			if p.Text != nil {
				text += *p.Text
			}
			if p.FunctionCall != nil {
				calls = append(calls, p.FunctionCall.Name+" "+p.FunctionCall.Args["file_path"].(string))
			}
		}
		if c.Candidates[0].FinishReason != "" {
			finish = c.Candidates[0].FinishReason
		}
		if c.UsageMetadata != nil {
			cc := c
			usage = &cc
		}
	}
	if text != "on it" || len(calls) != 1 || calls[0] != "write_file /p/a.txt" || finish != "STOP" {
		t.Errorf("answer: text %q calls %v finish %q", text, calls, finish)
	}
	if usage == nil || usage.UsageMetadata.PromptTokenCount != 900_010 || usage.UsageMetadata.CachedContentTokenCount != 900_000 ||
		usage.UsageMetadata.CandidatesTokenCount != 7 || usage.UsageMetadata.TotalTokenCount != 900_017 {
		t.Errorf("usage = %+v", usage)
	}

	// The router asks generateContent for JSON.
	resp := post(t, s.URL()+"/v1beta/models/gemini-2.5-flash-lite:generateContent", `{"contents":[{"role":"user","parts":[{"text":"write a.txt"}]}],
		"systemInstruction":{"parts":[{"text":"\n`+GeminiRouterPrompt+` Your sole function..."}]},"generationConfig":{"responseMimeType":"application/json"}}`)
	var whole geminiChunk
	err := json.NewDecoder(resp.Body).Decode(&whole)
	resp.Body.Close()
	if err != nil || len(whole.Candidates) != 1 || len(whole.Candidates[0].Content.Parts) != 1 || whole.Candidates[0].Content.Parts[0].Text == nil {
		t.Fatalf("router answer = %+v, %v", whole, err)
	}
	var route struct {
		Score int `json:"complexity_score"`
	}
	if err := json.Unmarshal([]byte(*whole.Candidates[0].Content.Parts[0].Text), &route); err != nil || route.Score < 1 || route.Score > 100 {
		t.Errorf("router answer %q: %v", *whole.Candidates[0].Content.Parts[0].Text, err)
	}
	if steps.Taken() != 1 {
		t.Errorf("steps taken = %d, want 1 (the router has a rule of its own)", steps.Taken())
	}

	resp = post(t, s.URL()+"/v1beta/models/gemini-3-pro-preview:countTokens", `{"contents":[{"role":"user","parts":[{"text":"count me"}]}]}`)
	var count struct {
		TotalTokens int `json:"totalTokens"`
	}
	err = json.NewDecoder(resp.Body).Decode(&count)
	resp.Body.Close()
	if err != nil || count.TotalTokens <= 0 {
		t.Errorf("countTokens = %+v, %v", count, err)
	}

	reqs := s.Requests()
	if len(reqs) != 3 || reqs[2].Kind != KindCountTokens || reqs[1].Stream || reqs[1].Model != "gemini-2.5-flash-lite" {
		t.Fatalf("requests:\n%s", s.Digest())
	}
	req := reqs[0]
	if req.Protocol != "gemini" || req.Kind != KindTurn || !req.Stream || req.Model != "gemini-3-pro-preview" || req.System != "be brief" ||
		!req.HasTool("write_file") || req.LastUserText() != "write a.txt" {
		t.Errorf("request decoded as %+v", req)
	}
	if m := req.Messages[1]; m.Role != "assistant" || m.Text != "" || len(m.Calls) != 1 || m.Calls[0].Name != "list_directory" || m.Calls[0].ID != "f0" {
		t.Errorf("model message = %+v (a thought is not text)", m)
	}
	if r := req.Results(); len(r) != 1 || r[0].CallID != "f0" || !strings.Contains(r[0].Text, "b.txt") || req.Last().Role != "tool" {
		t.Errorf("results = %+v", r)
	}
	if errs := s.Errors(); len(errs) > 0 {
		t.Errorf("server errors: %v", errs)
	}
}

// TestGeminiUnknownMethod: a method the server does not serve is an
// error the log keeps.
func TestGeminiUnknownMethod(t *testing.T) {
	t.Parallel()
	s := NewServer(t, Always(Text("x")))
	resp, err := http.Post(s.URL()+"/v1beta/models/m:embedContent", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || len(s.Errors()) != 1 || !strings.Contains(s.Errors()[0], "embedContent") {
		t.Errorf("status %d, errors %v", resp.StatusCode, s.Errors())
	}
}
