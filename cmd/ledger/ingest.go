package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/transcript"
)

type ingestOptions struct {
	Paths []string
	JSON  bool
}

// ingestSummary is `ledger ingest --json`: counts added by this run, then
// the details a user needs to act on (which lines were skipped and why,
// which files were not transcripts).
type ingestSummary struct {
	Files        int          `json:"files"`
	Sessions     int          `json:"sessions"`
	Messages     int          `json:"messages"`
	Compactions  int          `json:"compactions"`
	SkippedLines int          `json:"skipped_lines"`
	Redacted     int          `json:"redacted"` // secrets replaced with [REDACTED:<kind>]
	FilesSeen    int          `json:"files_seen"`
	Bytes        int64        `json:"bytes"`
	Skips        []fileSkip   `json:"skips"`
	Unrecognized []string     `json:"unrecognized"`
	Failed       []fileFailed `json:"failed"`
}

type fileSkip struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

type fileFailed struct {
	File  string `json:"file"`
	Error string `json:"error"`
}

func newIngestCmd(app *App) *cobra.Command {
	opts := &ingestOptions{}
	cmd := &cobra.Command{
		Use:   "ingest PATH...",
		Short: "Read agent transcripts into the ledger (incremental, idempotent)",
		Long: `Read Claude Code and Codex CLI transcripts into the ledger. PATH is a transcript
file or a folder walked recursively for *.jsonl (symlinks followed, loops not).

Ingest is incremental: for each file ledger remembers the byte offset after the
last complete line and a fingerprint of the file's head, so the next run reads
only what was appended; a file that shrank or was rewritten is read again.
Running it twice adds nothing. A last line still being written is left for the
next run. Malformed lines are skipped, counted and reported, never fatal.`,
		Example: `  ledger ingest ~/.claude/projects ~/.codex/sessions
  ledger ingest ~/.claude/projects/-home-me-src-app/1f0c....jsonl --json`,
		Args: argsUsage(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			return runIngest(cmd.Context(), app, opts)
		},
	}
	jsonFlag(cmd, &opts.JSON)
	return cmd
}

func runIngest(ctx context.Context, app *App, opts *ingestOptions) error {
	// Gather the files first: a missing path fails before anything is written.
	var files []string
	explicit := map[string]bool{}
	for _, root := range opts.Paths {
		if fi, err := os.Stat(root); err == nil && !fi.IsDir() {
			explicit[absPath(root)] = true
		}
	}
	if err := transcript.Walk(ctx, opts.Paths, func(path string) error {
		files = append(files, path)
		return nil
	}); err != nil {
		return err
	}
	s, err := app.Store(ctx)
	if err != nil {
		return err
	}
	cursors, err := s.Cursors(ctx)
	if err != nil {
		return err
	}
	g := &ingester{st: s, cursors: cursors}
	bar := newProgress(app.Stderr, app.Getenv, files, cursors)
	if bar != nil {
		g.progress = func(n int64) { bar.Add64(n) }
	}
	sum := ingestSummary{Skips: []fileSkip{}, Unrecognized: []string{}, Failed: []fileFailed{}}
	var fatal error
	for _, path := range files {
		if err := ctx.Err(); err != nil {
			fatal = fmt.Errorf("interrupted: %w", err)
			break
		}
		sum.FilesSeen++
		fs, err := g.ingestFile(ctx, path)
		switch {
		case err == nil:
		case errors.Is(err, errUnchanged), errors.Is(err, transcript.ErrEmpty):
			continue
		case errors.Is(err, transcript.ErrUnknownFormat):
			sum.Unrecognized = append(sum.Unrecognized, fs.Path)
			if explicit[fs.Path] {
				fatal = fmt.Errorf("%s: not a Claude Code or Codex transcript (%w)", path, err)
			}
			continue
		case ctx.Err() != nil:
			fatal = fmt.Errorf("interrupted: %w", ctx.Err())
		default:
			sum.Failed = append(sum.Failed, fileFailed{fs.Path, err.Error()})
			continue
		}
		if fatal != nil {
			break
		}
		sum.Files++
		sum.Bytes += fs.Bytes
		sum.Sessions += fs.Counts.Sessions
		sum.Messages += fs.Counts.Messages
		sum.Compactions += fs.Counts.Compactions
		sum.Redacted += fs.Counts.Redacted
		sum.SkippedLines += fs.Skipped
		for _, sk := range fs.Skips {
			sum.Skips = append(sum.Skips, fileSkip{fs.Path, sk.Line, sk.Reason})
		}
	}
	if bar != nil {
		bar.Finish()
		fmt.Fprintln(app.Stderr)
	}
	for _, u := range sum.Unrecognized {
		if !explicit[u] {
			fmt.Fprintf(app.Stderr, "ledger: warning: %s: not a Claude Code or Codex transcript, skipped\n", u)
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
		printIngest(app.Stdout, sum)
	}
	if fatal != nil {
		return fatal
	}
	if len(sum.Failed) > 0 {
		return fmt.Errorf("%d of %d files failed (see warnings above)", len(sum.Failed), sum.FilesSeen)
	}
	return nil
}

func printIngest(w io.Writer, s ingestSummary) {
	fmt.Fprintf(w, "%d files read (%d seen, %d unchanged): %d sessions, %d messages, %d compactions added",
		s.Files, s.FilesSeen, s.FilesSeen-s.Files-len(s.Unrecognized)-len(s.Failed), s.Sessions, s.Messages, s.Compactions)
	if s.Redacted > 0 {
		fmt.Fprintf(w, "; %d secrets redacted", s.Redacted)
	}
	if s.SkippedLines > 0 {
		fmt.Fprintf(w, "; %d malformed lines skipped", s.SkippedLines)
	}
	fmt.Fprintln(w)
	for _, sk := range s.Skips {
		fmt.Fprintf(w, "  skipped %s:%d: %s\n", filepath.Base(sk.File), sk.Line, sk.Reason)
	}
}

// newProgress returns a byte progress bar on stderr when stderr is a
// terminal, else nil: pipes and logs get no control characters.
func newProgress(stderr io.Writer, getenv func(string) string, files []string, cursors map[string]store.Cursor) *progressbar.ProgressBar {
	f, ok := stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	var total int64
	for _, p := range files {
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		c, seen := cursors[absPath(p)]
		if seen && c.Size == fi.Size() && c.ModTime == fi.ModTime().UnixNano() {
			continue
		}
		if seen && c.Offset <= fi.Size() {
			total += fi.Size() - c.Offset
		} else {
			total += fi.Size()
		}
	}
	if total == 0 {
		return nil
	}
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
