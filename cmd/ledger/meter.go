package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/cmd/internal/engine"
)

type meterOptions struct {
	Target   string
	Model    string
	Betas    []string
	Accuracy bool
	JSON     bool
}

func newMeterCmd(app *App) *cobra.Command {
	opts := &meterOptions{}
	cmd := &cobra.Command{
		Use:   "meter SESSION|FILE",
		Short: "Context in use now, against the model's window",
		Long: `Show how much of the model's context window a session uses now. SESSION is a
session id (or unique prefix) in the ledger; FILE is a transcript, read directly.

When the transcript records API usage the figure is exact: the last response's
input + cache creation + cache read tokens (leaving out cache reads undercounts
by most of the window). Otherwise it is estimated with ledger's tokenizer-based
estimator. should_compact is true above 80% of the input window (the window less
16,384 tokens kept for output), must_compact above 95%.

--accuracy instead measures the estimator against the real output_tokens of
every API response in the transcript, beside the chars/4 baseline.`,
		Example: `  ledger meter 258c7280
  ledger meter ~/.claude/projects/-home-me-app/1f0c....jsonl --json
  ledger meter 258c7280 --model claude-sonnet-4-5 --beta context-1m-2025-08-07
  ledger meter transcript.jsonl --accuracy`,
		Args: argsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Target = args[0]
			return runMeter(cmd.Context(), app, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Model, "model", "", "the `model` whose window to measure against (default: the transcript's)")
	cmd.Flags().StringArrayVar(&opts.Betas, "beta", nil, "an anthropic-beta `value` the requests carry (repeatable), e.g. context-1m-2025-08-07")
	cmd.Flags().BoolVar(&opts.Accuracy, "accuracy", false, "measure the token estimator against the transcript's real usage")
	jsonFlag(cmd, &opts.JSON)
	return cmd
}

func runMeter(ctx context.Context, app *App, opts *meterOptions) error {
	if opts.Accuracy {
		a, err := app.Engine().MeterAccuracy(ctx, opts.Target)
		if err != nil {
			return err
		}
		if opts.JSON {
			return writeJSON(app.Stdout, a)
		}
		fmt.Fprintf(app.Stdout, "%d API responses: median error %.1f%%, p90 %.1f%% (chars/4: median %.1f%%, p90 %.1f%%)\n",
			a.Messages, 100*a.MedianAbsError, 100*a.P90AbsError, 100*a.BaselineMedianAbsError, 100*a.BaselineP90AbsError)
		return nil
	}
	m, err := app.Engine().Meter(ctx, opts.Target, engine.MeterOptions{Model: opts.Model, Betas: opts.Betas})
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(app.Stdout, m)
	}
	how := "estimated"
	if m.Exact {
		how = "exact, from the last API response"
	}
	fmt.Fprintf(app.Stdout, "%s: %d of %d tokens (%.0f%%, %s)\n%s\nwindow: %s\n", engine.ShortID(m.Session), m.UsedTokens,
		m.LimitTokens, 100*m.Ratio, how, m.Summary, m.LimitSource)
	switch {
	case m.MustCompact:
		fmt.Fprintln(app.Stdout, "must compact: write a handoff (ledger compact) and /clear now")
	case m.ShouldCompact:
		fmt.Fprintln(app.Stdout, "should compact: consider a handoff (ledger compact) and /clear")
	}
	return nil
}
