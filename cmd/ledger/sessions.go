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
	"github.com/agentledger/ledger/store"
)

type sessionsOptions struct {
	Project string
	Host    string
	Agent   string
	Limit   int
	JSON    bool
}

func newSessionsCmd(app *App) *cobra.Command {
	opts := &sessionsOptions{}
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List sessions, newest activity first",
		Long: `List the sessions in the ledger, newest activity first, with their source
(the agent: claude, codex, gemini, qwen, copilot, pi, opencode, kilo), project
folder, title, message and compaction counts, and the cost its agent reports
(Claude Code: dollars at list prices, lines its edits added and removed; "-"
for none).`,
		Example: `  ledger sessions --limit 10
  ledger sessions --project . --json
  ledger sessions --host build-runner-3   # one machine's, on a team ledger
  ledger sessions --agent copilot         # Copilot CLI's sessions only`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Limit < 0 {
				return usagef("--limit must be 0 (no limit) or more, not %d", opts.Limit)
			}
			if _, ok := engine.AgentBySource(opts.Agent); opts.Agent != "" && !ok {
				return usagef("--agent %q: want one of %s", opts.Agent, engine.AgentSources())
			}
			return runSessions(cmd.Context(), app, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Project, "project", "", "only sessions of this project `folder` (or below it)")
	cmd.Flags().StringVar(&opts.Host, "host", "", "only sessions of this machine (`name` as on the session: see --json)")
	cmd.Flags().StringVar(&opts.Agent, "agent", "", "only sessions of this `agent`: "+engine.AgentSources())
	cmd.Flags().IntVar(&opts.Limit, "limit", 0, "show at most `N` sessions (0: all)")
	jsonFlag(cmd, &opts.JSON)
	return cmd
}

func runSessions(ctx context.Context, app *App, opts *sessionsOptions) error {
	list, err := app.Engine().SessionsOf(ctx, store.SessionFilter{Project: opts.Project, Host: opts.Host, Source: opts.Agent, Limit: opts.Limit})
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(app.Stdout, engine.SessionRows(list))
	}
	printSessions(app.Stdout, list)
	return nil
}

func printSessions(w io.Writer, list []store.Session) {
	if len(list) == 0 {
		fmt.Fprintln(w, "no sessions (ingest your agents' with: ledger ingest)")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tSOURCE\tLAST ACTIVITY\tMSGS\tCOMPACT\tCLEAR\tCOST\tPROJECT\tTITLE")
	for _, x := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\n", engine.ShortID(x.ID), x.Source, humanTime(x.LastAt),
			x.Messages, x.Compactions, x.Clears, engine.CostText(x.Cost), x.Project, handoff.Shorten(x.Title, 60))
	}
	tw.Flush()
}

func humanTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04")
}

// oneLine folds s onto one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
