package main

import (
	"io"
	"testing"

	"github.com/spf13/cobra"
)

// TestLedgerModes: every command that runs says, in ledgerModes, what it
// does with the ledger, and every entry there is a command: a command
// missing from it would open the ledger in no mode (Engine panics).
func TestLedgerModes(t *testing.T) {
	t.Parallel()
	root := newRootCmd(&App{Stdin: nil, Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }})
	seen := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() {
			path := c.CommandPath()
			seen[path] = true
			if _, ok := ledgerModes[path]; !ok {
				t.Errorf("%q declares no mode in ledgerModes", path)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for path := range ledgerModes {
		if !seen[path] {
			t.Errorf("ledgerModes names %q, which is not a command", path)
		}
	}
}
