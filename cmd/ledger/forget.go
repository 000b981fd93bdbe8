package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/store"
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
wait meanwhile (hooks leave theirs for their next event). A process that holds
a read of the ledger throughout (ledger serve or mcp in the middle of a long
request) keeps the old pages in the file and its WAL: forget waits for it up to
10 s, then says so, and 'ledger doctor' empties them once it is done.

On a team ledger (PostgreSQL) forget rewrites the tables that held the session
(VACUUM FULL, which needs their owner; other clients wait while it runs). A
transaction older than the forget (in the ledger's database, or one that wrote
in any database of the server) makes the rewrite keep the rows: forget waits
for it up to 10 s, checks each rewrite, and says which tables kept them.
PostgreSQL's write-ahead log (pg_wal) keeps the deleted rows until its segments
are recycled, and WAL archives, replicas and backups keep theirs: ledger cannot
remove those, and says so.

Handoff Markdown files ledger wrote for the session are listed; --files deletes
them too, and the folders named after the session and project that held them
once empty. --dry-run shows what would go and changes nothing.

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
	if !opts.DryRun {
		if w := scrubWarning(app, f.Forgotten); w != "" {
			fmt.Fprintln(app.Stderr, w)
		}
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
	if !opts.DryRun && len(fs) > 0 {
		if w := scrubWarning(app, fs[0].Forgotten); w != "" {
			fmt.Fprintln(app.Stderr, w)
		}
	}
	return nil
}

// scrubWarning says, in one line, what a forget could not remove from
// disk, or "" when nothing is left: the truth about each backend.
func scrubWarning(app *App, f store.Forgotten) string {
	st := app.Engine().Opened()
	switch {
	case st != nil && st.Shared() && f.HeapRewritten:
		return "ledger: warning: the team ledger's tables were rewritten without it (VACUUM FULL), but PostgreSQL's write-ahead log (pg_wal) keeps " +
			"its rows until those segments are recycled, and WAL archives, replicas and backups keep theirs: ledger cannot remove those"
	case st != nil && st.Shared():
		return "ledger: warning: the team ledger's tables could not be rewritten without it (" + f.HeapError + "): its rows' bytes stay in their files " +
			"until their owner runs VACUUM FULL on them, and PostgreSQL's pg_wal, WAL archives, replicas and backups keep theirs"
	case !f.WALTruncated:
		return "ledger: warning: another process (ledger serve or mcp, say) held a read of the ledger throughout: the session's old pages " +
			"are still in the database file and its WAL; run `ledger doctor` once that process is done (or closed) to empty them"
	}
	return ""
}
