package agenttest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// TestAnthropicStreamWithTheSDK drives the server with Anthropic's own Go
// SDK, which parses the event stream as Claude Code's TypeScript SDK does:
// a tool call, then text, with the usage each turn reports, and the
// requests decoded into the log.
func TestAnthropicStreamWithTheSDK(t *testing.T) {
	t.Parallel()
	steps := NewSteps(
		Fixed(CallTool("Write", map[string]any{"file_path": "/w/notes.txt", "content": "a\n"}).WithUsage(Usage{InputTokens: 10, CacheRead: 990_000, OutputTokens: 7})),
		Fixed(Text("written")),
	)
	s := NewServer(t, Rules(steps.Next, Rule{Name: "compaction", When: IsClaudeCompaction, Then: Always(ClaudeSummary("the summary"))}))
	client := sdk.NewClient(option.WithoutEnvironmentDefaults(), option.WithAPIKey("k"), option.WithBaseURL(s.URL()), option.WithMaxRetries(0))
	ctx := context.Background()
	tools := []sdk.ToolUnionParam{{OfTool: &sdk.ToolParam{Name: "Write", InputSchema: sdk.ToolInputSchemaParam{Properties: map[string]any{}}}}}

	stream := client.Messages.NewStreaming(ctx, sdk.MessageNewParams{
		Model: "claude-opus-5-5", MaxTokens: 100, Tools: tools,
		System:   []sdk.TextBlockParam{{Text: "You are a test."}},
		Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("write notes.txt"))},
	})
	var msg sdk.Message
	for stream.Next() {
		if err := msg.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if len(msg.Content) != 1 || msg.Content[0].Type != "tool_use" || msg.Content[0].Name != "Write" {
		t.Fatalf("content = %+v, want one Write tool_use", msg.Content)
	}
	var in map[string]string
	if err := json.Unmarshal(msg.Content[0].Input, &in); err != nil || in["file_path"] != "/w/notes.txt" {
		t.Errorf("tool input = %s (%v)", msg.Content[0].Input, err)
	}
	if msg.StopReason != "tool_use" || msg.Usage.CacheReadInputTokens != 990_000 || msg.Usage.InputTokens != 10 || msg.Usage.OutputTokens != 7 {
		t.Errorf("stop %q usage %+v, want tool_use, 10 input, 990000 cache read, 7 output", msg.StopReason, msg.Usage)
	}

	// The tool result goes back; the answer is text, not streamed this time.
	id := msg.Content[0].ID
	resp, err := client.Messages.New(ctx, sdk.MessageNewParams{
		Model: "claude-opus-5-5", MaxTokens: 100, Tools: tools,
		Messages: []sdk.MessageParam{
			sdk.NewUserMessage(sdk.NewTextBlock("write notes.txt")),
			msg.ToParam(),
			sdk.NewUserMessage(sdk.NewToolResultBlock(id, "File created", false)),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Content) != 1 || resp.Content[0].Text != "written" || resp.StopReason != "end_turn" {
		t.Errorf("second answer = %+v", resp)
	}

	// A compaction request is answered by its rule, without using a step.
	resp, err = client.Messages.New(ctx, sdk.MessageNewParams{Model: "claude-opus-5-5", MaxTokens: 100,
		Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("hi\n\n" + ClaudeCompactionPrompt + ". Do NOT call any tools."))}})
	if err != nil || !strings.Contains(resp.Content[0].Text, "<summary>\nthe summary\n</summary>") {
		t.Errorf("compaction answer = %+v, %v", resp, err)
	}
	if steps.Taken() != 2 {
		t.Errorf("steps taken = %d, want 2 (the compaction has a rule of its own)", steps.Taken())
	}

	count, err := client.Messages.CountTokens(ctx, sdk.MessageCountTokensParams{Model: "claude-opus-5-5",
		Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("count me"))}})
	if err != nil || count.InputTokens <= 0 {
		t.Errorf("count_tokens = %+v, %v", count, err)
	}

	reqs := s.Requests()
	if len(reqs) != 4 {
		t.Fatalf("logged %d requests, want 4:\n%s", len(reqs), s.Digest())
	}
	first := reqs[0]
	if first.Protocol != "anthropic" || first.Kind != KindTurn || !first.Stream || first.Model != "claude-opus-5-5" ||
		first.System != "You are a test." || !first.HasTool("Write") || first.LastUserText() != "write notes.txt" {
		t.Errorf("first request decoded as %+v", first)
	}
	second := reqs[1]
	if r := second.Results(); len(r) != 1 || r[0].CallID != id || r[0].Text != "File created" || second.Stream {
		t.Errorf("second request's results = %+v (stream %v)", r, second.Stream)
	}
	if c := second.Messages[1].Calls; len(c) != 1 || c[0].Name != "Write" || c[0].ID != id {
		t.Errorf("second request's assistant calls = %+v", c)
	}
	if reqs[3].Kind != KindCountTokens {
		t.Errorf("count_tokens request kind = %q", reqs[3].Kind)
	}
	if errs := s.Errors(); len(errs) > 0 {
		t.Errorf("server errors: %v", errs)
	}
}

