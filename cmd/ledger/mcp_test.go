package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentledger/ledger/transcript"
)

// The corpus session the end-to-end test resumes, and its project.
const (
	mcpSession = "258c7280-ae70-4798-800f-63464d01a85d"
	mcpProject = "/home/USER/projects/spotter-worktrees/spotter-gqc"
)

// mcpClient is a client connected over a real stdio pipe to `ledger mcp`
// run by the built binary.
type mcpClient struct {
	t      *testing.T
	cs     *mcp.ClientSession
	stderr *lockedBuffer
}

func startMCP(t *testing.T, home string, args ...string) *mcpClient {
	t.Helper()
	cmd := exec.Command(ledgerBin, args...)
	cmd.Env = append(binEnv(home), "CLAUDE_PROJECT_DIR="+mcpProject)
	cmd.Dir = home
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "ledger-test", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to ledger mcp: %v\n%s", err, stderr)
	}
	c := &mcpClient{t: t, cs: cs, stderr: stderr}
	t.Cleanup(func() { cs.Close() })
	return c
}

// call calls a tool and returns its result, its text and its structured
// content as JSON; a protocol error fails the test.
func (c *mcpClient) call(name string, args map[string]any) (*mcp.CallToolResult, string, []byte) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("%s %v: %v\nserver stderr:\n%s", name, args, err, c.stderr)
	}
	var text strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	raw, _ := json.Marshal(res.StructuredContent)
	return res, text.String(), raw
}

// ok calls a tool that must succeed and decodes its structured content.
func (c *mcpClient) ok(name string, args map[string]any, out any) string {
	c.t.Helper()
	res, text, raw := c.call(name, args)
	if res.IsError {
		c.t.Fatalf("%s %v: tool error: %s\nserver stderr:\n%s", name, args, text, c.stderr)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			c.t.Fatalf("%s: %v in %s", name, err, raw)
		}
	}
	return text
}

