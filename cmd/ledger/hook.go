package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/cmd/internal/engine"
)

type hookOptions struct {
	Agent   string
	Event   string
	Mode    string
	Startup bool
}

func newHookCmd(app *App) *cobra.Command {
	opts := &hookOptions{}
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "Run as an agent's hook or plugin event (reads the event's JSON on stdin)",
		Long: `Run as a Claude Code (or, with --agent codex, Codex CLI) hook: read the
hook input on stdin and act on its hook_event_name. Installed by 'ledger hooks
install'; you do not run it by hand.

  SessionStart  compact/resume: inject this session's resume context;
                clear: inject the latest handoff of the same project (the new
                session has a new id); startup: only with --startup.
  PreCompact    ingest the transcript, write a handoff and record the
                compaction (source hook). In --mode clear, an auto compaction
                is then blocked with a message to run /clear instead.
  PostToolUse   ingest what is new; past 80% of the context window, and at
                50, 100 and 150 tool calls, suggest a handoff and /clear (once
                per threshold).
  PostCompact   (Codex) ingest the compaction Codex wrote, completing the
                record PreCompact made.
  Stop          ingest what is new in the transcript. In --mode clear, once
                the context passes 80% of the window, ask the agent once to
                run 'ledger compact' and the user to /clear; never in a
                headless run (claude -p, codex exec), a subagent, or a
                session at its hard limit (95%).
  SessionEnd    the same.

With --agent codex it reads Codex CLI's hook input and prints only what
Codex's output schema allows (installed by 'ledger hooks install --agent
codex'). With --agent gemini, qwen or copilot it reads the hook input of
Gemini CLI, Qwen Code or GitHub Copilot CLI, whose events it handles as the
ones above (Gemini CLI's PreCompress as PreCompact, its AfterAgent as Stop;
Copilot CLI's camelCase events, named by --event, and their PascalCase
aliases), and prints the session-start context in each one's form. Gemini
CLI fires PreCompress before every turn: a handoff is written only when a
compression is due. With --agent opencode, kilo or pi it reads the event
ledger's plugin for that agent sends (installed by 'ledger hooks install
--agent AGENT'): {"agent", "hook_event_name", "session_id", "cwd", "source",
"transcript_path"}, the event one of the above; OpenCode's and Kilo's sessions
are read from the agent's database ($OPENCODE_DB, $KILO_DB, $XDG_DATA_HOME as
the agent reads them). Every decision is a receipt: see 'ledger hooks log'.

A hook never blocks or slows the agent. Each event has a budget (SessionStart
2 s; PostToolUse, Stop and SessionEnd 1 s; PreCompact 10 s) that it keeps
whatever it reads and whoever holds the ledger's write lock: what does not fit
(the rest of a long transcript, a write the lock holds up) is left for the next
event, and PreCompact then writes the handoff's Markdown file at once and its
ledger row later. Whatever goes wrong (bad input, no database, a transcript
that is a pipe or a device), it exits 0 with one warning line on stderr and in
$XDG_STATE_HOME/ledger/hook.log. Each run leaves a receipt (event, session,
time, ms, outcome, what it did or left for later) in the ledger, or in the hook
log when the ledger cannot be written at once. Only clear mode blocks, and only
after the handoff is safely written.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Mode != "assist" && opts.Mode != "clear" {
				return usagef("--mode %q: want assist or clear", opts.Mode)
			}
			if _, ok := engine.AgentBySource(opts.Agent); !ok || opts.Agent == "" {
				return usagef("--agent %q: want one of %s", opts.Agent, engine.AgentSources())
			}
			if opts.Mode == "clear" && opts.Agent != "claude" && opts.Agent != "codex" {
				return usagef("--mode clear: only Claude Code's and Codex's hooks can block (not %s's)", opts.Agent)
			}
			return runHook(cmd.Context(), app, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Agent, "agent", "claude", "`claude`, codex, gemini, qwen, copilot, or a plugin's (opencode, kilo, pi): whose hook input this is, and whose output rules to keep")
	cmd.Flags().StringVar(&opts.Event, "event", "", "the agent's `event` when its input does not name it (Copilot CLI's camelCase events)")
	cmd.Flags().StringVar(&opts.Mode, "mode", "assist", "`assist` or clear (ask for a handoff and /clear once the context passes the threshold)")
	cmd.Flags().BoolVar(&opts.Startup, "startup", false, "inject the project's latest handoff at brand-new sessions too")
	return cmd
}

// runHook runs one hook event (engine.RunHook: within the event's budget,
// failing open) and reports it: its output on stdout, a warning on
// stderr, and clear mode's block as the error that exits 2.
func runHook(ctx context.Context, app *App, opts *hookOptions) error {
	o := engine.HookOptions{Agent: opts.Agent, Event: opts.Event, Mode: opts.Mode, Startup: opts.Startup,
		Entrypoint: app.Getenv("CLAUDE_CODE_ENTRYPOINT"), Ledger: ledgerCommand(app),
		StateDir: app.Getenv("XDG_STATE_HOME")}
	if home, err := app.home(); err == nil || app.Getenv("XDG_DATA_HOME") != "" {
		o.Database = engine.AgentDatabase(opts.Agent, home, app.Getenv)
	}
	run := app.Engine().RunHook(ctx, app.Stdin, o)
	if run.Output != nil {
		if err := writeJSON(app.Stdout, run.Output); err != nil {
			fmt.Fprintf(app.Stderr, "ledger: warning: %s\n", app.Engine().HookWarning(app.Getenv("XDG_STATE_HOME"), run.Receipt.Event, err))
		}
	}
	if run.Warning != "" {
		fmt.Fprintf(app.Stderr, "ledger: warning: %s\n", run.Warning)
	}
	return run.Err
}
