package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/cmd/internal/term"
	"github.com/agentledger/ledger/store"
)

type searchOptions struct {
	Query   string
	Session string
	Project string
	Since   string
	Until   string
	Kind    string
	Role    string
	Host    string
	Agent   string
	Limit   int
	JSON    bool
}

func newSearchCmd(app *App) *cobra.Command {
	opts := &searchOptions{}
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Full-text search over every session, handoff, compaction and note",
		Long: `Search everything your agents did: message text, tool calls and their output,
handoffs, compaction summaries and notes. When every word must match, every hit
holds them all and the newest come first. With OR, or when ledger falls back to
any word, the newest 200 matches (or --limit, if more) of each kind (message,
handoff, compaction, note) are ranked by the words each holds, a rarer word
counting more, and newer first among equals.

The query language:
  word            all words must match; if nothing matches them all, ledger
                  falls back to any of them and says so
  "exact phrase"  these words in this order
  prefix*         any word starting with prefix
  -word           leave out what matches (also -"a phrase")
  a OR b          either side; AND binds tighter: a b OR c = (a b) OR c

Paths and identifiers just work: pkg/auth/session_store.go, session_store.go and
TestSessionExpiry each find the messages that mention them. No query is an
error: stray quotes, AND, NEAR(, *, ) search for something or nothing.`,
		Example: `  ledger search session_store.go
  ledger search '"connection refused" -docker' --since 7d
  ledger search -docker compose          # words may start with -, before or after flags
  ledger search -- --verbose             # a word that looks like a long flag: after --
  ledger search TestSessionExpiry --kind handoff --json
  ledger search 'migrate* OR goose' --project ~/src/app --role assistant
  ledger search 'migration failed' --host ci-runner-2   # one machine's, on a team ledger
  ledger search 'rate limit' --agent gemini             # Gemini CLI's sessions only`,
		Args: argsUsage(cobra.MinimumNArgs(1)),
		// A query may start with '-' (see queryArgs).
		Annotations: map[string]string{queryAnnotation: "true"},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Query = strings.Join(args, " ")
			return runSearch(cmd.Context(), app, opts)
		},
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if flag, ok := strings.CutPrefix(err.Error(), "unknown flag: "); ok {
			return usagef("%v (to search for %s, end the flags first: ledger search -- '%s')", err, flag, flag)
		}
		return usageError{flagError(err)}
	})
	f := cmd.Flags()
	f.StringVar(&opts.Session, "session", "", "only this `session` (id or unique prefix)")
	f.StringVar(&opts.Project, "project", "", "only sessions of this project `folder` (or below it)")
	f.StringVar(&opts.Since, "since", "", "only at or after `time` (date, RFC 3339, or 7d/36h ago)")
	f.StringVar(&opts.Until, "until", "", "only before `time` (date, RFC 3339, or 7d/36h ago)")
	f.StringVar(&opts.Kind, "kind", "", "only `kind`: message, handoff, compaction or note")
	f.StringVar(&opts.Role, "role", "", "only messages of `role`: user (typed), assistant, system or tool (every agent's tool output)")
	f.StringVar(&opts.Host, "host", "", "only sessions of this machine (`name`, as sessions --json shows it)")
	f.StringVar(&opts.Agent, "agent", "", "only sessions of this `agent`: "+engine.AgentSources())
	f.IntVar(&opts.Limit, "limit", 20, "show at most `N` hits")
	jsonFlag(cmd, &opts.JSON)
	return cmd
}

func runSearch(ctx context.Context, app *App, opts *searchOptions) error {
	defer lessGC()()
	req := engine.SearchRequest{Text: opts.Query, Session: opts.Session}
	req.Limit, req.Project = opts.Limit, opts.Project
	if err := engine.CheckSearch(opts.Kind, opts.Role, opts.Limit); err != nil {
		return usagef("--%v", err)
	}
	req.Kind, req.Role, req.Host = opts.Kind, opts.Role, opts.Host
	if opts.Agent != "" {
		if _, ok := engine.AgentBySource(opts.Agent); !ok {
			return usagef("--agent %q: want one of %s", opts.Agent, engine.AgentSources())
		}
		req.Source = opts.Agent
	}
	var err error
	if req.Since, err = parseTimeFlag("--since", opts.Since, app.now()); err != nil {
		return err
	}
	if req.Until, err = parseTimeFlag("--until", opts.Until, app.now()); err != nil {
		return err
	}
	res, err := app.Engine().Search(ctx, req)
	if err != nil {
		return err
	}
	if res.Any {
		fmt.Fprintln(app.Stderr, "ledger: no hit has every word; showing hits with any of them")
	}
	if opts.JSON {
		return writeJSON(app.Stdout, engine.Hits(res.Hits))
	}
	printHits(app.Stdout, res.Hits, colour(app))
	return nil
}

// colour tells whether stdout is a terminal that wants colour (NO_COLOR unset).
func colour(app *App) bool {
	return app.StdoutTTY && app.Getenv("NO_COLOR") == ""
}

func printHits(w io.Writer, hits []store.Hit, colour bool) {
	if len(hits) == 0 {
		fmt.Fprintln(w, "no matches")
		return
	}
	start, end := "[", "]"
	if colour {
		start, end = term.HighlightOn, term.HighlightOff
	}
	for _, h := range hits {
		who := h.Kind
		if h.Role != "" {
			who = h.Role
		}
		snip := strings.Join(strings.Fields(engine.Unmark(h.Snippet, start, end)), " ")
		fmt.Fprintf(w, "%s  %s  %-9s  %s\n", engine.ShortID(h.SessionID), humanTime(h.At), who, snip)
	}
}
