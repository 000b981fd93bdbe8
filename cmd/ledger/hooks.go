package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/cmd/internal/agentconfig"
	"github.com/agentledger/ledger/cmd/internal/engine"
)

type hooksOptions struct {
	Install bool
	Agent   string
	Scope   string
	Mode    string
	Startup bool
	// StatusLine also sets ledger's status line (Claude Code), chaining
	// the user's own.
	StatusLine bool
	JSON       bool
}

func newHooksCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "Install or remove ledger's hooks in an agent's settings (or its plugin: Pi, OpenCode, Kilo); show what they did",
		Long: `Add ledger's hooks to Claude Code's settings.json (or, with --agent codex, to
Codex's hooks.json; --agent gemini, qwen or copilot: Gemini CLI's, Qwen Code's
or Copilot CLI's settings.json), or take them out again; 'ledger hooks log'
shows what each hook run did.

Every other setting and every other hook is kept as it was; a second install
changes nothing. The previous file is kept as settings.json.bak (hooks.json.bak).
Codex runs new or changed hooks only once you trust them in its /hooks.

Installed, ledger writes a handoff before each compaction, ingests the
transcript when a turn or session ends, suggests a handoff and /clear when the
context fills, and injects the handoff when a session resumes after /compact
or /clear. See 'ledger hook --help' for what happens at each event.

Gemini CLI, Qwen Code and Copilot CLI take hook commands in their own
settings: with --agent gemini, qwen or copilot ledger's hooks go in
~/.gemini/settings.json, ~/.qwen/settings.json or ~/.copilot/settings.json
($GEMINI_CLI_HOME, $QWEN_HOME, $COPILOT_HOME; --scope project:
.gemini/settings.json, .qwen/settings.json, .github/hooks/ledger.json), edited
as Claude Code's are, each in the agent's own shape. Clear mode and the status
line are Claude Code's (and Codex's) only.

OpenCode, Kilo CLI and Pi take plugins, not hook commands: with --agent
opencode, kilo or pi ledger writes one plugin file that runs 'ledger hook' at
their events (~/.config/opencode/plugin/ledger.js, ~/.config/kilo/plugin/ledger.js,
~/.pi/agent/extensions/ledger.js; --scope project: .opencode/plugin/,
.kilo/plugin/, .pi/extensions/), and uninstall removes that file and the
folders it made, nothing else. A file of that name that ledger did not write
is left alone.`,
		Example: `  ledger hooks install
  ledger hooks install --agent codex
  ledger hooks install --agent gemini
  ledger hooks install --agent copilot --scope project
  ledger hooks install --agent opencode
  ledger hooks install --agent pi --startup
  ledger hooks install --mode clear --scope project
  ledger hooks install --statusline
  ledger hooks uninstall
  ledger hooks log --session 019e5a10`,
		Args: argsUsage(cobra.NoArgs),
	}
	for _, install := range []bool{true, false} {
		opts := &hooksOptions{Install: install}
		use, short := "install", "Add ledger's hooks to settings.json or Codex's hooks.json"
		if !install {
			use, short = "uninstall", "Remove ledger's hooks (and status line) from settings.json or hooks.json, and nothing else"
		}
		sub := &cobra.Command{
			Use:   use,
			Short: short,
			Args:  argsUsage(cobra.NoArgs),
			RunE: func(cmd *cobra.Command, args []string) error {
				return runHooks(cmd.Context(), app, opts)
			},
		}
		sub.Flags().StringVar(&opts.Agent, "agent", "claude", "`claude` (settings.json), codex (hooks.json), gemini, qwen or copilot (their settings.json), or opencode, kilo, pi (a plugin file)")
		sub.Flags().StringVar(&opts.Scope, "scope", "user", "`user` (~/.claude/settings.json, ~/.codex/hooks.json, ~/.gemini/settings.json, ~/.qwen/settings.json, ~/.copilot/settings.json, the plugin agents' config folders) or project (.claude/settings.json, .codex/hooks.json, .gemini/settings.json, .qwen/settings.json, .github/hooks/ledger.json, .opencode/plugin/, .kilo/plugin/, .pi/extensions/ here)")
		if install {
			sub.Flags().StringVar(&opts.Mode, "mode", "assist", "`assist` (handoff before each compaction) or clear (block auto-compaction once the handoff is written, so you /clear instead)")
			sub.Flags().BoolVar(&opts.Startup, "startup", false, "also inject the project's latest handoff into brand-new sessions")
			sub.Flags().BoolVar(&opts.StatusLine, "statusline", false, "also set Claude Code's status line to 'ledger statusline' (a status line you have is chained, and comes back at uninstall)")
		}
		jsonFlag(sub, &opts.JSON)
		cmd.AddCommand(sub)
	}
	cmd.AddCommand(newHooksLogCmd(app))
	return cmd
}

