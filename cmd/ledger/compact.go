package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/handoff"
)

type compactOptions struct {
	Session   string
	Task      string
	Trigger   string
	Out       string
	InProject bool
	Budget    int
	JSON      bool
}

func newCompactCmd(app *App) *cobra.Command {
	opts := &compactOptions{}
	cmd := &cobra.Command{
		Use:   "compact SESSION",
		Short: "Clear, don't compact: write a handoff and a compaction record",
		Long: `Write a handoff for a session: what a fresh session needs to carry on,
extracted from the session's messages without an LLM and fitted to a token
budget. It first ingests what is new in the session's transcripts, so the
handoff is current. It carries:

  Task, Requests   the first request, then every later one in order (typed
                   while the agent was busy included; long ones shortened in
                   the middle)
  Tasks            the agent's trackers, newest state wins: TodoWrite, the
                   Task tools, Codex update_plan, beads (bd) and gh issues
                   driven from the shell; done items here, open ones under
                   Next steps (in progress first)
  Files modified   what the session really changed, moves and deletes by the
                   shell included, marked new, deleted and uncommitted (read
                   from git when the checkout is here and the session is the
                   project's latest)
  Decisions        notes, answers to the agent's questions, the user's
                   corrections, decision: lines, settings the session made,
                   and the limits and fixes the agent established
  Errors           what still fails at the end, named (tests with file:line);
                   a later passing run, or a broader one, resolves a failure
  Next steps       notes, tracker items, what still fails, the routine the
                   finished items went through, the agent's last words
  Context          where the work stopped and how full the context was

The handoff goes to the ledger, with a compaction record (source cli) linked to
it, and its Markdown to --out, or to handoffs/<project>/<session>/<time>.md in
the database's folder (never the working tree, where git would see it);
--in-project writes .ledger/handoffs/<session>/<time>.md in the project instead.
A file asked for inside a git checkout (--out, --in-project) is kept out of git
status: ledger adds it (or /.ledger/) to the repository's .git/info/exclude,
once, and says so. Then /clear the agent and start it again: 'ledger resume' (or the
SessionStart hook) gives the new session the handoff.

The Markdown is trimmed to --budget tokens (default 1500) by priority: tests
and done items give way first, then files, blockers, errors, decisions,
requests, and next steps last; the JSON keeps everything.`,
		Example: `  ledger compact 258c7280
  ledger compact 258c7280 --task "finish the retry refactor" --budget 600 --json
  ledger compact 258c7280 --out HANDOFF.md`,
		Args: argsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Session = args[0]
			if opts.Trigger != "manual" && opts.Trigger != "auto" {
				return usagef("--trigger %q: want manual or auto", opts.Trigger)
			}
			if opts.Budget < handoff.MinBudget {
				return usagef("--budget %d: want at least %d tokens", opts.Budget, handoff.MinBudget)
			}
			return runCompact(cmd.Context(), app, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Task, "task", "", "the `task` to state (default: the session's first request)")
	cmd.Flags().StringVar(&opts.Trigger, "trigger", "manual", "`manual` or auto")
	cmd.Flags().StringVar(&opts.Out, "out", "", "write the Markdown to `path`")
	cmd.Flags().BoolVar(&opts.InProject, "in-project", false, "write the Markdown under the project's .ledger/handoffs (excluded from git)")
	cmd.Flags().IntVar(&opts.Budget, "budget", handoff.DefaultBudget, "fit the Markdown in `N` tokens")
	jsonFlag(cmd, &opts.JSON)
	return cmd
}

func runCompact(ctx context.Context, app *App, opts *compactOptions) error {
	eng := app.Engine()
	_, sess, err := eng.Session(ctx, opts.Session)
	if err != nil {
		return err
	}
	h, err := eng.Compact(ctx, sess.ID, engine.HandoffRequest{Task: opts.Task, Trigger: opts.Trigger, Budget: opts.Budget,
		Out: opts.Out, InProject: opts.InProject, Source: "cli"})
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(app.Stdout, h.Doc)
	}
	fmt.Fprint(app.Stdout, h.Markdown)
	fmt.Fprintf(app.Stderr, "ledger: handoff %d written (%d tokens) to the ledger and %s\n", h.ID, h.Tokens, h.Path)
	if h.Excluded != "" {
		fmt.Fprintf(app.Stderr, "ledger: added %s to %s, so git status does not show handoffs\n", h.Excluded, h.ExcludeFile)
	}
	return nil
}
