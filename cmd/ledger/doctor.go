package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/store"
)

type doctorOptions struct {
	Rebuild bool
	JSON    bool
}

func newDoctorCmd(app *App) *cobra.Command {
	opts := &doctorOptions{}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the database and its full-text index; rebuild the index on request",
		Long: `Run SQLite's integrity_check and FTS5's integrity-check on every full-text
index, and report how much the ledger holds. --rebuild rebuilds the full-text
indexes from the stored text first (safe: nothing stored is lost). Exits 1 when
a check fails.

It also checks the set-up, and says what is amiss: ledger's hooks in Claude
Code's settings.json (every event, running this binary) and in Codex's
hooks.json (and in the settings of Gemini CLI, Qwen Code and Copilot CLI, and
ledger's plugin for Pi, OpenCode and Kilo CLI, when you have them); the last
run of each hook event and its outcome; the transcripts folders
(~/.claude/projects, ~/.codex/sessions, and the other agents' folders and
databases that exist) and how much of them the ledger has not read yet; the projects kept out (ledger pause, .ledgerignore); the
database's size and the segments of each full-text index.`,
		Example: `  ledger doctor
  ledger doctor --rebuild --json`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDoctor(cmd.Context(), app, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Rebuild, "rebuild", false, "rebuild the full-text indexes before checking")
	jsonFlag(cmd, &opts.JSON)
	return cmd
}

func runDoctor(ctx context.Context, app *App, opts *doctorOptions) error {
	h, err := app.Engine().Doctor(ctx, opts.Rebuild)
	if err != nil && !errors.As(err, new(*store.NoLedgerError)) {
		return err
	}
	c, err := app.Engine().Checkup(ctx, checkupOptions(app))
	if err != nil {
		return err
	}
	if c.NoLedger != "" {
		// Nothing to check in a ledger that is not there; the set-up is.
		if opts.JSON {
			return writeJSON(app.Stdout, c)
		}
		fmt.Fprintf(app.Stdout, "no ledger at %s yet: 'ledger ingest' creates it\n", c.NoLedger)
		printCheckup(app, c)
		return nil
	}
	if opts.JSON {
		if err := writeJSON(app.Stdout, struct {
			store.Health
			engine.Checkup
		}{h, c}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(app.Stdout, "integrity: %s\nfull-text index: %s\n%d sessions, %d messages, %d handoffs, %d compactions, %s on disk\n",
			h.Integrity, h.FTS, h.Sessions, h.Messages, h.Handoffs, h.Compacts, humanBytes(h.Bytes))
		if h.ReadOnly {
			fmt.Fprintln(app.Stdout, "(a read-only ledger: the full-text indexes were checked by integrity_check only; FTS5's own check writes)")
		}
		printCheckup(app, c)
	}
	if h.Integrity != "ok" || h.FTS != "ok" {
		return errors.New("the database failed its checks (try: ledger doctor --rebuild)")
	}
	return nil
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