func runHooks(ctx context.Context, app *App, opts *hooksOptions) error {
	if opts.Install && opts.Mode != "assist" && opts.Mode != "clear" {
		return usagef("--mode %q: want assist or clear", opts.Mode)
	}
	if agentconfig.IsPluginAgent(opts.Agent) {
		return runPluginHooks(ctx, app, opts)
	}
	if _, ok := engine.AgentHookEvents(opts.Agent); !ok || opts.Agent == "" {
		return usagef("--agent %q: want claude, codex, gemini, qwen, copilot, opencode, kilo or pi", opts.Agent)
	}
	if opts.StatusLine && opts.Agent != "claude" {
		return usagef("--statusline: %s has no status line command; it is Claude Code's", engine.AgentName(opts.Agent))
	}
	if opts.Install && opts.Mode == "clear" && opts.Agent != "claude" && opts.Agent != "codex" {
		return usagef("--mode clear: only Claude Code's and Codex's hooks can block a compaction or a stop, not %s's", engine.AgentName(opts.Agent))
	}
	path, err := hooksFilePath(app, opts)
	if err != nil {
		return err
	}
	_, statErr := os.Stat(path)
	existed := statErr == nil
	changed, err := agentconfig.UpdateFile(path, scopeRoot(app, opts.Scope), func(old []byte) ([]byte, error) {
		doc, err := editSettings(app, opts, old)
		if err == nil && !opts.Install && agentconfig.EmptyObject(doc) {
			// Nothing is left but an empty object: the file said nothing
			// before ledger's hooks went in (or ledger created it).
			return nil, nil
		}
		return doc, err
	})
	if err != nil {
		return err
	}
	_, statErr = os.Stat(path)
	removed := changed && errors.Is(statErr, fs.ErrNotExist)
	kept := ""
	if existed && changed && !removed {
		kept = "; previous file kept as " + filepath.Base(path) + ".bak"
		if real, err := agentconfig.RealFile(path, ""); err == nil && real != path {
			kept = "; previous file kept as " + real + ".bak" // beside the file the link leads to
		}
	}
	if opts.JSON {
		return writeJSON(app.Stdout, struct {
			Settings string `json:"settings"`
			Changed  bool   `json:"changed"`
		}{path, changed})
	}
	switch {
	case !changed && opts.Install:
		fmt.Fprintf(app.Stdout, "ledger's hooks are already installed in %s (nothing changed)\n", path)
	case !changed:
		fmt.Fprintf(app.Stdout, "no ledger hooks in %s (nothing changed)\n", path)
	case opts.Install:
		fmt.Fprintf(app.Stdout, "installed ledger's hooks (%s mode) in %s%s\n", opts.Mode, path, kept)
		if opts.Scope == "project" {
			fmt.Fprintf(app.Stdout, projectNote+"\n", path)
		}
		if opts.Agent == "codex" {
			fmt.Fprintln(app.Stdout, codexTrustNote)
		}
		if note := agentInstallNote(opts, path); note != "" {
			fmt.Fprintln(app.Stdout, note)
		}
		if opts.Agent == "claude" && opts.Mode == "clear" && !opts.StatusLine {
			fmt.Fprintln(app.Stdout, clearWindowNote)
		}
	case removed:
		fmt.Fprintf(app.Stdout, "removed ledger's hooks from %s, and the file, which held nothing else%s\n", path, kept)
	default:
		fmt.Fprintf(app.Stdout, "removed ledger's hooks from %s%s\n", path, kept)
	}
	return nil
}

