package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/cmd/internal/engine"
)

type pauseOptions struct {
	Project string
	Resume  bool // unpause
	List    bool
	JSON    bool
}

func newPauseCmd(app *App) *cobra.Command {
	opts := &pauseOptions{}
	cmd := &cobra.Command{
		Use:   "pause [--project DIR]",
		Short: "Keep a project out of the ledger until ledger unpause",
		Long: `Pause recording for a project: from now on ingest and every hook keep nothing
of its sessions (the transcript lines are read past, not stored), and no hook
injects anything there, until 'ledger unpause'. The project is
--project, else the working folder's git checkout (the folder itself outside
one); folders below it are paused too. What the ledger already holds of the
project stays, left out of search and resume meanwhile: 'ledger forget
--project DIR' removes it.

A file named .ledgerignore at a repository's top folder does the same for
everyone who clones it, with no command. --list shows the projects kept out
either way.`,
		Example: `  ledger pause
  ledger pause --project ~/src/client-work
  ledger pause --list --json`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPause(cmd.Context(), app, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Project, "project", "", "the project `folder` (default: the working folder's checkout)")
	cmd.Flags().BoolVar(&opts.List, "list", false, "list the projects kept out of the ledger, pause nothing")
	jsonFlag(cmd, &opts.JSON)
	return cmd
}

// newUnpauseCmd is pause's undo. It was named resume-recording, which
// read like a kind of `ledger resume`: that name stays as an alias.
func newUnpauseCmd(app *App) *cobra.Command {
	opts := &pauseOptions{Resume: true}
	cmd := &cobra.Command{
		Use:     "unpause [--project DIR]",
		Aliases: []string{"resume-recording"},
		Short:   "Record a paused project again (undo ledger pause)",
		Long: `Resume recording for a project 'ledger pause' paused (--project, else the
working folder's git checkout). What happened while it was paused stays
unrecorded. A .ledgerignore file is not affected: delete the file.`,
		Example: `  ledger unpause --project ~/src/client-work`,
		Args:    argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPause(cmd.Context(), app, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Project, "project", "", "the project `folder` (default: the working folder's checkout)")
	return cmd
}

func runPause(ctx context.Context, app *App, opts *pauseOptions) error {
	eng := app.Engine()
	if opts.List {
		ex, err := eng.ExcludedProjects(ctx)
		if err != nil {
			return err
		}
		if opts.JSON {
			return writeJSON(app.Stdout, ex)
		}
		printExcluded(app, ex)
		return nil
	}
	dir := opts.Project
	if dir == "" {
		wd, err := app.Getwd()
		if err != nil {
			return fmt.Errorf("working folder: %w", err)
		}
		dir = wd
	}
	project := engine.ProjectOf(dir)
	if opts.Resume {
		resumed, err := eng.ResumeRecording(ctx, project)
		if err != nil {
			return err
		}
		if !resumed {
			fmt.Fprintf(app.Stdout, "recording was not paused for %s\n", project)
		} else {
			fmt.Fprintf(app.Stdout, "recording resumed for %s\n", project)
		}
		if why, err := eng.OptedOut(ctx, project); err == nil && why != "" {
			fmt.Fprintf(app.Stderr, "ledger: warning: %s: still kept out of the ledger\n", why)
		}
		return nil
	}
	paused, err := eng.Pause(ctx, project)
	if err != nil {
		return err
	}
	if paused {
		fmt.Fprintf(app.Stdout, "recording paused for %s (and the folders below it)\n", project)
	} else {
		fmt.Fprintf(app.Stdout, "recording was already paused for %s\n", project)
	}
	fmt.Fprintf(app.Stdout, "what the ledger already holds of it stays; to remove it: ledger forget --project %s\n", project)
	fmt.Fprintf(app.Stdout, "to record it again: ledger unpause --project %s\n", project)
	return nil
}

// printExcluded lists the projects kept out of the ledger.
func printExcluded(app *App, ex []engine.Excluded) {
	if len(ex) == 0 {
		fmt.Fprintln(app.Stdout, "no project is kept out of the ledger")
		return
	}
	for _, x := range ex {
		if x.How == "paused" {
			fmt.Fprintf(app.Stdout, "%s  paused (ledger unpause --project %s)\n", x.Project, x.Project)
		} else {
			fmt.Fprintf(app.Stdout, "%s  ignored by %s\n", x.Project, x.File)
		}
	}
}
