package main

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/cmd/internal/engine"
)

// jsonFlag adds the --json flag every listing or report takes.
func jsonFlag(cmd *cobra.Command, p *bool) {
	cmd.Flags().BoolVar(p, "json", false, "print one JSON document on stdout")
}

// writeJSON prints v as one indented JSON document.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// parseTimeFlag reads a --since/--until value (engine.ParseTime); a bad
// one is a usage error.
func parseTimeFlag(flag, v string, now time.Time) (time.Time, error) {
	t, err := engine.ParseTime(v, now)
	if err != nil {
		return t, usagef("%s %v", flag, err)
	}
	return t, nil
}
