package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/handoff"
)

type handoffOptions struct {
	Arg   string
	Limit int
	JSON  bool
}

func newHandoffCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "handoff",
		Short: "Read handoffs",
		Long:  `List the handoffs in the ledger, or show one.`,
		Example: `  ledger handoff list
  ledger handoff list 258c7280 --json
  ledger handoff show 12
  ledger handoff show 258c7280 --json`,
		Args: argsUsage(cobra.NoArgs),
	}
	list := &handoffOptions{}
	listCmd := &cobra.Command{
		Use:   "list [SESSION]",
		Short: "List handoffs, newest first (all, or one session's)",
		Args:  argsUsage(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				list.Arg = args[0]
			}
			return runHandoffList(cmd.Context(), app, list)
		},
	}
	listCmd.Flags().IntVar(&list.Limit, "limit", 0, "show at most `N` handoffs (0: all)")
	jsonFlag(listCmd, &list.JSON)
	show := &handoffOptions{}
	showCmd := &cobra.Command{
		Use:   "show ID|SESSION",
		Short: "Show a handoff: by its id, or a session's latest (Markdown; --json for the object)",
		Args:  argsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			show.Arg = args[0]
			return runHandoffShow(cmd.Context(), app, show)
		},
	}
	jsonFlag(showCmd, &show.JSON)
	cmd.AddCommand(listCmd, showCmd)
	addHandoffTo(app, cmd)
	return cmd
}

func runHandoffList(ctx context.Context, app *App, opts *handoffOptions) error {
	docs, err := app.Engine().Handoffs(ctx, opts.Arg, opts.Limit)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(app.Stdout, docs)
	}
	if len(docs) == 0 {
		fmt.Fprintln(app.Stdout, "no handoffs (write one with: ledger compact SESSION)")
		return nil
	}
	tw := tabwriter.NewWriter(app.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSESSION\tCREATED\tTRIGGER\tTOKENS\tTASK")
	for _, d := range docs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\n", d.ID, engine.ShortID(d.Session), humanTime(d.CreatedAt), d.Trigger, d.Tokens, handoff.Shorten(oneLine(d.Task), 60))
	}
	return tw.Flush()
}

func runHandoffShow(ctx context.Context, app *App, opts *handoffOptions) error {
	d, err := app.Engine().FindHandoff(ctx, opts.Arg)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(app.Stdout, d)
	}
	fmt.Fprint(app.Stdout, d.Markdown)
	return nil
}
