package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/transcript"
)

type meterOptions struct {
	Target   string
	Model    string
	Betas    []string
	Accuracy bool
	JSON     bool
}

// meterJSON is `ledger meter --json` (CONTRACT.md).
type meterJSON struct {
	Session       string                    `json:"session"`
	Model         string                    `json:"model"`
	UsedTokens    int64                     `json:"used_tokens"`
	LimitTokens   int64                     `json:"limit_tokens"`
	Ratio         float64                   `json:"ratio"`
	Exact         bool                      `json:"exact"`
	ShouldCompact bool                      `json:"should_compact"`
	MustCompact   bool                      `json:"must_compact"`
	Categories    map[string]compact.Amount `json:"categories"`
	LimitSource   string                    `json:"limit_source"`
	Summary       string                    `json:"summary"`
}

// accuracyJSON is `ledger meter --accuracy --json`.
type accuracyJSON struct {
	Messages                int     `json:"messages"`
	MedianAbsError          float64 `json:"median_abs_error"`
	P90AbsError             float64 `json:"p90_abs_error"`
	BaselineMedianAbsError  float64 `json:"baseline_median_abs_error"`
	BaselineP90AbsError     float64 `json:"baseline_p90_abs_error"`
	SkippedThinkingMessages int     `json:"skipped_thinking"`
	SkippedPartialMessages  int     `json:"skipped_partial"`
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

// sessionView is what the meter needs of a session, from a file or the
// ledger.
type sessionView struct {
	ID            string
	Model         string
	ContextWindow int64
	// Usage is the latest session-level usage (Codex token_count); Claude
	// usage rides on the messages.
	Usage    *compact.Usage
	Messages []compact.Message
}

func runMeter(ctx context.Context, app *App, opts *meterOptions) error {
	var v sessionView
	var err error
	if fi, serr := os.Stat(opts.Target); serr == nil && !fi.IsDir() {
		v, err = readTranscriptFile(ctx, opts.Target)
	} else {
		v, err = loadSession(ctx, app, opts.Target)
	}
	if err != nil {
		return err
	}
	if opts.Accuracy {
		a := compact.MeasureAccuracy(v.Messages, nil)
		out := accuracyJSON{Messages: a.Messages, MedianAbsError: a.MedianAbsError, P90AbsError: a.P90AbsError,
			BaselineMedianAbsError: a.BaselineMedianAbsError, BaselineP90AbsError: a.BaselineP90AbsError,
			SkippedThinkingMessages: a.SkippedThinking, SkippedPartialMessages: a.SkippedPartial}
		if opts.JSON {
			return writeJSON(app.Stdout, out)
		}
		fmt.Fprintf(app.Stdout, "%d API responses: median error %.1f%%, p90 %.1f%% (chars/4: median %.1f%%, p90 %.1f%%)\n",
			a.Messages, 100*a.MedianAbsError, 100*a.P90AbsError, 100*a.BaselineMedianAbsError, 100*a.BaselineP90AbsError)
		return nil
	}
	if opts.Model != "" {
		v.Model = opts.Model
	}
	m := meterOf(v, opts.Betas)
	if opts.JSON {
		return writeJSON(app.Stdout, m)
	}
	how := "estimated"
	if m.Exact {
		how = "exact, from the last API response"
	}
	fmt.Fprintf(app.Stdout, "%s: %d of %d tokens (%.0f%%, %s)\n%s\nwindow: %s\n", shortID(m.Session), m.UsedTokens,
		m.LimitTokens, 100*m.Ratio, how, m.Summary, m.LimitSource)
	switch {
	case m.MustCompact:
		fmt.Fprintln(app.Stdout, "must compact: write a handoff (ledger compact) and /clear now")
	case m.ShouldCompact:
		fmt.Fprintln(app.Stdout, "should compact: consider a handoff (ledger compact) and /clear")
	}
	return nil
}

// meterOf measures a session's context now: exact from the last usage when
// the transcript has one, else estimated over what followed the latest
// compaction.
func meterOf(v sessionView, betas []string) meterJSON {
	win := compact.ContextLimit(v.Model, betas).Reported(v.ContextWindow)
	live := liveContext(v.Messages)
	meter := compact.NewMeter(compact.Request{Messages: live}, win.Tokens, nil)
	exact := false
	if u, ok := compact.LastUsage(live); ok {
		meter, exact = meter.WithUsage(u), true
	} else if v.Usage != nil {
		meter, exact = meter.WithUsage(*v.Usage), true
	}
	budget := compact.Budget{ContextLimit: win.Tokens, MessageTokens: meter.Used()}
	cats := map[string]compact.Amount{}
	for _, c := range meter.Categories() {
		cats[c.Name] = c.Amount
	}
	return meterJSON{Session: v.ID, Model: v.Model, UsedTokens: meter.Used(), LimitTokens: win.Tokens, Ratio: meter.Ratio(),
		Exact: exact, ShouldCompact: budget.ShouldCompact(), MustCompact: budget.MustCompact(), Categories: cats,
		LimitSource: win.Source, Summary: meter.Summary()}
}

// liveContext is the part of a session still in the model's context: the
// main conversation (not subagents) from the latest compaction summary on.
func liveContext(msgs []compact.Message) []compact.Message {
	var out []compact.Message
	for _, m := range msgs {
		if m.Sidechain {
			continue
		}
		if m.CompactSummary {
			out = out[:0]
		}
		out = append(out, m)
	}
	return out
}

// readTranscriptFile reads a whole transcript without the ledger.
func readTranscriptFile(ctx context.Context, path string) (sessionView, error) {
	var v sessionView
	f, err := os.Open(path)
	if err != nil {
		return v, err
	}
	defer f.Close()
	format, err := transcript.Detect(f)
	if err != nil {
		return v, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		return v, err
	}
	st := transcript.State{Format: format, SessionID: transcript.SessionHint(path)}
	_, err = transcript.Read(ctx, f, &st, 0, 1, func(r transcript.Record) error {
		if s := r.Session; s != nil {
			v.Model = firstNonEmpty(s.Model, v.Model)
			if s.ContextWindow > 0 {
				v.ContextWindow = s.ContextWindow
			}
			if s.Usage != nil {
				u := *s.Usage
				v.Usage = &u
			}
		}
		if r.Boundary != nil {
			v.Usage = nil // measured before the compaction: stale
		}
		if m := r.Message; m != nil {
			if m.Model != "" && !m.Sidechain {
				v.Model = m.Model
			}
			v.Messages = append(v.Messages, *m)
		}
		return nil
	})
	if err != nil {
		return v, fmt.Errorf("read %s: %w", path, err)
	}
	v.ID = st.SessionID
	return v, nil
}

// loadSession reads a session from the ledger.
func loadSession(ctx context.Context, app *App, id string) (sessionView, error) {
	s, err := app.Store(ctx)
	if err != nil {
		return sessionView{}, err
	}
	sess, err := s.Session(ctx, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			if _, serr := os.Stat(id); errors.Is(serr, fs.ErrNotExist) {
				return sessionView{}, fmt.Errorf("no session or transcript file %q: %w", id, store.ErrNotFound)
			}
		}
		return sessionView{}, err
	}
	msgs, err := s.Messages(ctx, sess.ID, 0)
	if err != nil {
		return sessionView{}, err
	}
	v := sessionView{ID: sess.ID, Model: sess.Model, ContextWindow: sess.ContextWindow, Messages: msgs, Usage: codexUsage(sess)}
	for i := len(msgs) - 1; i >= 0 && v.Model == ""; i-- {
		if !msgs[i].Sidechain {
			v.Model = msgs[i].Model
		}
	}
	return v, nil
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
