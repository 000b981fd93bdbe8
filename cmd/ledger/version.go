package main

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/store"
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
	v, err := app.Engine().Versions(ctx, buildVersion())
	var none *store.NoLedgerError
	if errors.As(err, &none) {
		// No ledger yet: this binary's versions, and where it would be.
		v.SchemaVersion, err = store.TargetVersion()
		v.SQLiteVersion, v.NoLedger = store.SQLiteLibVersion(), none.Path
	}
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(app.Stdout, v)
	}
	if v.NoLedger != "" {
		fmt.Fprintf(app.Stdout, "ledger %s (schema %d, SQLite %s; no ledger at %s yet)\n", v.Version, v.SchemaVersion, v.SQLiteVersion, v.NoLedger)
		return nil
	}
	fmt.Fprintf(app.Stdout, "ledger %s (schema %d, %s)\n", v.Version, v.SchemaVersion, engineName(v.SQLiteVersion))
	return nil
}

// engineName labels the database engine's version: a team ledger's
// sqlite_version holds the server's own banner ("PostgreSQL 15.18 ...").
func engineName(version string) string {
	if strings.HasPrefix(version, "PostgreSQL ") {
		return version
	}
	return "SQLite " + version
}
