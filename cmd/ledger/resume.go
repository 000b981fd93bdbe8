package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/handoff"
)

type resumeOptions struct {
	Session string
	Project string
	Budget  int
	Format  string
	For     string
}

func newResumeCmd(app *App) *cobra.Command {
	opts := &resumeOptions{}
	cmd := &cobra.Command{
		Use:   "resume [SESSION]",
		Short: "Fresh-session context from the latest ledger entries",
		Long: `Print what a fresh session needs to carry on: the session's latest handoff (or
one extracted now from its latest messages when none was written), its
compactions, its latest requests, and what moved since the handoff (branch,
HEAD, modified files changed on disk) when the project is a git checkout here.

Without SESSION it resumes the latest session of the project: --project, or
the current folder (the git checkout holding it, and every worktree of the same
repository). That is what a session started after /clear needs: it has a new id.

The output fits --budget tokens (default 1500, at least 200) by the meter's
count; the task and next steps always survive. --format hook prints Claude
Code's SessionStart output, with at most 10,000 characters of context (Claude
Code cuts anything longer to a preview).`,
		Example: `  ledger resume
  ledger resume 258c7280 --budget 1000
  ledger resume --project ~/src/app --format json
  ledger resume --format hook
  ledger resume --for codex 258c7280`,
		Args: argsUsage(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Session = args[0]
			}
			if opts.Budget < handoff.MinBudget {
				return usagef("--budget %d: want at least %d tokens", opts.Budget, handoff.MinBudget)
			}
			switch opts.Format {
			case "md", "json", "hook":
			default:
				return usagef("--format %q: want md, json or hook", opts.Format)
			}
			return runResume(cmd.Context(), app, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Project, "project", "", "resume the latest session of this project `folder` (default: the current folder)")
	cmd.Flags().IntVar(&opts.Budget, "budget", handoff.DefaultResumeBudget, "fit the context in `N` tokens")
	cmd.Flags().StringVar(&opts.Format, "format", "md", "`md`, json, or hook (Claude Code SessionStart output)")
	cmd.Flags().StringVar(&opts.For, "for", "", "print it as the first prompt of a session of this `agent` ("+engine.AgentSources()+"), whichever agent the session ran in")
	return cmd
}

func runResume(ctx context.Context, app *App, opts *resumeOptions) error {
	defer lessGC()()
	req := engine.ResumeRequest{Session: opts.Session, Project: opts.Project, Budget: opts.Budget}
	if req.Session == "" && req.Project == "" {
		wd, err := app.Getwd()
		if err != nil {
			return err
		}
		req.Project = wd
	}
	if opts.For != "" {
		return runCrossResume(ctx, app, req, opts)
	}
	if opts.Format == "hook" {
		req.MaxChars = engine.MaxHookContext
	}
	r, err := app.Engine().Resume(ctx, req)
	if err != nil {
		return err
	}
	defer app.Engine().KeepResumeState(ctx, r.Unsaved)
	switch opts.Format {
	case "json":
		return writeJSON(app.Stdout, r.Doc())
	case "hook":
		return writeJSON(app.Stdout, engine.NewSessionStartOutput(r.Markdown))
	}
	fmt.Fprint(app.Stdout, r.Markdown)
	return nil
}
