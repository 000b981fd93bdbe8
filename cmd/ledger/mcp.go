package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/cmd/internal/agentconfig"
	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/cmd/internal/mcpserver"
)

type mcpOptions struct {
	MaxChars int
}

func newMCPCmd(app *App) *cobra.Command {
	opts := &mcpOptions{}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the ledger as MCP tools to an agent, over stdio",
		Long: `Run an MCP server on stdin/stdout: the agent that starts it (Claude Code,
Codex) can then search the ledger, list sessions, resume a session's context,
read its latest handoff, audit compactions, meter the context, and record a
note for the next handoff. 'ledger mcp install' adds it to an agent's
configuration.

Every result is capped at --max-chars characters (text and structured JSON
each); longer ones come in pages, with a cursor to call again with. What the
tools return from the ledger is fenced as recorded data, never instructions.

The server writes two things only: what is new in a session's transcripts,
ingested before it answers about that session, and the notes the note tool
records. On a ledger it cannot write, its tools answer from it as it is.

The project of a call without one is $CLAUDE_PROJECT_DIR, else the folder the
server was started in.`,
		Example: `  ledger mcp install                           # Claude Code, user scope (~/.claude.json)
  ledger mcp install --scope project           # Claude Code, this project's .mcp.json
  ledger mcp install --agent codex             # Codex, ~/.codex/config.toml
  ledger mcp uninstall --agent codex`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.MaxChars < mcpserver.MinMaxChars {
				return usagef("--max-chars %d: want at least %d", opts.MaxChars, mcpserver.MinMaxChars)
			}
			return runMCP(cmd.Context(), app, opts)
		},
	}
	cmd.Flags().IntVar(&opts.MaxChars, "max-chars", mcpserver.DefaultMaxChars, "cap each tool result at `N` characters")
	for _, install := range []bool{true, false} {
		cmd.AddCommand(newMCPInstallCmd(app, install))
	}
	return cmd
}

func runMCP(ctx context.Context, app *App, opts *mcpOptions) error {
	project := app.Getenv("CLAUDE_PROJECT_DIR")
	if project == "" {
		if wd, err := app.Getwd(); err == nil {
			project = wd
		}
	}
	srv, err := mcpserver.New(mcpserver.Config{Engine: app.Engine(),
		Project: project, Version: buildVersion(), MaxChars: opts.MaxChars, Log: app.Stderr})
	if err != nil {
		return err
	}
	return srv.Run(ctx, mcpserver.Stdio(app.Stdin, app.Stdout, app.Stderr))
}

type mcpInstallOptions struct {
	Install bool
	Agent   string
	Scope   string
	JSON    bool
}

func newMCPInstallCmd(app *App, install bool) *cobra.Command {
	opts := &mcpInstallOptions{Install: install}
	use, short := "install", "Add ledger's MCP server to Claude Code's or Codex's configuration"
	if !install {
		use, short = "uninstall", "Remove ledger's MCP server from the configuration (and nothing else)"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long: short + `.

--agent claude (the default) writes "mcpServers" in ~/.claude.json (--scope
user, the default: every project) or in .mcp.json here (--scope project,
shared with the project; Claude Code asks each user to approve it). --agent
codex writes [mcp_servers.ledger] in ~/.codex/config.toml ($CODEX_HOME).

Only ledger's own entry is added or removed: every other byte of the file stays
(layout, comments, other servers), so uninstall gives the file back as it was.
The write is atomic, and the previous file is kept as FILE.bak. A server named
"ledger" that is not ledger's is left alone.`,
		Example: `  ledger mcp install
  ledger mcp install --agent codex
  ledger mcp install --scope project --db ~/ledgers/work.db
  ledger mcp uninstall --agent claude --scope project`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMCPInstall(app, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Agent, "agent", "claude", "`claude` or codex")
	cmd.Flags().StringVar(&opts.Scope, "scope", "user", "`user` (every project) or project (claude only: .mcp.json here)")
	jsonFlag(cmd, &opts.JSON)
	return cmd
}

func runMCPInstall(app *App, opts *mcpInstallOptions) error {
	home, err := app.home()
	if err != nil {
		return err
	}
	wd, err := app.Getwd()
	if err != nil {
		return err
	}
	switch {
	case opts.Agent != "claude" && opts.Agent != "codex":
		return usagef("--agent %q: want claude or codex", opts.Agent)
	case opts.Scope != "user" && opts.Scope != "project":
		return usagef("--scope %q: want user or project", opts.Scope)
	}
	cfg, err := agentconfig.MCPConfigFile(opts.Agent, opts.Scope, home, wd, app.Getenv("CODEX_HOME"))
	if err != nil {
		return usageError{err}
	}
	edit := cfg.Uninstall
	if opts.Install {
		exe, err := hookProgram(app, &hooksOptions{Scope: opts.Scope})
		if err != nil {
			return err
		}
		var flags []string
		if app.dbFlag != "" {
			flags = append(flags, "--db", engine.AbsPath(app.dbFlag))
		}
		srv, err := agentconfig.NewMCPServer(exe, flags...)
		if err != nil {
			return err
		}
		edit = func(old []byte) ([]byte, error) { return cfg.Install(old, srv) }
	}
	changed, err := agentconfig.UpdateFile(cfg.Path, scopeRoot(app, opts.Scope), edit)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(app.Stdout, struct {
			Agent   string `json:"agent"`
			Config  string `json:"config"`
			Changed bool   `json:"changed"`
		}{opts.Agent, cfg.Path, changed})
	}
	bak := filepath.Base(cfg.Path) + ".bak"
	switch {
	case !changed && opts.Install:
		fmt.Fprintf(app.Stdout, "ledger's MCP server is already in %s (nothing changed)\n", cfg.Path)
	case !changed:
		fmt.Fprintf(app.Stdout, "no ledger MCP server in %s (nothing changed)\n", cfg.Path)
	case opts.Install:
		fmt.Fprintf(app.Stdout, "added ledger's MCP server to %s; previous file (if any) kept as %s\n%s", cfg.Path, bak, mcpNextStep(opts))
	default:
		fmt.Fprintf(app.Stdout, "removed ledger's MCP server from %s; previous file kept as %s\n", cfg.Path, bak)
	}
	return nil
}

// mcpNextStep is what to do after an install for the agent to see it.
func mcpNextStep(opts *mcpInstallOptions) string {
	switch {
	case opts.Agent == "codex":
		return "start a new codex session; /mcp lists ledger's tools\n"
	case opts.Scope == "project":
		return "start Claude Code in this folder and approve the project's server; /mcp lists ledger's tools\n"
	}
	return "start a new Claude Code session; /mcp lists ledger's tools (Claude Code rewrites ~/.claude.json: install while it is not running)\n"
}
