// Command ledger gives AI coding agents a memory that survives the context
// window: it ingests their transcripts into a SQLite ledger, writes short
// structured handoffs instead of long compaction summaries, and rebuilds
// fresh-session context from them.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
