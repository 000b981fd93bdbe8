package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentledger/ledger/cmd/internal/mcpserver"
	"github.com/agentledger/ledger/store/storetest"
)

// mcpserverDefaultMax is the cap `ledger mcp` keeps each result to.
const mcpserverDefaultMax = mcpserver.DefaultMaxChars

// rawMCP is `ledger mcp`, the built binary, driven line by line over its
// real stdin and stdout: what a broken or hostile client writes reaches
// the server as it is.
type rawMCP struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan string
	stderr *lockedBuffer
	done   chan struct{} // closed when the process has ended
	err    error         // from Wait
}

func startRawMCP(t *testing.T, home string, args ...string) *rawMCP {
	t.Helper()
	cmd := exec.Command(ledgerBin, args...)
	cmd.Env = append(binEnv(home), "CLAUDE_PROJECT_DIR="+home)
	cmd.Dir = home
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	m := &rawMCP{t: t, cmd: cmd, in: in, lines: make(chan string, 64), stderr: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stderr = m.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			m.lines <- sc.Text()
		}
		close(m.lines)
		m.err = cmd.Wait()
		close(m.done)
	}()
	t.Cleanup(func() {
		in.Close()
		select {
		case <-m.done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-m.done
		}
	})
	return m
}

// send writes raw bytes to the server's stdin.
func (m *rawMCP) send(raw string) {
	m.t.Helper()
	if _, err := io.WriteString(m.in, raw); err != nil {
		m.t.Fatalf("write to ledger mcp: %v (stderr: %s)", err, m.stderr)
	}
}

// reply is the next message the server writes; it fails the test when the
// server writes nothing for 10 s or ends.
func (m *rawMCP) reply() map[string]any {
	m.t.Helper()
	select {
	case l, ok := <-m.lines:
		if !ok {
			m.t.Fatalf("ledger mcp ended; stderr:\n%.2000s", m.stderr)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			m.t.Fatalf("ledger mcp wrote a line that is not a JSON object: %v: %.300q", err, l)
		}
		return v
	case <-time.After(10 * time.Second):
		m.t.Fatalf("ledger mcp wrote nothing for 10 s; stderr:\n%.2000s", m.stderr)
	}
	return nil
}

// replyTo waits for the response to the request of id, passing over
// anything else (notifications, error replies to earlier lines), and
// returns it with what it passed over.
func (m *rawMCP) replyTo(id float64) (map[string]any, []map[string]any) {
	m.t.Helper()
	var other []map[string]any
	for {
		r := m.reply()
		if got, ok := r["id"].(float64); ok && got == id {
			return r, other
		}
		other = append(other, r)
	}
}

func (m *rawMCP) initialize() {
	m.t.Helper()
	m.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}` + "\n")
	if r, _ := m.replyTo(1); r["result"] == nil {
		m.t.Fatalf("initialize: %v", r)
	}
	m.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
}

// TestMCPMalformedLines: `ledger mcp` answers each line that is not one
// JSON-RPC message with a JSON-RPC error (parse error -32700 for what is
// not JSON, invalid request -32600 for JSON that is no request; the id
// null where it cannot be known) and serves the next request; before, the
// first such line ended the server.
func TestMCPMalformedLines(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	m := startRawMCP(t, home, "--db", db, "mcp")
	m.initialize()
	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	deepObj := `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"a":` + strings.Repeat(`{"a":`, 200) + `1` + strings.Repeat("}", 200) + `}}`
	cases := []struct {
		name, line string
		code       float64
		id         any // nil: null
	}{
		{"not JSON", "not json at all", -32700, nil},
		{"truncated", `{"jsonrpc":"2.0","id":2,"method":"tools/li`, -32700, nil},
		{"two values on a line", `{"jsonrpc":"2.0","id":3,"method":"ping"} {}`, -32700, nil},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":4,"method":"tools/list"}`, -32600, 4.0},
		{"no jsonrpc", `{"id":"five","method":"tools/list"}`, -32600, "five"},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, -32600, nil},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"tools/list"}`, -32600, nil},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, -32600, nil},
		{"method not a string", `{"jsonrpc":"2.0","id":6,"method":42}`, -32600, 6.0},
		{"batch", `[{"jsonrpc":"2.0","id":8,"method":"tools/list"}]`, -32600, nil},
		{"empty batch", `[]`, -32600, nil},
		{"a number", `42`, -32600, nil},
		{"deep array", deep, -32600, nil},
		{"deep params", deepObj, -32600, 7.0},
		{"over the size limit", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"search","arguments":{"query":"` + strings.Repeat("x", 2<<20) + `"}}}`, -32600, nil},
	}
	next := 100.0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m.t = t
			m.send(c.line + "\n")
			// The next request is served: the server goes on.
			m.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"method":"tools/list"}`+"\n", next))
			r, other := m.replyTo(next)
			next++
			if r["result"] == nil {
				t.Errorf("the request after it: %v", r)
			}
			var errs []map[string]any
			for _, o := range other {
				if o["error"] != nil {
					errs = append(errs, o)
				}
			}
			if len(errs) != 1 {
				t.Fatalf("replies to the malformed line: %v; want one JSON-RPC error", other)
			}
			e := errs[0]
			code, _ := e["error"].(map[string]any)["code"].(float64)
			if code != c.code || e["jsonrpc"] != "2.0" || e["id"] != c.id {
				t.Errorf("reply %v; want code %v, id %v", e, c.code, c.id)
			}
			if msg, _ := e["error"].(map[string]any)["message"].(string); msg == "" || len(msg) > 300 {
				t.Errorf("error message %q: want a short one", msg)
			}
		})
	}
	m.t = t
	// A tool call still works, and the log holds no line whole.
	m.send(`{"jsonrpc":"2.0","id":500,"method":"tools/call","params":{"name":"sessions","arguments":{}}}` + "\n")
	if r, _ := m.replyTo(500); r["result"] == nil {
		t.Errorf("tools/call after the malformed lines: %v", r)
	}
	if m.stderr.Len() > 20000 {
		t.Errorf("stderr holds %d bytes: the refused lines are logged whole", m.stderr.Len())
	}
	// A last line cut off by the end of input ends the server cleanly.
	m.send(`{"jsonrpc":"2.0","id":501,"meth`)
	m.in.Close()
	select {
	case <-m.done:
		if m.err != nil {
			t.Errorf("ledger mcp at the end of its input: %v; stderr:\n%.2000s", m.err, m.stderr)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("ledger mcp still running 10 s after its input ended")
	}
}

// connectMCP connects the SDK's client to the `ledger mcp` process cmd
// (its stdin and stdout); its stderr is returned.
func connectMCP(t *testing.T, cmd *exec.Cmd) (*mcpClient, error) {
	t.Helper()
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "ledger-test", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, stderr)
	}
	t.Cleanup(func() { cs.Close() })
	return &mcpClient{t: t, cs: cs, stderr: stderr}, nil
}

