package agentconfig

import (
	"bytes"
	"fmt"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// Claude Code reads MCP servers from "mcpServers" at the top of
// ~/.claude.json (user scope) and of a project's .mcp.json (project scope):
//
//	{"mcpServers": {"ledger": {"type": "stdio", "command": "/usr/local/bin/ledger", "args": ["mcp"], "env": {}}}}
//
// which is what `claude mcp add --scope user ledger -- ledger mcp` writes.

// claudeMCPEntry is how Claude Code holds a stdio server.
type claudeMCPEntry struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

const claudeMCPPath = "mcpServers." + MCPName

// InstallClaudeMCP returns a Claude Code configuration (.mcp.json or
// ~/.claude.json) with ledger's server in "mcpServers", after the servers
// already there; an entry of ledger's already there is brought up to date
// (and one already up to date changes nothing). Everything else is kept
// byte for byte. Empty bytes (no file yet) become an object holding the
// server.
func InstallClaudeMCP(doc []byte, s MCPServer) ([]byte, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		doc = []byte("{}\n")
	}
	r, err := root(doc)
	if err != nil {
		return nil, fmt.Errorf("read MCP configuration: %w", err)
	}
	st := styleOf(doc, r)
	if e := r.Get(claudeMCPPath); e.Exists() {
		command, args := claudeEntry(e)
		switch {
		case !IsLedgerMCP(command, args) || !e.IsObject():
			return nil, fmt.Errorf("an MCP server named %q is already configured there, and it is not ledger's (command %q): remove or rename it first", MCPName, command)
		case s.equal(command, args):
			return doc, nil
		}
		return updateClaudeMCP(doc, st, e, s)
	}
	entry := claudeMCPEntry{Type: "stdio", Command: s.Command, Args: s.Args, Env: map[string]string{}}
	servers := r.Get("mcpServers")
	switch {
	case !servers.Exists():
		if doc, err = insert(doc, st, "", "mcpServers", struct{}{}); err != nil {
			return nil, err
		}
	case !servers.IsObject():
		return nil, fmt.Errorf("\"mcpServers\" is not an object")
	}
	return insert(doc, st, "mcpServers", MCPName, entry)
}

// updateClaudeMCP brings ledger's entry e up to date in place: its command
// and arguments change, and whatever else the user put in it (env, a
// timeout) stays.
func updateClaudeMCP(doc []byte, st style, e gjson.Result, s MCPServer) ([]byte, error) {
	doc, err := sjson.SetBytes(doc, claudeMCPPath+".command", s.Command)
	if err != nil {
		return nil, err
	}
	if a := gjson.GetBytes(doc, claudeMCPPath+".args"); a.Exists() {
		indent := lineIndent(doc, a.Index)
		if !st.multiline || !bytes.Contains([]byte(a.Raw), []byte("\n")) {
			indent, st = "", style{} // keep a one-line list on one line
		}
		return sjson.SetRawBytes(doc, claudeMCPPath+".args", st.encode(s.Args, indent))
	}
	return insert(doc, st, claudeMCPPath, "args", s.Args)
}

// UninstallClaudeMCP returns a Claude Code configuration without ledger's
// server, and without "mcpServers" when ledger's was the last one in it.
// A server named "ledger" that is not ledger's stays, as does everything
// else, byte for byte.
func UninstallClaudeMCP(doc []byte) ([]byte, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return doc, nil
	}
	r, err := root(doc)
	if err != nil {
		return nil, fmt.Errorf("read MCP configuration: %w", err)
	}
	e := r.Get(claudeMCPPath)
	if !e.Exists() || !IsLedgerMCP(claudeEntry(e)) {
		return doc, nil
	}
	if doc, err = remove(doc, claudeMCPPath); err != nil {
		return nil, err
	}
	if len(gjson.GetBytes(doc, "mcpServers").Map()) == 0 {
		return remove(doc, "mcpServers")
	}
	return doc, nil
}

// claudeEntry reads a server entry's command and arguments.
func claudeEntry(e gjson.Result) (string, []string) {
	var args []string
	for _, a := range e.Get("args").Array() {
		args = append(args, a.String())
	}
	return e.Get("command").String(), args
}