// TestMCPEndToEnd drives `ledger mcp`, the built binary, with the SDK's own
// client over a real stdio pipe: initialize, tools/list against the golden
// file, each tool against a ledger of the real corpus, the cap and its
// cursor, a bad argument, a missing session, and calls made while another
// `ledger ingest` process writes.
func TestMCPEndToEnd(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := corpusFile(t, filepath.Join(home, "ledger.db"))
	if r := runCmd(t, home, "", "--db", db, "compact", mcpSession[:8], "--out", filepath.Join(home, "h.md")); r.code != 0 {
		t.Fatalf("compact: %d %s", r.code, r.stderr)
	}
	const max = 8000 // the default cap
	c := startMCP(t, home, "--db", db, "mcp")

	init := c.cs.InitializeResult()
	if init.ServerInfo.Name != "ledger" || !strings.Contains(init.Instructions, "ledger-record") {
		t.Errorf("initialize: %+v %q", init.ServerInfo, init.Instructions)
	}
	lt, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.MarshalIndent(lt.Tools, "", "  ")
	want, err := os.ReadFile(filepath.Join("..", "..", "testdata", "mcp", "tools.golden.json"))
	if err != nil || !bytes.Equal(append(got, '\n'), want) {
		t.Errorf("tools/list differs from testdata/mcp/tools.golden.json (%v); rewrite it with go test -run ToolsListGolden ./cmd/internal/mcpserver -update", err)
	}

	var sessions struct {
		Sessions []struct{ ID string }
		Total    int
	}
	c.ok("sessions", nil, &sessions)
	if sessions.Total != 11 {
		t.Errorf("sessions: %d, want the corpus's 11", sessions.Total)
	}

	// search: a common word, capped, and the next page by its cursor.
	var page1, page2 struct {
		Hits []struct {
			Session string
			ID      int64
		}
		More       int
		NextCursor string `json:"next_cursor"`
	}
	res, text, raw := c.call("search", map[string]any{"query": "test", "limit": 100})
	if res.IsError || utf8.RuneCountInString(text) > max || utf8.RuneCount(raw) > max {
		t.Fatalf("search: error %v, %d characters of text and %d of JSON, cap %d", res.IsError, utf8.RuneCountInString(text), utf8.RuneCount(raw), max)
	}
	json.Unmarshal(raw, &page1)
	if page1.NextCursor == "" || !strings.Contains(text, fmt.Sprintf("…%d more hits, call again with cursor=%s", page1.More, page1.NextCursor)) {
		t.Fatalf("search over the cap: no cursor or no marker:\n%s", text)
	}
	c.ok("search", map[string]any{"query": "test", "limit": 100, "cursor": page1.NextCursor}, &page2)
	if len(page2.Hits) == 0 || page2.Hits[0].ID == page1.Hits[len(page1.Hits)-1].ID {
		t.Errorf("search page 2 %+v does not follow page 1 %+v", page2.Hits, page1.Hits)
	}

	var r struct {
		Session  string
		Markdown string
	}
	c.ok("resume", nil, &r) // the latest session of $CLAUDE_PROJECT_DIR
	if r.Session != mcpSession || !strings.Contains(r.Markdown, "# Resume") || !strings.HasPrefix(r.Markdown, "<ledger-record ") {
		t.Errorf("resume: %s %.200q", r.Session, r.Markdown)
	}
	var h struct {
		Handoff *struct {
			ID      int64
			Session string
		}
		Markdown string
	}
	c.ok("handoff", map[string]any{"session": mcpSession[:8]}, &h)
	if h.Handoff == nil || h.Handoff.Session != mcpSession || !strings.Contains(h.Markdown, "## Task") {
		t.Errorf("handoff: %+v", h)
	}
	var a struct {
		Totals struct{ Compactions, Clears int }
	}
	c.ok("audit", nil, &a)
	if a.Totals.Compactions != 3 || a.Totals.Clears != 1 {
		t.Errorf("audit: %d compactions and %d clears, want the corpus's 3 and compact's clear", a.Totals.Compactions, a.Totals.Clears)
	}
	var m struct {
		Session    string
		UsedTokens int64 `json:"used_tokens"`
	}
	c.ok("meter", map[string]any{"session": mcpSession}, &m)
	if m.Session != mcpSession || m.UsedTokens == 0 {
		t.Errorf("meter: %+v", m)
	}
	c.ok("note", map[string]any{"kind": "decision", "text": "keep the zeppelin parser"}, nil)
	if r := runCmd(t, home, "", "--db", db, "search", "zeppelin", "--kind", "note", "--json"); r.code != 0 || !strings.Contains(r.stdout, mcpSession) {
		t.Errorf("the note is not in the ledger: %d %s %s", r.code, r.stdout, r.stderr)
	}

	// A bad argument and a missing session: tool errors that say what to do.
	if res, text, _ := c.call("search", map[string]any{"limit": 5}); !res.IsError || !strings.Contains(text, `a required argument is missing: "query"`) {
		t.Errorf("search without query: %v %q", res.IsError, text)
	}
	if res, text, _ := c.call("meter", map[string]any{"session": "nosuchsession"}); !res.IsError || !strings.Contains(text, "Call the sessions tool") {
		t.Errorf("meter of a missing session: %v %q", res.IsError, text)
	}

	// While another process ingests, calls read, ingest and write notes.
	// The calls run for as long as the ingest does, each a round trip:
	// six sessions of 600 messages keep it writing for many of them (a
	// second or more here) without the calls costing tens of seconds.
	gen := filepath.Join(home, "gen")
	for i := range 6 {
		id := sessionUUID(i, 7)
		generate(t, filepath.Join(gen, "-gen", id+".jsonl"), transcript.GenOptions{Seed: uint64(i + 1), SessionID: id,
			Project: "/home/dev/src/gen", Messages: 600, CompactEvery: 200})
	}
	ing := startBin(t, home, "", "--db", db, "ingest", gen)
	calls := []struct {
		name string
		args map[string]any
	}{
		{"sessions", map[string]any{"limit": 5}},
		{"search", map[string]any{"query": "timeout", "limit": 5}},
		{"note", map[string]any{"session": mcpSession, "kind": "next", "text": "step"}},
		{"resume", map[string]any{"session": mcpSession}},
	}
	during := 0 // calls that began and ended while the ingest ran
	for n := 0; n < 10000 && !ing.exited(); n++ {
		call := calls[n%len(calls)]
		c.ok(call.name, call.args, nil)
		if !ing.exited() {
			during++
		}
	}
	ing.wait(t)
	ing.wantClean(t)
	if during == 0 {
		t.Errorf("no call ran while the ingest was writing")
	}
	c.ok("sessions", nil, &sessions)
	if sessions.Total != 17 {
		t.Errorf("sessions after the ingest: %d, want 17", sessions.Total)
	}
	t.Logf("%d calls while `ledger ingest` wrote for %v", during, time.Since(ing.started).Round(time.Millisecond))

	if err := c.cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if s := c.stderr.String(); strings.Contains(s, "level=ERROR") {
		t.Errorf("the server logged errors:\n%s", s)
	}
}

// TestMCPFlags: a cap too small is a usage error.
func TestMCPFlags(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if r := runCmd(t, home, "", "--db", filepath.Join(home, "l.db"), "mcp", "--max-chars", "10"); r.code != 2 || !strings.Contains(r.stderr, "--max-chars 10") {
		t.Errorf("--max-chars 10: exit %d %q", r.code, r.stderr)
	}
}

