package main

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3";
// otherwise it comes from the module's build info.
var version = ""

func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

type versionOptions struct {
	JSON bool
}

func newVersionCmd(app *App) *cobra.Command {
	opts := &versionOptions{}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print ledger's version, the database's schema version and SQLite's version",
		Example: `  ledger version
  ledger version --json`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVersion(cmd.Context(), app, opts)
		},
	}
	jsonFlag(cmd, &opts.JSON)
	return cmd
}

func runVersion(ctx context.Context, app *App, opts *versionOptions) error {
	s, err := app.Store(ctx)
	if err != nil {
		return err
	}
	schema, err := s.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	sqliteVersion, err := s.SQLiteVersion(ctx)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(app.Stdout, struct {
			Version       string `json:"version"`
			SchemaVersion int64  `json:"schema_version"`
			SQLiteVersion string `json:"sqlite_version"`
		}{buildVersion(), schema, sqliteVersion})
	}
	fmt.Fprintf(app.Stdout, "ledger %s (schema %d, SQLite %s)\n", buildVersion(), schema, sqliteVersion)
	return nil
}
