package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/cmd/internal/engine"
)

type auditOptions struct {
	Session string
	Since   string
	JSON    bool
}

func newAuditCmd(app *App) *cobra.Command {
	opts := &auditOptions{}
	cmd := &cobra.Command{
		Use:   "audit [SESSION]",
		Short: "Compaction history, oldest first, with totals",
		Long: `List every compaction the ledger knows, oldest first: when, manual or auto, the
context before and after, where the record came from (transcript, hook, cli),
the handoff written for it, the size of the compaction summary and the tool calls
since the previous compaction. The human output ends with totals.

SESSION is a full session id or a unique prefix. --since takes a date
(2026-01-31), an RFC 3339 time, or a duration back from now (36h, 7d).`,
		Example: `  ledger audit
  ledger audit 258c7280 --json
  ledger audit --since 7d`,
		Args: argsUsage(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Session = args[0]
			}
			return runAudit(cmd.Context(), app, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Since, "since", "", "only compactions at or after `time` (date, RFC 3339, or 7d/36h ago)")
	jsonFlag(cmd, &opts.JSON)
	return cmd
}

func runAudit(ctx context.Context, app *App, opts *auditOptions) error {
	app.reads()
	since, err := parseTimeFlag("--since", opts.Since, time.Now())
	if err != nil {
		return err
	}
	rows, err := app.Engine().Audit(ctx, opts.Session, since)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(app.Stdout, rows)
	}
	printAudit(app.Stdout, rows)
	return nil
}

func printAudit(w io.Writer, rows []engine.AuditRow) {
	if len(rows) == 0 {
		fmt.Fprintln(w, "no compactions")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "AT\tSESSION\tTRIGGER\tPRE\tPOST\tSOURCE\tHANDOFF\tSUMMARY\tTOOL CALLS")
	var pre, calls []int64
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\n", humanTime(time.Time(r.At)), shortID(r.Session), r.Trigger,
			optInt(r.PreTokens), optInt(r.PostTokens), r.Source, optInt(r.HandoffID), r.SummaryTokens, r.ToolCalls)
		if r.PreTokens != nil {
			pre = append(pre, *r.PreTokens)
		}
		calls = append(calls, r.ToolCalls)
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%d compactions · median pre_tokens %s · median tool calls between compactions %s\n",
		len(rows), median(pre), median(calls))
}

func optInt(p *int64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

// median of xs as text, "-" for none.
func median(xs []int64) string {
	m, ok := engine.Median(xs)
	if !ok {
		return "-"
	}
	return fmt.Sprint(m)
}
