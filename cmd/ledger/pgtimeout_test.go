package main

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentledger/ledger/store/pgtest"
)

// silentServer is a TCP listener that accepts connections and never
// answers: a PostgreSQL server that hangs before its startup reply.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go io.Copy(io.Discard, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// stallingServer is a TCP proxy to the real PostgreSQL test server that
// passes each connection's startup through, up to the server's first
// ReadyForQuery, and then never passes an answer again: a server that
// stalls after the connection is made. It returns the proxy's URL of a
// fresh database.
func stallingServer(t *testing.T) string {
	t.Helper()
	real, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	network, addr := "tcp", real.Host
	if h := real.Query().Get("host"); strings.HasPrefix(h, "/") {
		port := real.Query().Get("port")
		if port == "" {
			port = "5432"
		}
		network, addr = "unix", filepath.Join(h, ".s.PGSQL."+port)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	keep := func(cs ...net.Conn) {
		mu.Lock()
		conns = append(conns, cs...)
		mu.Unlock()
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial(network, addr)
			if err != nil {
				c.Close()
				continue
			}
			keep(c, s)
			go io.Copy(s, c) // the client's messages reach the server
			go func() {
				// The server's messages, each a type byte and a length,
				// reach the client up to the first ReadyForQuery ('Z').
				for {
					var head [5]byte
					if _, err := io.ReadFull(s, head[:]); err != nil {
						return
					}
					body := make([]byte, binary.BigEndian.Uint32(head[1:])-4)
					if _, err := io.ReadFull(s, body); err != nil {
						return
					}
					c.Write(append(head[:], body...))
					if head[0] == 'Z' {
						io.Copy(io.Discard, s)
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	u := &url.URL{Scheme: "postgres", User: real.User, Host: ln.Addr().String(), Path: real.Path}
	u.RawQuery = "sslmode=disable"
	return u.String()
}

// TestPostgresThatNeverAnswers: a server that accepts TCP and never
// answers, or answers the startup and then nothing, ends every command
// with a one-line error within the timeouts (connect_timeout, default
// 10 s; a statement's answer, statement_timeout, default 60 s, and 5 s
// more), and a tool call of the MCP server with a tool error. Before,
// both hung forever. Every command starts at once, and the MCP server's
// call is made while they wait: the test lasts as long as its longest
// wait (the default connect_timeout), not as their sum.
func TestPostgresThatNeverAnswers(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	silent := "postgres://nobody@" + silentServer(t) + "/team?sslmode=disable"
	stalled := stallingServer(t) + "&statement_timeout=1000"
	runs := []struct {
		url    string
		args   []string
		within time.Duration
		want   string
		p      *proc
	}{
		{silent, []string{"sessions"}, 10 * time.Second, "did not answer within 10s", nil}, // the default connect_timeout
		{silent + "&connect_timeout=1", []string{"sessions"}, time.Second, "did not answer within 1s", nil},
		{silent + "&connect_timeout=1", []string{"ingest", home}, time.Second, "did not answer within 1s", nil},
		{stalled, []string{"sessions"}, 6 * time.Second, "did not answer within 6s", nil},
	}
	for i := range runs {
		runs[i].p = startBin(t, home, "", append([]string{"--db", runs[i].url}, runs[i].args...)...)
	}

	// The MCP server answers a tool call with a tool error, and goes on.
	cmd := exec.Command(ledgerBin, "--db", stalled, "mcp")
	cmd.Env = append(binEnv(home), "CLAUDE_PROJECT_DIR="+home)
	c, err := connectMCP(t, cmd)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "sessions", Arguments: map[string]any{}})
	if err != nil || !res.IsError {
		t.Errorf("sessions tool on a stalled server: %v %+v after %v", err, res, time.Since(start))
	} else {
		t.Logf("tool error after %v", time.Since(start).Round(time.Millisecond))
		if _, err := c.cs.ListTools(ctx, nil); err != nil {
			t.Errorf("the server does not go on after the tool error: %v", err)
		}
	}

	for _, r := range runs {
		// endsWithin's deadline runs from now, later than the start (the
		// MCP call came first): the time from start to exit is checked.
		endsWithin(t, r.p, r.within+slack)
		took := r.p.ended.Sub(r.p.started)
		if took > r.within+slack {
			t.Errorf("%s on %s: ended after %v, past the timeout of %v", r.args[0], r.url, took, r.within)
		}
		if r.p.exitCode != 1 || strings.Count(r.p.errb.String(), "\n") != 1 || !strings.Contains(r.p.errb.String(), r.want) {
			t.Errorf("%s on %s: exit %d after %v, %q; want exit 1 and one line saying %q", r.args[0], r.url, r.p.exitCode, took, r.p.errb.String(), r.want)
		}
		t.Logf("%s on %s after %v: %s", r.args[0], r.url, took.Round(time.Millisecond), r.p.errb.String())
		if took < r.within {
			t.Errorf("%s on %s gave up after %v, before the timeout of %v", r.args[0], r.url, took, r.within)
		}
	}
}
