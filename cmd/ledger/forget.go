package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/cmd/internal/engine"
)

type forgetOptions struct {
	Session string
	Project string
	DryRun  bool
	Files   bool
	JSON    bool
}

func newForgetCmd(app *App) *cobra.Command {
	opts := &forgetOptions{}
	cmd := &cobra.Command{
		Use:   "forget SESSION | --project DIR",
		Short: "Delete a session and everything derived from it",
		Long: `Delete a session from the ledger: its messages, handoffs, compactions, ingest
cursors and their full-text index rows. Afterwards nothing of it is searchable,
and ingesting its transcript again does not bring it back (ledger remembers the
id, nothing else).

Nothing of the session stays on disk, not even in free space: the full-text
indexes are merged without its words and the database file is rewritten
(VACUUM), and its WAL emptied. That costs time and room on a large ledger:
about 1.5 s for 100,000 messages (a 212 MB file), growing with the file, and
free disk space the size of the file while it runs; other processes' writes
wait meanwhile (hooks leave theirs for their next event).

Handoff Markdown files ledger wrote for the session are listed; --files deletes
them too. --dry-run shows what would go and changes nothing.

--project DIR forgets every session of a project (a folder and those below it)
instead of one: with 'ledger pause' or a .ledgerignore, nothing of the project
is left in the ledger.`,
		Example: `  ledger forget 258c7280 --dry-run
  ledger forget 258c7280 --files
  ledger forget --project ~/src/client-work --files`,
		Args: argsUsage(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (len(args) == 1) == (opts.Project != "") {
				return usagef("give a SESSION or --project DIR, not both")
			}
			if opts.Project != "" {
				return runForgetProject(cmd.Context(), app, opts)
			}
			opts.Session = args[0]
			return runForget(cmd.Context(), app, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Project, "project", "", "forget every session of the project `folder`")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "show what would be deleted, delete nothing")
	cmd.Flags().BoolVar(&opts.Files, "files", false, "also delete the handoff files ledger wrote for the session")
	jsonFlag(cmd, &opts.JSON)
	return cmd
}

func runForget(ctx context.Context, app *App, opts *forgetOptions) error {
	f, err := app.Engine().Forget(ctx, opts.Session, opts.DryRun, opts.Files)
	if err != nil {
		return err
	}
	for _, err := range f.FileErrors {
		fmt.Fprintf(app.Stderr, "ledger: warning: %v\n", err)
	}
	if opts.JSON {
		return writeJSON(app.Stdout, f)
	}
	verb := "forgot"
	if opts.DryRun {
		verb = "would forget"
	}
	fmt.Fprintf(app.Stdout, "%s session %s: %d messages, %d handoffs, %d compactions\n", verb, f.SessionID, f.Messages, f.Handoffs, f.Compactions)
	if !opts.DryRun && !f.WALTruncated {
		fmt.Fprintln(app.Stderr, "ledger: warning: another process is reading the ledger: its WAL, which may hold the session's old pages, is emptied when that process is done")
	}
	for _, p := range f.HandoffFiles {
		state := "kept (use --files to delete)"
		switch {
		case opts.DryRun && opts.Files:
			state = "would be deleted"
		case opts.DryRun:
			state = "would be kept (use --files to delete)"
		case slices.Contains(f.FilesRemoved, p):
			state = "deleted"
		}
		fmt.Fprintf(app.Stdout, "  handoff file %s: %s\n", p, state)
	}
	return nil
}

// runForgetProject is forget --project: every session of the project.
func runForgetProject(ctx context.Context, app *App, opts *forgetOptions) error {
	project := engine.AbsPath(opts.Project)
	fs, err := app.Engine().ForgetProject(ctx, project, opts.DryRun, opts.Files)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(app.Stdout, fs)
	}
	verb := "forgot"
	if opts.DryRun {
		verb = "would forget"
	}
	var msgs, handoffs int64
	for _, f := range fs {
		msgs += f.Messages
		handoffs += f.Handoffs
		for _, err := range f.FileErrors {
			fmt.Fprintf(app.Stderr, "ledger: warning: %v\n", err)
		}
	}
	fmt.Fprintf(app.Stdout, "%s %d sessions of %s: %d messages, %d handoffs\n", verb, len(fs), project, msgs, handoffs)
	return nil
}
