package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/store"
)

type hooksLogOptions struct {
	Session string
	Since   time.Duration
	Limit   int
	JSON    bool
}

func newHooksLogCmd(app *App) *cobra.Command {
	opts := &hooksLogOptions{}
	cmd := &cobra.Command{
		Use:   "log",
		Short: "Show what each hook run did, when, how long it took, and why it did nothing",
		Long: `Show the receipts 'ledger hook' leaves, newest first: the event, the session,
when it ran, how long it took, its outcome (ok, nothing, deferred, failed,
blocked, timeout) and what it did, left for later or decided (clear mode's
blocks and its reasons not to block). A receipt the ledger could not take at
once is in the hook log file instead ($XDG_STATE_HOME/ledger/hook.log).`,
		Example: `  ledger hooks log
  ledger hooks log --session 019e5a10 --json`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Limit < 0 {
				return usagef("--limit must be 0 (no limit) or more, not %d", opts.Limit)
			}
			return runHooksLog(cmd.Context(), app, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Session, "session", "", "only this `SESSION`'s receipts (an id or a unique prefix)")
	cmd.Flags().DurationVar(&opts.Since, "since", 0, "only receipts of the last `DURATION` (e.g. 2h; 0: all)")
	cmd.Flags().IntVar(&opts.Limit, "limit", 50, "show at most `N` receipts (0: all)")
	jsonFlag(cmd, &opts.JSON)
	return cmd
}

func runHooksLog(ctx context.Context, app *App, opts *hooksLogOptions) error {
	f := store.ReceiptFilter{SessionID: opts.Session, Limit: opts.Limit}
	if opts.Since > 0 {
		f.Since = app.now().Add(-opts.Since)
	}
	list, err := app.Engine().HookLog(ctx, f)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(app.Stdout, list)
	}
	printReceipts(app.Stdout, list)
	return nil
}

func printReceipts(w io.Writer, list []store.HookReceipt) {
	if len(list) == 0 {
		fmt.Fprintln(w, "no hook receipts")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WHEN\tEVENT\tSESSION\tMS\tOUTCOME\tDETAIL")
	for _, r := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", r.At.Local().Format("2006-01-02 15:04:05"), r.Event,
			cmp.Or(engine.ShortID(r.SessionID), "-"), r.MS, r.Outcome, strings.ReplaceAll(r.Detail, "\n", " "))
	}
	tw.Flush()
}
