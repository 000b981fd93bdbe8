package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

type redactOptions struct {
	Rescan bool
	JSON   bool
}

func newRedactCmd(app *App) *cobra.Command {
	opts := &redactOptions{}
	cmd := &cobra.Command{
		Use:   "redact --rescan",
		Short: "Apply the current secret rules to rows stored earlier",
		Long: `ledger replaces secrets with [REDACTED:<kind>] as it stores them. Rows stored
before a rule existed, or with --no-redact, may still hold some: --rescan
applies the current rules to every stored column that can hold recorded text:
messages (text, tool names, inputs and results, ids, models), sessions (ids,
projects, branches, titles, models), compaction summaries, handoffs, notes,
cursors (paths, and the reader state that keeps prompts queued while the
agent worked), hook receipts and marks. A session id or a path that holds a
secret is replaced in every row that names it. It updates the rows that
change, rewrites the handoff files ledger wrote (moving those whose names held
a secret), rebuilds the full-text indexes, and rewrites the database file
(secure_delete, VACUUM, then a WAL checkpoint) so that the old text is not
left behind in free pages or in the WAL. The hook log and pending drafts are
not rewritten.

VACUUM needs free disk space about the size of the database, and holds the write
lock while it runs. Another process that keeps the database open can keep the
WAL (and old text in it) until it closes; ledger then says so.`,
		Example: `  ledger redact --rescan
  ledger redact --rescan --json`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !opts.Rescan {
				return usagef("redact needs --rescan: secrets are redacted as they are stored; --rescan applies the current rules to rows stored earlier")
			}
			if app.noRedact {
				return usagef("--no-redact and redact --rescan contradict each other")
			}
			return runRedact(cmd.Context(), app, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Rescan, "rescan", false, "apply the current rules to every stored row, then rebuild the index and compact the file")
	jsonFlag(cmd, &opts.JSON)
	return cmd
}

func runRedact(ctx context.Context, app *App, opts *redactOptions) error {
	s, err := app.Store(ctx)
	if err != nil {
		return err
	}
	res, err := s.RedactRescan(ctx)
	if err != nil {
		return err
	}
	if !res.WALTruncated {
		fmt.Fprintln(app.Stderr, "ledger: warning: another process has the database open; its WAL may hold old text until that process closes")
	}
	if opts.JSON {
		return writeJSON(app.Stdout, struct {
			RowsChanged int64 `json:"rows_changed"`
			Secrets     int   `json:"secrets"`
		}{res.RowsChanged, res.Secrets})
	}
	fmt.Fprintf(app.Stdout, "%d rows changed, %d secrets redacted; full-text index rebuilt, database file rewritten\n",
		res.RowsChanged, res.Secrets)
	return nil
}
