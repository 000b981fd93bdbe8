package agentconfig

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// MCPServer is ledger's MCP server as an agent's configuration starts it:
// the ledger binary and its arguments ("mcp" first).
type MCPServer struct {
	Command string
	Args    []string
}

// MCPName is the name ledger's server is configured under.
const MCPName = "ledger"

// NewMCPServer is the entry for the ledger binary at exe (made absolute,
// so that the agent finds it whatever its PATH), run as `ledger mcp` with
// the given flags after it.
func NewMCPServer(exe string, flags ...string) (MCPServer, error) {
	if exe == PathProgram {
		// Found on each user's PATH: a project's shared .mcp.json.
	} else if abs, err := filepath.EvalSymlinks(exe); err == nil {
		exe = abs
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return MCPServer{}, fmt.Errorf("ledger is running from a temporary build (%s), which the agent cannot start later: install it first (go install ./cmd/ledger) and run the installed ledger", exe)
	}
	return MCPServer{Command: exe, Args: append([]string{"mcp"}, flags...)}, nil
}

// IsLedgerMCP tells ledger's own server entry from everyone else's: its
// program is a "ledger" binary and its command is "mcp" (after global
// flags, as `claude mcp add ledger -- ledger --db X mcp` writes them).
// Uninstall removes only such an entry.
func IsLedgerMCP(command string, args []string) bool {
	base := command[strings.LastIndexAny(command, `/\`)+1:] // either separator: a config may come from Windows
	if strings.TrimSuffix(base, ".exe") != "ledger" {
		return false
	}
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--db" || a == "--cpuprofile":
			i++ // its value
		case strings.HasPrefix(a, "-"):
		default:
			return a == "mcp"
		}
	}
	return false
}

func (s MCPServer) equal(command string, args []string) bool {
	return command == s.Command && slices.Equal(args, s.Args)
}

// MCPConfig is the file an agent reads its MCP servers from, for one agent
// and scope, and how to edit it.
type MCPConfig struct {
	Agent string // "claude" or "codex"
	Scope string // "user" or "project"
	Path  string
}

// MCPConfigFile is the configuration file of an agent and scope:
//   - claude, user: ~/.claude.json (top-level "mcpServers"), where
//     `claude mcp add --scope user` writes;
//   - claude, project: .mcp.json in the folder wd, shared with the
//     project's other users (Claude Code asks each to approve it);
//   - codex, user: config.toml in $CODEX_HOME (default ~/.codex), table
//     [mcp_servers.ledger], where `codex mcp add` writes. Codex has no
//     project scope for MCP servers that ledger writes.
func MCPConfigFile(agent, scope, home, wd, codexHome string) (MCPConfig, error) {
	c := MCPConfig{Agent: agent, Scope: scope}
	switch {
	case agent == "claude" && scope == "user":
		c.Path = filepath.Join(home, ".claude.json")
	case agent == "claude" && scope == "project":
		c.Path = filepath.Join(wd, ".mcp.json")
	case agent == "codex" && scope == "user":
		if codexHome == "" {
			codexHome = filepath.Join(home, ".codex")
		}
		c.Path = filepath.Join(codexHome, "config.toml")
	case agent == "codex" && scope == "project":
		return c, fmt.Errorf("--scope project: codex reads ledger's server from ~/.codex/config.toml only; use --scope user")
	case agent != "claude" && agent != "codex":
		return c, fmt.Errorf("--agent %q: want claude or codex", agent)
	default:
		return c, fmt.Errorf("--scope %q: want user or project", scope)
	}
	return c, nil
}

// Install returns the file's bytes with ledger's server added (or brought
// up to date), everything else kept byte for byte. A server of another
// program under the name "ledger" is an error: it is not ledger's to
// replace.
func (c MCPConfig) Install(doc []byte, s MCPServer) ([]byte, error) {
	if c.Agent == "codex" {
		return InstallCodexMCP(doc, s)
	}
	return InstallClaudeMCP(doc, s)
}

// Uninstall returns the file's bytes without ledger's server, everything
// else kept byte for byte; nil when nothing is left of the file but an
// empty object or nothing at all (the file is then removed: a stray
// .mcp.json or config.toml configures nothing). ~/.claude.json, Claude
// Code's own state, is never removed.
func (c MCPConfig) Uninstall(doc []byte) ([]byte, error) {
	var out []byte
	var err error
	if c.Agent == "codex" {
		out, err = UninstallCodexMCP(doc)
	} else {
		out, err = UninstallClaudeMCP(doc)
	}
	if err != nil || len(doc) == 0 || bytes.Equal(out, doc) {
		return out, err
	}
	if t := strings.TrimSpace(string(out)); (t == "" || t == "{}") && !(c.Agent == "claude" && c.Scope == "user") {
		return nil, nil
	}
	return out, nil
}
