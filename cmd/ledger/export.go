package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/cmd/internal/engine"
)

type exportOptions struct {
	Session string
	Format  string
	Out     string
	Restore bool
}

func newExportCmd(app *App) *cobra.Command {
	opts := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export SESSION [--format jsonl|md] [--out PATH] [--restore]",
		Short: "Write a session's transcript back from the ledger",
		Long: `Write a session's transcript, rebuilt from what the ledger holds: Claude Code
deletes transcripts after cleanupPeriodDays (30 by default), and 'claude
--resume' of an older session fails although the ledger has every message.

--format jsonl (the default) writes the agent's own format: Claude Code JSONL
for a Claude session, a Codex rollout for a Codex one (and Claude Code JSONL
for the other agents' sessions, which --restore refuses). The ledger keeps
messages, not the lines they came from, so each line is rebuilt from its
message: uuids, parents, times, models, usage, tool calls and results,
compaction boundaries and the session's title, project and branch are as they
were; lines ledger never kept (progress, hook output, token counts, file
snapshots, image data, secrets it redacted) are not there. Reading the
rebuilt file gives the same messages (Codex: the same but for their uuids,
which are hashes of the lines). --format md writes a transcript to read.

The output goes to stdout, to --out, or with --restore to where the agent
looks for it (~/.claude/projects/<project>/<session>.jsonl, or
~/.codex/sessions/YYYY/MM/DD/rollout-...-<session>.jsonl; $CLAUDE_CONFIG_DIR
and $CODEX_HOME are honoured); --restore never replaces a file, and records
the restored file as read so that ingest does not read it back.`,
		Example: `  ledger export 7c1d --restore && claude --resume 7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57
  ledger export 7c1d --format md --out session.md
  ledger export 0199f3a2 > rollout.jsonl`,
		Args: argsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Session = args[0]
			if opts.Format != "jsonl" && opts.Format != "md" {
				return usagef("--format %q: want jsonl or md", opts.Format)
			}
			if opts.Restore && (opts.Format != "jsonl" || opts.Out != "") {
				return usagef("--restore writes jsonl where the agent looks: no --out, no --format md")
			}
			return runExport(cmd.Context(), app, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "jsonl", "`jsonl` (the agent's format) or md")
	cmd.Flags().StringVar(&opts.Out, "out", "", "write to `path` instead of stdout")
	cmd.Flags().BoolVar(&opts.Restore, "restore", false, "write the JSONL where the agent looks for the session")
	return cmd
}

func runExport(ctx context.Context, app *App, opts *exportOptions) error {
	home, _ := app.home()
	claudeDir := app.Getenv("CLAUDE_CONFIG_DIR")
	if claudeDir == "" {
		claudeDir = filepath.Join(home, ".claude")
	}
	codexHome := app.Getenv("CODEX_HOME")
	if codexHome == "" {
		codexHome = filepath.Join(home, ".codex")
	}
	x, err := app.Engine().Export(ctx, engine.ExportRequest{Session: opts.Session, Format: opts.Format, Out: opts.Out,
		Restore: opts.Restore, ClaudeDir: claudeDir, CodexHome: codexHome}, app.Stdout)
	if err != nil {
		return err
	}
	if x.Path != "" {
		fmt.Fprintf(app.Stderr, "ledger: %d messages of session %s written to %s\n", x.Messages, x.Session.ID, x.Path)
	}
	return nil
}
