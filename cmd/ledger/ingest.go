package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/cmd/internal/engine"
)

type ingestOptions struct {
	Paths []string
	JSON  bool
}

func newIngestCmd(app *App) *cobra.Command {
	opts := &ingestOptions{}
	cmd := &cobra.Command{
		Use:   "ingest [PATH...]",
		Short: "Read agent transcripts into the ledger (incremental, idempotent)",
		Long: `Read the agents' transcripts into the ledger: Claude Code, Codex CLI, Gemini CLI,
Qwen Code, GitHub Copilot CLI, Pi, OpenCode and Kilo CLI sessions. PATH is a
transcript file or a folder walked recursively for *.jsonl and OpenCode's and
Kilo's databases (opencode.db, kilo.db; symlinks followed, loops not). Without
PATH, every agent's own sessions folder or database that exists is read:
~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp, ~/.qwen/projects,
~/.copilot/session-state, ~/.pi/agent/sessions,
~/.local/share/opencode/opencode.db, ~/.local/share/kilo/kilo.db (or where each
agent's environment moves them: $CLAUDE_CONFIG_DIR, $CODEX_HOME,
$GEMINI_CLI_HOME, $QWEN_RUNTIME_DIR or $QWEN_HOME, $COPILOT_HOME,
$PI_CODING_AGENT_DIR or $PI_CODING_AGENT_SESSION_DIR, $XDG_DATA_HOME,
$OPENCODE_DB, $KILO_DB). OpenCode's and Kilo's databases are opened read-only
while the agent writes them; ledger remembers how far it read each session.

Ingest is incremental: for each file ledger remembers the byte offset after the
last complete line and a fingerprint of the file's head, so the next run reads
only what was appended; a file that shrank or was rewritten is read again.
Running it twice adds nothing. A last line still being written is left for the
next run. Malformed lines are skipped, counted and reported, never fatal.`,
		Example: `  ledger ingest
  ledger ingest ~/.claude/projects ~/.codex/sessions
  ledger ingest ~/.claude/projects/-home-me-src-app/1f0c....jsonl --json`,
		Args: argsUsage(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			return runIngest(cmd.Context(), app, opts)
		},
	}
	jsonFlag(cmd, &opts.JSON)
	return cmd
}

func runIngest(ctx context.Context, app *App, opts *ingestOptions) error {
	defer bulkGC()()
	var bar *progressbar.ProgressBar
	o := engine.IngestOptions{}
	if app.StderrTTY {
		o.Progress = func(total int64) func(int64) {
			if total == 0 {
				return nil
			}
			bar = newProgress(app.rawStderr, app.Getenv, total)
			return func(n int64) { bar.Add64(n) }
		}
	}
	paths := opts.Paths
	var folders []engine.AgentFolder
	if len(paths) == 0 {
		home, err := app.home()
		if err != nil {
			return err
		}
		var missing []engine.AgentFolder
		folders, missing = engine.ExistingTranscriptFolders(home, app.Getenv)
		if len(folders) == 0 {
			return notFound{fmt.Sprintf("no agent sessions folder here (looked for %s): name the transcripts to read", folderList(missing))}
		}
		for _, f := range folders {
			paths = append(paths, f.Path)
		}
	}
	sum, err := app.Engine().Ingest(ctx, paths, o)
	sum.Folders = folders
	if bar != nil {
		bar.Finish()
		fmt.Fprintln(app.Stderr)
	}
	if !sum.Started() {
		return err
	}
	for _, u := range sum.Unrecognized {
		if !sum.Explicit[u] {
			fmt.Fprintf(app.Stderr, "ledger: warning: %s: not a transcript of an agent ledger reads, skipped\n", u)
		}
	}
	for _, f := range sum.Failed {
		fmt.Fprintf(app.Stderr, "ledger: warning: %s: %s\n", f.File, f.Error)
	}
	if opts.JSON {
		if err := writeJSON(app.Stdout, sum); err != nil {
			return err
		}
	} else {
		if len(folders) > 0 {
			fmt.Fprintf(app.Stdout, "read %s\n", folderList(folders))
		}
		printIngest(app.Stdout, sum)
	}
	if err != nil {
		return err
	}
	if len(sum.Failed) > 0 {
		return fmt.Errorf("%d of %d files failed (see warnings above)", len(sum.Failed), sum.FilesSeen)
	}
	return nil
}

func printIngest(w io.Writer, s engine.IngestSummary) {
	fmt.Fprintf(w, "%d files read (%d seen, %d unchanged): %d sessions, %d messages, %d compactions added",
		s.Files, s.FilesSeen, s.Unchanged(), s.Sessions, s.Messages, s.Compactions)
	if s.Redacted > 0 {
		fmt.Fprintf(w, "; %d secrets redacted", s.Redacted)
	}
	if s.SkippedLines > 0 {
		fmt.Fprintf(w, "; %d malformed lines skipped", s.SkippedLines)
	}
	fmt.Fprintln(w)
	for i, sk := range s.Skips {
		fmt.Fprintf(w, "  skipped %s:%d: %s\n", filepath.Base(sk.File), sk.Line, sk.Reason)
		if last := i == len(s.Skips)-1 || s.Skips[i+1].File != sk.File; last && s.NotListed(sk.File) > 0 {
			fmt.Fprintf(w, "  and %d more in %s\n", s.NotListed(sk.File), filepath.Base(sk.File))
		}
	}
}

// newProgress is a byte progress bar on stderr (a terminal: pipes and logs
// get no control characters).
func newProgress(stderr io.Writer, getenv func(string) string, total int64) *progressbar.ProgressBar {
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(stderr),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetDescription("ingest"),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionClearOnFinish(),
	}
	if getenv("NO_COLOR") == "" {
		opts = append(opts, progressbar.OptionEnableColorCodes(true))
	}
	return progressbar.NewOptions64(total, opts...)
}

// folderList names agent folders for people: "~/.claude/projects
// (Claude Code), ...".
func folderList(fs []engine.AgentFolder) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.Path + " (" + engine.AgentName(f.Agent) + ")"
	}
	return strings.Join(parts, ", ")
}

// notFound is an error that exits 3 (engine.ErrNotFound) with its own
// message.
type notFound struct{ msg string }

func (e notFound) Error() string { return e.msg }
func (e notFound) Unwrap() error { return engine.ErrNotFound }