// TestMCPInstall: `ledger mcp install` adds the server to each agent's
// configuration, pointing at this binary; uninstall gives the user's file
// back byte for byte (a file install created is removed).
func TestMCPInstall(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	exe, err := filepath.EvalSymlinks(ledgerBin)
	if err != nil {
		t.Fatal(err)
	}
	type doc struct {
		Agent   string `json:"agent"`
		Config  string `json:"config"`
		Changed bool   `json:"changed"`
	}
	mcpCmd := func(dir string, args ...string) doc {
		t.Helper()
		r := runCmdIn(t, home, dir, "", append([]string{"mcp"}, append(args, "--json")...)...)
		if r.code != 0 {
			t.Fatalf("mcp %v: exit %d: %s", args, r.code, r.stderr)
		}
		var d doc
		decodeJSON(t, r.stdout, &d)
		return d
	}

	codex := filepath.Join(home, ".codex", "config.toml")
	userToml := "# mine\nmodel = \"o3\"  # the default\n\n[mcp_servers.github]\ncommand = \"github-mcp\"\n\n[profiles.fast]\nmodel = \"gpt-5-mini\""
	claude := filepath.Join(home, ".claude.json")
	userJSON := "{\n  \"numStartups\": 3,\n  \"mcpServers\": {\n    \"github\": {\"type\": \"http\", \"url\": \"https://example.com/mcp\"}\n  }\n}\n"
	for _, f := range []struct{ path, body string }{{codex, userToml}, {claude, userJSON}} {
		os.MkdirAll(filepath.Dir(f.path), 0o700)
		if err := os.WriteFile(f.path, []byte(f.body), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	if d := mcpCmd("", "install", "--agent", "codex"); !d.Changed || d.Config != codex {
		t.Fatalf("install --agent codex: %+v", d)
	}
	b, _ := os.ReadFile(codex)
	if want := userToml + "\n\n[mcp_servers.ledger]\ncommand = \"" + exe + "\"\nargs = [\"mcp\"]"; string(b) != want {
		t.Errorf("config.toml:\n%s\nwant\n%s", b, want)
	}
	if bak, _ := os.ReadFile(codex + ".bak"); string(bak) != userToml {
		t.Errorf("config.toml.bak = %q", bak)
	}
	if d := mcpCmd("", "install", "--agent", "codex"); d.Changed {
		t.Errorf("a second install changed config.toml")
	}
	mcpCmd("", "uninstall", "--agent", "codex")
	if b, _ := os.ReadFile(codex); string(b) != userToml {
		t.Errorf("config.toml after uninstall:\n%q\nwant\n%q", b, userToml)
	}

	db := filepath.Join(home, "data", "l.db")
	if d := mcpCmd("", "--db", db, "install"); !d.Changed || d.Config != claude {
		t.Fatalf("install (claude, user): %+v", d)
	}
	var cj struct {
		MCPServers map[string]struct {
			Type, Command string
			Args          []string
		} `json:"mcpServers"`
	}
	b, _ = os.ReadFile(claude)
	decodeJSON(t, string(b), &cj)
	if s := cj.MCPServers["ledger"]; s.Type != "stdio" || s.Command != exe || strings.Join(s.Args, " ") != "mcp --db "+db || cj.MCPServers["github"].Type != "http" {
		t.Errorf("~/.claude.json: %s", b)
	}
	mcpCmd("", "uninstall")
	if b, _ := os.ReadFile(claude); string(b) != userJSON {
		t.Errorf("~/.claude.json after uninstall:\n%s", b)
	}

	proj := t.TempDir()
	if d := mcpCmd(proj, "install", "--scope", "project"); d.Config != filepath.Join(proj, ".mcp.json") {
		t.Fatalf("install --scope project: %+v", d)
	}
	// Shared by every clone: the server is 'ledger' as each user's PATH
	// finds it, not this user's binary.
	if b, _ := os.ReadFile(filepath.Join(proj, ".mcp.json")); !strings.Contains(string(b), `"command": "ledger"`) || strings.Contains(string(b), ledgerBin) {
		t.Errorf(".mcp.json of a project:\n%s", b)
	}
	mcpCmd(proj, "uninstall", "--scope", "project")
	if _, err := os.Stat(filepath.Join(proj, ".mcp.json")); !os.IsNotExist(err) {
		t.Errorf(".mcp.json that install created is still there after uninstall (%v)", err)
	}

	for _, bad := range [][]string{{"--agent", "gemini"}, {"--scope", "galaxy"}, {"--agent", "codex", "--scope", "project"}} {
		if r := runCmd(t, home, "", append([]string{"mcp", "install"}, bad...)...); r.code != 2 {
			t.Errorf("mcp install %v: exit %d, want 2 (%s)", bad, r.code, r.stderr)
		}
	}
}
