package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/cmd/internal/engine"
)

type hookOptions struct {
	Mode    string
	Startup bool
}

func newHookCmd(app *App) *cobra.Command {
	opts := &hookOptions{}
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "Run as a Claude Code hook (reads the hook's JSON on stdin)",
		Long: `Run as a Claude Code hook: read the hook input on stdin and act on its
hook_event_name. Installed by 'ledger hooks install'; you do not run it by hand.

  SessionStart  compact/resume: inject this session's resume context;
                clear: inject the latest handoff of the same project (the new
                session has a new id); startup: only with --startup.
  PreCompact    ingest the transcript, write a handoff and record the
                compaction (source hook). In --mode clear, an auto compaction
                is then blocked with a message to run /clear instead.
  PostToolUse   ingest what is new; past 80% of the context window, and at
                50, 100 and 150 tool calls, suggest a handoff and /clear (once
                per threshold).
  Stop          ingest what is new in the transcript.
  SessionEnd    the same, within 1 s (what is left is picked up later).

A hook never blocks or slows the agent: whatever goes wrong (bad input, no
database, a deadline), it exits 0 with one warning line on stderr and in
$XDG_STATE_HOME/ledger/hook.log. Only clear mode blocks, and only after the
handoff is safely written.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Mode != "assist" && opts.Mode != "clear" {
				return usagef("--mode %q: want assist or clear", opts.Mode)
			}
			return runHook(cmd.Context(), app, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Mode, "mode", "assist", "`assist` or clear (block auto-compaction after writing the handoff)")
	cmd.Flags().BoolVar(&opts.Startup, "startup", false, "inject the project's latest handoff at brand-new sessions too")
	return cmd
}

// runHook runs one hook event and fails open: every error becomes a
// warning, except the one clear-mode block, which is the hook's purpose.
func runHook(ctx context.Context, app *App, opts *hookOptions) error {
	start := time.Now()
	in, err := engine.DecodeHookInput(app.Stdin)
	if err != nil {
		hookWarn(app, "", err)
		return nil
	}
	deadline, ok := engine.HookDeadline(in.Event)
	if !ok {
		return nil // an event ledger does not handle: nothing to do
	}
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	out, err := app.Engine().Hook(ctx, in, engine.HookOptions{Mode: opts.Mode, Startup: opts.Startup})
	if err == nil && out != nil {
		err = writeJSON(app.Stdout, out)
	}
	switch {
	case errors.As(err, new(engine.BlockError)):
		return err
	case err != nil:
		if ctx.Err() != nil {
			err = fmt.Errorf("deadline of %v reached after %v (the rest is picked up later): %w", deadline, time.Since(start).Round(time.Millisecond), err)
		}
		hookWarn(app, in.Event, err)
	}
	return nil
}

// hookWarn reports a failure without failing: one line on stderr, and the
// same line in the hook log.
func hookWarn(app *App, event string, err error) {
	fmt.Fprintf(app.Stderr, "ledger: warning: %s\n", app.Engine().HookWarning(app.Getenv("XDG_STATE_HOME"), event, err))
}
