package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/store"
)

type statuslineOptions struct {
	Chain string
}

// The status line's clocks: Claude Code writes its input at once and
// cancels a run when the next update comes, so waiting long helps nobody.
const (
	statusInputWait  = 500 * time.Millisecond
	statusLedgerWait = 150 * time.Millisecond
	statusChainWait  = 2 * time.Second
	maxStatusInput   = 1 << 20
)

func newStatuslineCmd(app *App) *cobra.Command {
	opts := &statuslineOptions{}
	cmd := &cobra.Command{
		Use:   "statusline",
		Short: "Print Claude Code's status line: context, room to auto-compaction, handoff age",
		Long: `Read Claude Code's status-line JSON on stdin and print one short line: the
context in use against the model's window, the tokens left before Claude Code
compacts on its own (the window less 33,000 tokens, lowered by
CLAUDE_AUTOCOMPACT_PCT_OVERRIDE; "auto-compact off" with DISABLE_AUTO_COMPACT),
the age of the session's latest handoff, and "⚑ handoff due" once the context
passes 80% of the auto-compaction point with no handoff in the last 15 minutes.

It never fails: input it cannot read prints a fallback line, and a ledger it
cannot open leaves the handoff out. With --chain, the given command (the status
line you had) runs on the same input, and its line comes first.
'ledger hooks install --statusline' sets it up, chaining a status line you
already have.`,
		Example: `  ledger hooks install --statusline
  echo '{"session_id":"abc","context_window":{"context_window_size":200000,"current_usage":{"input_tokens":90000}}}' | ledger statusline`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			runStatusline(cmd.Context(), app, opts)
			return nil
		},
	}
	cmd.Flags().StringVar(&opts.Chain, "chain", "", "run this status line `command` too (sh -c, same input) and print its line first")
	return cmd
}

// runStatusline prints the status line, whatever happens.
func runStatusline(ctx context.Context, app *App, opts *statuslineOptions) {
	raw := readStatusInput(app.Stdin, app.scaled(statusInputWait))
	chained := make(chan string, 1)
	if opts.Chain != "" {
		go func() { chained <- runChained(ctx, opts.Chain, raw) }()
	} else {
		chained <- ""
	}
	line, late := engine.StatusFallback, false
	if raw != nil {
		line, late = statusWithin(ctx, app, raw)
	}
	if prev := strings.TrimRight(<-chained, "\n"); prev != "" {
		if strings.Contains(prev, "\n") {
			line = prev + "\n" + line
		} else {
			line = prev + " │ " + line
		}
	}
	fmt.Fprintln(app.Stdout, line)
	if raw != nil && !late {
		learnStatusWindow(ctx, app, raw)
	}
}

// statusLearnWait bounds the recording of a window the status line
// states: once per session (and model change), after the line is out.
const statusLearnWait = time.Second

// learnStatusWindow records the model's window the status-line input
// states for its session (context_window.context_window_size) when the
// ledger holds another (engine.LearnWindow): Claude Code states it nowhere
// else ledger reads, and the hooks tell the agent its context is filling
// only against a window the agent stated. A ledger not there yet is not
// created, and a session it does not hold yet is left for a later status
// line.
func learnStatusWindow(ctx context.Context, app *App, raw []byte) {
	session, tokens := engine.StatusWindow(raw)
	if session == "" || tokens <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, app.scaled(statusLearnWait))
	defer cancel()
	app.Engine().LearnWindow(store.WithLockDeadline(ctx, time.Now().Add(app.scaled(statusLearnWait/2))), session, tokens)
}

// readStatusInput is the status-line JSON, nil when none came within
// wait.
func readStatusInput(r io.Reader, wait time.Duration) []byte {
	ch := make(chan []byte, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(r, maxStatusInput))
		if err != nil {
			b = nil
		}
		ch <- b
	}()
	select {
	case b := <-ch:
		return b
	case <-time.After(wait):
		return nil
	}
}

// statusWithin is the engine's status line, the ledger's part (the
// handoff's age) given statusLedgerWait at most (late says it was not
// ready then); a ledger not there yet is not created (the status line
// reads, ledgerModes).
func statusWithin(ctx context.Context, app *App, raw []byte) (line string, late bool) {
	eng := app.Engine()
	noLedger := eng.StatusLine(ctx, raw, app.Getenv, false)
	ctx, cancel := context.WithTimeout(ctx, app.scaled(statusLedgerWait))
	defer cancel()
	ch := make(chan string, 1)
	go func() { ch <- eng.StatusLine(ctx, raw, app.Getenv, true) }()
	select {
	case s := <-ch:
		return s, false
	case <-ctx.Done():
		// Left to the process's exit rather than waited for.
		eng.Abandon()
		return noLedger, true
	}
}

// runChained runs the user's own status line on the same input: its
// output, "" when it fails or takes too long.
func runChained(ctx context.Context, command string, raw []byte) string {
	ctx, cancel := context.WithTimeout(ctx, statusChainWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Stdin = bytes.NewReader(raw)
	var out bytes.Buffer
	cmd.Stdout = &out
	if cmd.Run() != nil && out.Len() == 0 {
		return ""
	}
	return out.String()
}