// TestResponsesStream reads the Responses API's event stream as Codex
// does (codex-api's sse/responses.rs): output_item.done items, then
// response.completed with the usage; a custom tool is called with free
// text, a function tool with JSON arguments.
func TestResponsesStream(t *testing.T) {
	t.Parallel()
	s := NewServer(t, func(r *Request) Turn {
		return Turn{Text: "on it", Calls: []Call{
			{Name: "apply_patch", Raw: "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n"},
			{Name: "exec_command", Input: map[string]any{"cmd": "ls"}},
		}, Usage: Usage{InputTokens: 100, CacheRead: 150_000, OutputTokens: 5}}
	})
	body := `{"model":"gpt-5.5","stream":true,"instructions":"be brief","tools":[
		{"type":"custom","name":"apply_patch","format":{"type":"grammar"}},
		{"type":"function","name":"exec_command","parameters":{}},
		{"type":"web_search"}],
		"input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"rules"}]},
		{"type":"message","role":"user","content":[{"type":"input_text","text":"add a.txt"}]},
		{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"c0"},
		{"type":"function_call_output","call_id":"c0","output":"ok"}]}`
	resp, err := http.Post(s.URL()+"/v1/responses", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	var items []map[string]any
	var completed map[string]any
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type     string         `json:"type"`
			Item     map[string]any `json:"item"`
			Response map[string]any `json:"response"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		switch ev.Type {
		case "response.output_item.done":
			items = append(items, ev.Item)
		case "response.completed":
			completed = ev.Response
		}
	}
	if len(items) != 3 || items[0]["type"] != "message" || items[1]["type"] != "custom_tool_call" || items[2]["type"] != "function_call" {
		t.Fatalf("items = %v", items)
	}
	if items[1]["input"] != "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n" || items[2]["arguments"] != `{"cmd":"ls"}` {
		t.Errorf("calls = %v, %v", items[1], items[2])
	}
	usage, _ := completed["usage"].(map[string]any)
	if completed["id"] == "" || usage["input_tokens"] != float64(150_100) || usage["total_tokens"] != float64(150_105) {
		t.Errorf("completed = %v", completed)
	}
	req := s.Requests()[0]
	if req.Protocol != "openai-responses" || req.System != "be brief" || len(req.Messages) != 4 ||
		req.LastUserText() != "add a.txt" || req.Messages[0].Role != "developer" {
		t.Errorf("request decoded as %+v", req)
	}
	if tl, _ := req.Tool("apply_patch"); tl.Kind != "custom" || !req.HasTool("web_search") {
		t.Errorf("tools = %+v", req.Tools)
	}
	if r := req.Results(); len(r) != 1 || r[0].CallID != "c0" || r[0].Text != "ok" {
		t.Errorf("results = %+v", r)
	}
}

// TestUnknownPathIsLogged: a request no protocol answers gets a 404, and
// the log keeps it, so a test sees what the agent asked for.
func TestUnknownPathIsLogged(t *testing.T) {
	t.Parallel()
	s := NewServer(t, Always(Text("x")))
	resp, err := http.Get(s.URL() + "/v1/embeddings")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("status %d, want 404", resp.StatusCode)
	}
	if r := s.Requests(); len(r) != 1 || r[0].Path != "/v1/embeddings" || len(s.Errors()) != 1 {
		t.Errorf("requests %+v, errors %v", r, s.Errors())
	}
}

// TestInstallAgents installs every pinned agent (only when it is not in
// the cache folder yet) and checks each answers to its version. .ci/run
// runs it with LEDGER_REQUIRE_AGENTS=1 before the tests, as it installs
// Chromium and PostgreSQL.
func TestInstallAgents(t *testing.T) {
	for _, a := range Agents() {
		path := a.Require(t)
		t.Logf("%s %s: %s", a.Package, a.Version, path)
	}
}

// TestAgentCheckRunsOncePerInstall: an installed agent's command is run
// for its version once per install, not in every test process, and an
// install that is not the pinned version still fails the check: its
// package.json, read every time, or its command, run again whenever the
// command's file or npm's lock file of the install changed.
func TestAgentCheckRunsOncePerInstall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := Agent{Name: "fake", Package: "@fake/cli", Version: "1.2.3", Bin: "fake", VersionArgs: []string{"--version"}}
	prefix := a.prefix(dir)
	pkgDir := filepath.Join(prefix, "node_modules", "@fake", "cli")
	bin := filepath.Join(prefix, "node_modules", ".bin")
	runs := filepath.Join(prefix, "runs")
	for _, d := range []string{pkgDir, bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, text string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(name, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
	script := func(version string) {
		t.Helper()
		write(filepath.Join(pkgDir, "cli.sh"), "#!/bin/sh\necho run >>"+runs+"\necho "+version+"\n", 0o755)
	}
	write(filepath.Join(pkgDir, "package.json"), `{"name": "@fake/cli", "version": "1.2.3"}`, 0o644)
	lock := filepath.Join(prefix, "node_modules", ".package-lock.json")
	write(lock, `{"lockfileVersion": 3}`, 0o644)
	script("1.2.3")
	if err := os.Symlink("../@fake/cli/cli.sh", filepath.Join(bin, "fake")); err != nil {
		t.Fatal(err)
	}
	ranTimes := func() int {
		b, _ := os.ReadFile(runs)
		return strings.Count(string(b), "run\n")
	}
	ctx := context.Background()

	for i := 0; i < 2; i++ {
		if err := a.check(ctx, dir); err != nil {
			t.Fatalf("check %d: %v", i, err)
		}
	}
	if n := ranTimes(); n != 1 {
		t.Fatalf("the command ran %d times for two checks of one install, want 1", n)
	}

	// npm installed into the prefix again: its lock file is rewritten.
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(lock, future, future); err != nil {
		t.Fatal(err)
	}
	if err := a.check(ctx, dir); err != nil {
		t.Fatal(err)
	}
	if n := ranTimes(); n != 2 {
		t.Fatalf("the command ran %d times after the install changed, want 2", n)
	}

	// The command replaced by one of another version.
	script("19.9.9")
	if err := a.check(ctx, dir); err == nil || !strings.Contains(err.Error(), "not version 1.2.3") {
		t.Fatalf("a command that prints another version passed its check: %v", err)
	}

	// A package.json of another version fails without a run.
	script("1.2.3")
	write(filepath.Join(pkgDir, "package.json"), `{"name": "@fake/cli", "version": "1.2.4"}`, 0o644)
	before := ranTimes()
	if err := a.check(ctx, dir); err == nil || !strings.Contains(err.Error(), "not the pinned 1.2.3") {
		t.Fatalf("a package.json of another version passed: %v", err)
	}
	if ranTimes() != before {
		t.Error("the command ran although its package.json is of another version")
	}
}
