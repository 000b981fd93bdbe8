package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

type initOptions struct {
	JSON bool
}

func newInitCmd(app *App) *cobra.Command {
	opts := &initOptions{}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create or migrate the database and print its path",
		Long: `Create the ledger database (and its folder, owner-only) if it does not exist,
apply any pending schema migrations, and print where it is. Every other command
does this on first use too; init is for scripts and for seeing where the data is.`,
		Example: `  ledger init
  ledger --db /tmp/x/ledger.db init --json`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInit(cmd.Context(), app, opts)
		},
	}
	jsonFlag(cmd, &opts.JSON)
	return cmd
}

func runInit(ctx context.Context, app *App, opts *initOptions) error {
	s, err := app.Store(ctx)
	if err != nil {
		return err
	}
	v, err := s.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(app.Stdout, struct {
			DB            string `json:"db"`
			SchemaVersion int64  `json:"schema_version"`
		}{s.Location(), v})
	}
	fmt.Fprintf(app.Stdout, "%s (schema version %d)\n", s.Location(), v)
	return nil
}
