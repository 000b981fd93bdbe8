package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/handoff"
)

type auditOptions struct {
	Session string
	Since   string
	Loss    bool
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
(2026-01-31), an RFC 3339 time, or a duration back from now (36h, 7d).

--loss reports, for every compaction with a summary (Claude Code's after
compact_boundary, Codex's compacted item) or a handoff of ledger's, what the
state of the work at the cut held and which of it the summary kept and
dropped: modified files, open tasks, open errors, user requests, decisions.
The state is the handoff ledger extracts from the messages before the cut;
beside the summary, the same check of that handoff (or of the one ledger
wrote for the compaction), with both sizes in tokens. Then, for a compaction
with work after it, what the agent really used next (in its first 40 tool
calls: the files it read or changed, the commands it ran, the tests it named,
the tracker items it worked on, each named before the cut) and how much of it
the summary and the handoff carried; the human output ends with the totals.`,
		Example: `  ledger audit
  ledger audit 258c7280 --json
  ledger audit --since 7d
  ledger audit --loss 258c7280`,
		Args: argsUsage(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Session = args[0]
			}
			return runAudit(cmd.Context(), app, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Since, "since", "", "only compactions at or after `time` (date, RFC 3339, or 7d/36h ago)")
	cmd.Flags().BoolVar(&opts.Loss, "loss", false, "what each compaction's summary kept and dropped of the state of the work")
	jsonFlag(cmd, &opts.JSON)
	return cmd
}

func runAudit(ctx context.Context, app *App, opts *auditOptions) error {
	if opts.Loss {
		if opts.Since != "" {
			return usagef("--loss reports every compaction of the session: --since does not apply")
		}
		return runLoss(ctx, app, opts)
	}
	since, err := parseTimeFlag("--since", opts.Since, app.now())
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
	fmt.Fprintln(tw, "AT\tSESSION\tTRIGGER\tPRE\tPOST\tSOURCE\tHANDOFF\tSUMMARY\tKEPT\tTOOL CALLS")
	for _, r := range rows {
		trigger := r.Trigger
		if r.Source == "cli" {
			trigger = "clear" // ledger compact's handoff, not the agent's compaction
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%d\n", humanTime(time.Time(r.At)), engine.ShortID(r.Session), trigger,
			optInt(r.PreTokens), optInt(r.PostTokens), r.Source, optInt(r.HandoffID), r.SummaryTokens, keptText(r.PreservedMessages), r.ToolCalls)
	}
	tw.Flush()
	tot := engine.Totals(rows)
	clears := ""
	if tot.Clears > 0 {
		clears = fmt.Sprintf(" (and %d by ledger compact, a clear)", tot.Clears)
	}
	fmt.Fprintf(w, "\n%d compactions%s · median pre_tokens %s · median tool calls between compactions %s\n",
		tot.Compactions, clears, optInt(tot.MedianPreTokens), optInt(tot.MedianToolCalls))
}

// keptText is how many messages a partial compaction kept verbatim, "-"
// for none.
func keptText(n int64) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%d msgs", n)
}

func optInt(p *int64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

func runLoss(ctx context.Context, app *App, opts *auditOptions) error {
	reports, err := app.Engine().LossReports(ctx, opts.Session)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(app.Stdout, reports)
	}
	printLoss(app.Stdout, reports)
	return nil
}

// printLoss prints each report: the counts per section side by side, then
// what the summary dropped.
func printLoss(w io.Writer, reports []engine.Loss) {
	if len(reports) == 0 {
		fmt.Fprintln(w, "no compactions with a summary or a handoff")
		return
	}
	for i, l := range reports {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "compaction %d · %s · %s · %s · %s tokens before · cut after %d messages\n", l.Compaction,
			engine.ShortID(l.Session), humanTime(time.Time(l.At)), l.Trigger, optInt(l.PreTokens), l.CutMessages)
		if l.PreservedMessages > 0 {
			fmt.Fprintf(w, "a partial compaction: besides the summary, the agent kept its last %d messages verbatim (counted as kept)\n", l.PreservedMessages)
		}
		hname := "ledger handoff (extracted at the cut)"
		if l.Handoff.ID != nil {
			hname = fmt.Sprintf("ledger handoff %d", *l.Handoff.ID)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		if l.Summary != nil {
			fmt.Fprintf(tw, "\tSUMMARY\tHANDOFF\n")
			fmt.Fprintf(tw, "tokens\t%d\t%d\n", l.Summary.Tokens, l.Handoff.Tokens)
			for j, sec := range l.Summary.Sections {
				h := l.Handoff.Sections[j]
				fmt.Fprintf(tw, "%s\t%d/%d kept\t%d/%d kept\n", sec.Name, sec.Kept, sec.Kept+sec.Dropped, h.Kept, h.Kept+h.Dropped)
			}
			fmt.Fprintf(tw, "all\t%d kept, %d dropped\t%d kept, %d dropped\n", l.Summary.Kept, l.Summary.Dropped, l.Handoff.Kept, l.Handoff.Dropped)
		} else {
			fmt.Fprintf(tw, "\tHANDOFF\n")
			fmt.Fprintf(tw, "tokens\t%d\n", l.Handoff.Tokens)
			for _, h := range l.Handoff.Sections {
				fmt.Fprintf(tw, "%s\t%d/%d kept\n", h.Name, h.Kept, h.Kept+h.Dropped)
			}
			fmt.Fprintf(tw, "all\t%d kept, %d dropped\n", l.Handoff.Kept, l.Handoff.Dropped)
		}
		tw.Flush()
		printDropped(w, "summary", l.Summary)
		printDropped(w, hname, &l.Handoff.LossSide)
		printUsed(w, l)
	}
	if t := engine.TotalUsed(reports); t.Compactions > 0 {
		noun := "compactions"
		if t.Compactions == 1 {
			noun = "compaction"
		}
		fmt.Fprintf(w, "\nused after %d %s: %d items;", t.Compactions, noun, t.Total)
		if t.SummaryTokens > 0 {
			fmt.Fprintf(w, " summaries carried %d (%s) in %d tokens;", t.Summary, pct(t.Summary, t.Total), t.SummaryTokens)
		}
		fmt.Fprintf(w, " handoffs carried %d (%s) in %d tokens\n", t.Handoff, pct(t.Handoff, t.Total), t.HandoffTokens)
	}
}

// printUsed prints what the agent used after the compaction that existed
// before it, and what each text lacked of it.
func printUsed(w io.Writer, l engine.Loss) {
	u := l.UsedAfter
	if u == nil {
		return
	}
	fmt.Fprintf(w, "used after (first %d tool calls): %d items", u.Calls, u.Total)
	if u.Total == 0 {
		fmt.Fprintln(w)
		return
	}
	if l.Summary != nil {
		fmt.Fprintf(w, "; the summary carried %d (%s)", u.Summary, pct(u.Summary, u.Total))
	}
	fmt.Fprintf(w, "; the handoff carried %d (%s)\n", u.Handoff, pct(u.Handoff, u.Total))
	for _, it := range u.Items {
		if it.Handoff && (it.Summary || l.Summary == nil) {
			continue
		}
		var lacked []string
		if l.Summary != nil && !it.Summary {
			lacked = append(lacked, "summary")
		}
		if !it.Handoff {
			lacked = append(lacked, "handoff")
		}
		fmt.Fprintf(w, "  - %s %s: not in the %s\n", it.Kind, handoff.Shorten(oneLine(it.Text), 100), strings.Join(lacked, " nor the "))
	}
}

func pct(n, of int) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%d%%", (n*100+of/2)/of)
}

func printDropped(w io.Writer, name string, side *engine.LossSide) {
	if side == nil || side.Dropped == 0 {
		return
	}
	fmt.Fprintf(w, "dropped by the %s:\n", name)
	for _, sec := range side.Sections {
		for _, it := range sec.Items {
			if !it.Kept {
				fmt.Fprintf(w, "  - %s: %s\n", strings.TrimSuffix(sec.Name, "s"), handoff.Shorten(oneLine(it.Text), 110))
			}
		}
	}
}