// TestMCPReadOnlyLedger: the MCP server answers from a ledger it cannot
// write (another user's, a read-only mount) as the read commands do;
// before, every tool failed, the server opening the ledger to write first.
func TestMCPReadOnlyLedger(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := filepath.Join(home, "data")
	db := filepath.Join(dir, "ledger.db")
	project := filepath.Join(home, "src", "payments")
	os.MkdirAll(project, 0o700)
	path := sampleInProject(t, home, project, sampleSession)
	if r := runBin(t, home, "", "--db", db, "ingest", path); r.code != 0 {
		t.Fatalf("ingest: %s", r.stderr)
	}
	if r := runBin(t, home, "", "--db", db, "compact", sampleSession[:8]); r.code != 0 {
		t.Fatalf("compact: %s", r.stderr)
	}
	for name, run := range readOnlyWays(t, dir) {
		t.Run(name, func(t *testing.T) {
			cmd := run("--db", db, "mcp")
			cmd.Env = append(binEnv(home), "CLAUDE_PROJECT_DIR="+project)
			c, err := connectMCP(t, cmd)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			for _, call := range []struct {
				tool string
				args map[string]any
				want string
			}{
				{"sessions", map[string]any{}, sampleSession},
				{"search", map[string]any{"query": "wall clock"}, sampleSession},
				{"handoff", map[string]any{"session": sampleSession[:8]}, "## Task"},
				{"resume", map[string]any{}, sampleSession},
				{"audit", map[string]any{}, sampleSession},
			} {
				res, text, _ := c.call(call.tool, call.args)
				if res.IsError || !strings.Contains(text, call.want) {
					t.Errorf("%s on a read-only ledger: error %v, %.300q (want %q)\nstderr: %.1000s", call.tool, res.IsError, text, call.want, c.stderr)
				}
			}
			// The one tool that writes says why it cannot.
			res, text, _ := c.call("note", map[string]any{"session": sampleSession[:8], "kind": "next", "text": "check the reserve"})
			if !res.IsError || !strings.Contains(text, "read-only") {
				t.Errorf("note on a read-only ledger: error %v, %.300q; want a tool error saying the ledger is read-only", res.IsError, text)
			}
		})
	}
}

// TestMCPEchoedArgumentsCapped: an argument a tool repeats in its answer
// (a project, a session, a cursor) is clipped there and in the server's
// log: every result, error or not, keeps to the cap. Before, a 10 MB
// project came back whole, and was logged whole.
func TestMCPEchoedArgumentsCapped(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	path := sampleInProject(t, home, filepath.Join(home, "p"), sampleSession)
	if r := runBin(t, home, "", "--db", db, "ingest", path); r.code != 0 {
		t.Fatalf("ingest: %s", r.stderr)
	}
	c := startMCP(t, home, "--db", db, "mcp")
	huge := "/" + strings.Repeat("x", 900<<10) // under the wire's 1 MB, far over the cap
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"sessions", map[string]any{"project": huge}},
		{"search", map[string]any{"query": "reserve", "project": huge}},
		{"resume", map[string]any{"project": huge}},
		{"handoff", map[string]any{"project": huge}},
		{"meter", map[string]any{"session": huge[1:]}},
		{"audit", map[string]any{"session": huge[1:]}},
		{"search", map[string]any{"query": "reserve", "cursor": huge}},
		{"handoff", map[string]any{"cursor": huge}},
		{"search", map[string]any{"query": "reserve", "since": huge}},
		{"note", map[string]any{"kind": huge[1:], "text": "x"}},
	} {
		res, text, raw := c.call(call.tool, call.args)
		if n := utf8.RuneCountInString(text); n > mcpserverDefaultMax || len(raw) > mcpserverDefaultMax {
			t.Errorf("%s with a 900 KB argument: error %v, %d characters of text, %d of JSON; want at most %d", call.tool, res.IsError, n, len(raw), mcpserverDefaultMax)
		}
	}
	if n := c.stderr.Len(); n > 64<<10 {
		t.Errorf("the server logged %d bytes for ten calls: arguments logged whole", n)
	}
}
