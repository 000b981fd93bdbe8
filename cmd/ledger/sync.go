package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/store"
)

type syncOptions struct {
	To   string
	JSON bool
}

func newSyncCmd(app *App) *cobra.Command {
	opts := &syncOptions{}
	cmd := &cobra.Command{
		Use:   "sync --to postgres://USER@HOST/DB",
		Short: "Push this machine's ledger to a team ledger on PostgreSQL",
		Long: `Push the local SQLite ledger (--db, else the default) to a team ledger on a
PostgreSQL server: what is new since the last sync from this ledger (the server
keeps how far each machine's ledger got), each session in one transaction.
Running it twice sends nothing twice; a session the server already has from
another machine is completed, not doubled. Secrets are redacted with the local
rules before anything leaves the machine. The local ledger stays the fast
default: keep working on it, and sync when you want to share.

A session forgotten on the server ('ledger --db postgres://... forget') is
not pushed again. A session the server refuses is named (exit 1) and the
others are pushed all the same; the next sync tries it again.`,
		Example: `  ledger sync --to postgres://alice@ledger.internal/team
  LEDGER_HOST=alice-laptop ledger sync --to "$TEAM_LEDGER" --json`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !store.IsURL(opts.To) {
				return usagef("--to must be a postgres:// or postgresql:// URL")
			}
			return runSync(cmd.Context(), app, opts)
		},
	}
	cmd.Flags().StringVar(&opts.To, "to", "", "the team ledger's `URL` (postgres://...)")
	jsonFlag(cmd, &opts.JSON)
	return cmd
}

func runSync(ctx context.Context, app *App, opts *syncOptions) error {
	res, err := app.Engine().Sync(ctx, opts.To)
	// A push that failed for some sessions still reports what it sent.
	if err != nil && !errors.As(err, new(*store.PushError)) {
		return err
	}
	if opts.JSON {
		if werr := writeJSON(app.Stdout, res); werr != nil {
			return werr
		}
		return err
	}
	fmt.Fprintf(app.Stdout, "pushed to %s: %d sessions, %d messages, %d compactions, %d handoffs, %d notes added\n",
		res.To, res.Sessions, res.Messages, res.Compactions, res.Handoffs, res.Notes)
	if res.Forgotten > 0 {
		fmt.Fprintf(app.Stdout, "%d session(s) with something new here were forgotten on the server: not pushed\n", res.Forgotten)
	}
	return err
}