// editSettings is the settings file with ledger's hooks installed (this
// very binary, by absolute path, with the flags given, at every event
// ledger handles) or removed.
func editSettings(app *App, opts *hooksOptions, old []byte) ([]byte, error) {
	if cliAgent(opts.Agent) {
		return editAgentSettings(app, opts, old)
	}
	if !opts.Install && opts.Agent == "codex" {
		return agentconfig.UninstallCodexHooks(old)
	}
	if !opts.Install {
		doc, err := agentconfig.UninstallStatusLine(old)
		if err != nil {
			return nil, err
		}
		return agentconfig.UninstallClaudeHooks(doc)
	}
	exe, err := hookProgram(app, opts)
	if err != nil {
		return nil, err
	}
	var args []string
	events := engine.HookEvents()
	if opts.Agent == "codex" {
		args, events = append(args, "--agent", "codex"), engine.CodexHookEvents()
	}
	if opts.Mode == "clear" {
		args = append(args, "--mode", "clear")
	}
	if opts.Startup {
		args = append(args, "--startup")
	}
	if app.dbFlag != "" {
		args = append(args, "--db", engine.AbsPath(app.dbFlag))
	}
	command, err := agentconfig.HookCommand(exe, args...)
	if err != nil {
		return nil, err
	}
	var hooks []agentconfig.Hook
	for _, ev := range events {
		hooks = append(hooks, agentconfig.Hook{Event: ev.Name, Command: command, Timeout: ev.Timeout})
	}
	if opts.Agent == "codex" {
		return agentconfig.InstallCodexHooks(old, hooks)
	}
	doc, err := agentconfig.InstallClaudeHooks(old, hooks)
	if err != nil || !opts.StatusLine {
		return doc, err
	}
	// The status line reads (and records the window Claude Code states
	// in) the ledger the hooks write.
	var slArgs []string
	if app.dbFlag != "" {
		slArgs = []string{"--db", engine.AbsPath(app.dbFlag)}
	}
	return agentconfig.InstallStatusLine(doc, exe, slArgs...)
}

// hookProgram is the ledger program the hooks run: this very binary by
// absolute path in a user's own settings; in a project's settings, which
// every clone shares, 'ledger' as each user's PATH finds it.
func hookProgram(app *App, opts *hooksOptions) (string, error) {
	if opts.Scope == "project" {
		return agentconfig.PathProgram, nil
	}
	exe, err := app.executable()
	if err != nil {
		return "", fmt.Errorf("find the ledger binary: %w", err)
	}
	return exe, nil
}

// projectNote says what a project's hooks need of each user.
const projectNote = "%s is shared by every clone: its hooks run 'ledger' from each user's PATH (this one: install ledger there, e.g. go install github.com/agentledger/ledger/cmd/ledger@latest); a user without it gets a failed hook, never a broken session"

// settingsPath is the settings.json of a scope.
func settingsPath(app *App, scope string) (string, error) {
	home, herr := app.home()
	wd, werr := app.Getwd()
	switch {
	case scope == "user" && herr != nil:
		return "", herr
	case scope == "project" && werr != nil:
		return "", werr
	case scope != "user" && scope != "project":
		return "", usagef("--scope %q: want user or project", scope)
	}
	return agentconfig.ClaudeSettingsPath(scope, home, wd)
}

// clearWindowNote: clear mode asks for a handoff at 80% of the model's
// window only when the agent stated it, which Claude Code does in its
// status line alone (ledger never acts on a window it guesses).
const clearWindowNote = "Clear mode asks the agent for a handoff at 80% of the model's window, which Claude Code states only to its status line: add --statusline so that ledger learns it (until then, only its own compactions are handed off)."

// codexTrustNote is what Codex needs after an install: it skips new or
// changed hooks until the user trusts them.
const codexTrustNote = "Codex runs new or changed hooks only once you trust them: start codex and review them in /hooks (codex exec: --dangerously-bypass-hook-trust). A project's .codex/hooks.json loads only in a trusted project."

// hooksFilePath is the file ledger's hooks go in: Claude Code's
// settings.json or Codex's hooks.json ($CODEX_HOME), of the scope.
// scopeRoot is the folder a project-scope install's file must really be
// in (agentconfig.UpdateFile's within): the working folder, the
// checkout. At user scope, nothing: the user's own links are followed
// wherever they lead.
func scopeRoot(app *App, scope string) string {
	if scope != "project" {
		return ""
	}
	wd, err := app.Getwd()
	if err != nil {
		return ""
	}
	return wd
}

func hooksFilePath(app *App, opts *hooksOptions) (string, error) {
	if cliAgent(opts.Agent) {
		return agentHooksPath(app, opts)
	}
	if opts.Agent != "codex" {
		return settingsPath(app, opts.Scope)
	}
	home, herr := app.home()
	wd, werr := app.Getwd()
	switch {
	case opts.Scope == "user" && herr != nil && app.Getenv("CODEX_HOME") == "":
		return "", herr
	case opts.Scope == "project" && werr != nil:
		return "", werr
	case opts.Scope != "user" && opts.Scope != "project":
		return "", usagef("--scope %q: want user or project", opts.Scope)
	}
	return agentconfig.CodexHooksPath(opts.Scope, home, wd, app.Getenv("CODEX_HOME"))
}
