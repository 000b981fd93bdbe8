package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/cmd/internal/agentconfig"
	"github.com/agentledger/ledger/cmd/internal/engine"
)

// runCrossResume is `ledger resume --for AGENT`: the resume context as the
// first prompt of the other agent (Markdown), or with --format json the
// resume object with "from", "to" and "prompt".
func runCrossResume(ctx context.Context, app *App, req engine.ResumeRequest, opts *resumeOptions) error {
	if _, ok := engine.AgentBySource(opts.For); !ok || opts.For == "" {
		return usagef("--for %q: want one of %s", opts.For, engine.AgentSources())
	}
	if opts.Format == "hook" {
		return usagef("--for prints a first prompt: use --format md or json")
	}
	r, err := app.Engine().CrossResume(ctx, req, opts.For)
	if err != nil {
		return err
	}
	if opts.Format == "json" {
		return writeJSON(app.Stdout, struct {
			engine.ResumeDoc
			From   string `json:"from"`
			To     string `json:"to"`
			Prompt string `json:"prompt"`
		}{r.Doc(), r.From, r.To, r.Prompt})
	}
	fmt.Fprint(app.Stdout, r.Prompt)
	return nil
}

type handoffToOptions struct {
	To string
}

// addHandoffTo adds `ledger handoff --to AGENT SESSION` to the handoff
// command.
func addHandoffTo(app *App, cmd *cobra.Command) {
	opts := &handoffToOptions{}
	cmd.Use = "handoff [--to AGENT SESSION]"
	cmd.Long += `

With --to AGENT SESSION, print the command line that starts AGENT (` + engine.AgentSources() + `)
in the session's project with its handoff as the first prompt ('ledger resume
--for AGENT SESSION'), whichever agent the session ran in.`
	cmd.Example += `
  ledger handoff --to codex 258c7280`
	cmd.Flags().StringVar(&opts.To, "to", "", "print the command line that starts this `agent` ("+engine.AgentSources()+") from SESSION's handoff")
	cmd.Args = argsUsage(cobra.MaximumNArgs(1))
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		switch {
		case opts.To == "" && len(args) == 0:
			return cmd.Help()
		case opts.To == "":
			return usagef("ledger handoff SESSION: say which agent to hand it to with --to AGENT (%s; or use handoff show)", engine.AgentSources())
		case !knownAgent(opts.To):
			return usagef("--to %q: want one of %s", opts.To, engine.AgentSources())
		case len(args) == 0:
			return usagef("--to %s: which SESSION?", opts.To)
		}
		return runHandoffTo(cmd.Context(), app, opts, args[0])
	}
}

func runHandoffTo(ctx context.Context, app *App, opts *handoffToOptions, arg string) error {
	_, sess, err := app.Engine().Session(ctx, arg)
	if err != nil {
		return err
	}
	exe, err := app.executable()
	if err != nil {
		return fmt.Errorf("find the ledger binary: %w", err)
	}
	var flags []string
	if app.dbFlag != "" {
		flags = append(flags, "--db", engine.AbsPath(app.dbFlag))
	}
	a, _ := engine.AgentBySource(opts.To)
	fmt.Fprintln(app.Stdout, agentconfig.AgentCommandLine(a.Command, a.Source, exe, sess.ID, sess.Project, flags...))
	return nil
}

// ledgerCommand is the command line that runs this ledger binary on this
// database, quoted for sh: what a hook asks the agent to run. "" when the
// binary cannot be found ("ledger" then).
func ledgerCommand(app *App) string {
	exe, err := app.executable()
	if err != nil {
		return ""
	}
	var flags []string
	if app.dbFlag != "" {
		flags = append(flags, "--db", engine.AbsPath(app.dbFlag))
	}
	return agentconfig.LedgerCommand(exe, flags...)
}

// knownAgent tells whether name is an agent ledger reads.
func knownAgent(name string) bool {
	_, ok := engine.AgentBySource(name)
	return ok && name != ""
}
