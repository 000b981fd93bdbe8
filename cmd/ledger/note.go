package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/cmd/internal/engine"
)

type noteOptions struct {
	Session                 string
	Decision, Next, Blocker string
	Project                 string
	JSON                    bool
}

func newNoteCmd(app *App) *cobra.Command {
	opts := &noteOptions{}
	cmd := &cobra.Command{
		Use:   "note [SESSION] --decision TEXT | --next TEXT | --blocker TEXT",
		Short: "Record a decision, next step or blocker for the next handoff",
		Long: `Record a fact on purpose while working: a decision taken, a next step, or a
blocker. The next handoff of the session carries it verbatim (notes come
first in their section), and search finds it (--kind note).

Without SESSION the note goes to the latest session of the project: --project,
or the current folder. An agent can be told to record its decisions this way
in CLAUDE.md or AGENTS.md, e.g.:

  When you settle a design question, run: ledger note --decision "<what and why>"`,
		Example: `  ledger note --decision "retries: 3 attempts, exponential backoff, no jitter"
  ledger note 258c7280 --next "port the remaining two endpoints to the new client"
  ledger note --blocker "staging API keys are not in the vault yet" --json`,
		Args: argsUsage(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Session = args[0]
			}
			return runNote(cmd.Context(), app, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Decision, "decision", "", "a decision taken (`text`)")
	cmd.Flags().StringVar(&opts.Next, "next", "", "a next step (`text`)")
	cmd.Flags().StringVar(&opts.Blocker, "blocker", "", "a blocker (`text`)")
	cmd.Flags().StringVar(&opts.Project, "project", "", "without SESSION, the latest session of this project `folder` (default: the current folder)")
	jsonFlag(cmd, &opts.JSON)
	return cmd
}

func runNote(ctx context.Context, app *App, opts *noteOptions) error {
	var kind, text string
	given := 0
	for _, k := range []struct{ kind, text string }{{"decision", opts.Decision}, {"next", opts.Next}, {"blocker", opts.Blocker}} {
		if k.text != "" {
			kind, text = k.kind, k.text
			given++
		}
	}
	if given != 1 {
		return usagef("give exactly one of --decision, --next or --blocker")
	}
	project := opts.Project
	if project == "" && opts.Session == "" {
		wd, err := app.Getwd()
		if err != nil {
			return err
		}
		project = wd
	}
	n, err := app.Engine().Note(ctx, engine.NoteRequest{Session: opts.Session, Project: project, Kind: kind, Text: text})
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(app.Stdout, n)
	}
	fmt.Fprintf(app.Stdout, "%s note %d recorded for session %s; the next handoff carries it\n", kind, n.ID, n.SessionID)
	return nil
}
