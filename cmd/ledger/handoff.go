package main

import (
	"context"
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/store"
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
	return cmd
}

func runHandoffList(ctx context.Context, app *App, opts *handoffOptions) error {
	s, err := app.Store(ctx)
	if err != nil {
		return err
	}
	session, err := optionalSessionID(ctx, s, opts.Arg)
	if err != nil {
		return err
	}
	hs, err := s.Handoffs(ctx, session, opts.Limit)
	if err != nil {
		return err
	}
	docs := make([]handoff.Doc, 0, len(hs))
	for _, h := range hs {
		d, err := h.Doc()
		if err != nil {
			return err
		}
		docs = append(docs, d)
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
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\n", d.ID, shortID(d.Session), humanTime(d.CreatedAt), d.Trigger, d.Tokens, truncate(oneLine(d.Task), 60))
	}
	return tw.Flush()
}

// findHandoff resolves ID|SESSION: a number is a handoff id when such a
// handoff exists; anything else (or a number that is no handoff id) is a
// session, whose latest handoff it is.
func findHandoff(ctx context.Context, s *store.Store, arg string) (store.Handoff, error) {
	if id, err := strconv.ParseInt(arg, 10, 64); err == nil {
		h, err := s.Handoff(ctx, id)
		if err == nil {
			return h, nil
		}
	}
	sess, err := s.Session(ctx, arg)
	if err != nil {
		return store.Handoff{}, err
	}
	return s.LatestHandoff(ctx, sess.ID)
}

func runHandoffShow(ctx context.Context, app *App, opts *handoffOptions) error {
	s, err := app.Store(ctx)
	if err != nil {
		return err
	}
	h, err := findHandoff(ctx, s, opts.Arg)
	if err != nil {
		return err
	}
	d, err := h.Doc()
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(app.Stdout, d)
	}
	fmt.Fprint(app.Stdout, d.Markdown)
	return nil
}
