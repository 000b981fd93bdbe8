package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/transcript"
)

// IngestSummary is what an ingest of paths added (the counts of `ledger
// ingest --json`), then what a user needs to act on: which lines were
// skipped and why, which files were not transcripts, which failed.
type IngestSummary struct {
	Files        int   `json:"files"`
	Sessions     int   `json:"sessions"`
	Messages     int   `json:"messages"`
	Compactions  int   `json:"compactions"`
	SkippedLines int   `json:"skipped_lines"`
	Redacted     int   `json:"redacted"` // secrets replaced with [REDACTED:<kind>]
	FilesSeen    int   `json:"files_seen"`
	Bytes        int64 `json:"bytes"`
	// Skips lists the first skipped lines of each file (at most
	// transcript.MaxSkipsListed a file); SkipsNotListed counts the others:
	// together they are SkippedLines.
	Skips          []FileSkip   `json:"skips"`
	SkipsNotListed int          `json:"skips_not_listed"`
	Unrecognized   []string     `json:"unrecognized"`
	Failed         []FileFailed `json:"failed"`
	// Explicit are the unrecognized files named on the command line rather
	// than found in a folder: an error, not a warning.
	Explicit map[string]bool `json:"-"`
	// notListed is SkipsNotListed by file.
	notListed map[string]int
}

// NotListed is how many of a file's skipped lines Skips does not list.
func (s IngestSummary) NotListed(file string) int { return s.notListed[file] }

// Started tells whether the ingest got as far as reading files.
func (s IngestSummary) Started() bool { return s.Skips != nil }

// Unchanged is how many files seen had nothing new.
func (s IngestSummary) Unchanged() int {
	return s.FilesSeen - s.Files - len(s.Unrecognized) - len(s.Failed)
}

// FileSkip is a line ingest skipped.
type FileSkip struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

// FileFailed is a file ingest could not read.
type FileFailed struct {
	File  string `json:"file"`
	Error string `json:"error"`
}

// IngestOptions tunes an ingest.
type IngestOptions struct {
	// Progress, when set, is told the bytes the run will read, and returns
	// the function told of each chunk read.
	Progress func(total int64) func(n int64)
	// StopAt, when set, is when reading stops: what was read by then is
	// committed, and the rest of the file is left for the next ingest
	// (FileStats.Left). A hook's budget.
	StopAt time.Time
}

// Ingest reads the transcripts at paths (files, or folders walked for
// *.jsonl) incrementally. A file that is not a transcript is a warning in
// a folder and an error when named; a file that fails does not stop the
// others. The summary is valid with the error: it says what was done
// before an interruption.
//
// An error before any file is read (a path that is not there, a database
// that does not open) comes with a summary that has not Started.
func (e *Engine) Ingest(ctx context.Context, paths []string, o IngestOptions) (IngestSummary, error) {
	// Gather the files first: a missing path fails before anything is written.
	var files []string
	if err := transcript.Walk(ctx, paths, func(path string) error {
		files = append(files, path)
		return nil
	}); err != nil {
		return IngestSummary{}, err
	}
	st, err := e.Store(ctx)
	if err != nil {
		return IngestSummary{}, err
	}
	cursors, err := st.Cursors(ctx)
	if err != nil {
		return IngestSummary{}, err
	}
	sum := IngestSummary{Skips: []FileSkip{}, Unrecognized: []string{}, Failed: []FileFailed{}, Explicit: map[string]bool{}}
	for _, root := range paths {
		if fi, err := os.Stat(root); err == nil && !fi.IsDir() {
			sum.Explicit[AbsPath(root)] = true
		}
	}
	in := &ingester{st: st, cursors: cursors, stopAt: o.StopAt}
	if o.Progress != nil {
		in.progress = o.Progress(pendingBytes(files, cursors))
	}
	for _, path := range files {
		if err := ctx.Err(); err != nil {
			return sum, fmt.Errorf("interrupted: %w", err)
		}
		sum.FilesSeen++
		fs, err := in.file(ctx, path)
		switch {
		case err == nil:
			sum.add(fs)
		case errors.Is(err, errUnchanged), errors.Is(err, transcript.ErrEmpty):
		case errors.Is(err, transcript.ErrUnknownFormat):
			sum.Unrecognized = append(sum.Unrecognized, fs.Path)
			if sum.Explicit[fs.Path] {
				return sum, fmt.Errorf("%s: not a Claude Code or Codex transcript (%w)", path, err)
			}
		case ctx.Err() != nil:
			return sum, fmt.Errorf("interrupted: %w", ctx.Err())
		default:
			sum.Failed = append(sum.Failed, FileFailed{fs.Path, err.Error()})
		}
	}
	// Handoffs a PreCompact hook left pending are stored once their
	// session is in the ledger; one still held up waits for the next run.
	e.flushPending(ctx, st)
	return sum, nil
}

func (s *IngestSummary) add(fs FileStats) {
	s.Files++
	s.Bytes += fs.Bytes
	s.Sessions += fs.Counts.Sessions
	s.Messages += fs.Counts.Messages
	s.Compactions += fs.Counts.Compactions
	s.Redacted += fs.Counts.Redacted
	s.SkippedLines += fs.Skipped
	for _, sk := range fs.Skips {
		s.Skips = append(s.Skips, FileSkip{fs.Path, sk.Line, sk.Reason})
	}
	if more := fs.Skipped - len(fs.Skips); more > 0 {
		s.SkipsNotListed += more
		if s.notListed == nil {
			s.notListed = map[string]int{}
		}
		s.notListed[fs.Path] += more
	}
}

// pendingBytes is how much of files an ingest will read, by their cursors.
func pendingBytes(files []string, cursors map[string]store.Cursor) int64 {
	var total int64
	for _, p := range files {
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		c, seen := cursors[AbsPath(p)]
		switch {
		case seen && c.Size == fi.Size() && c.ModTime == fi.ModTime().UnixNano():
		case seen && c.Offset <= fi.Size():
			total += fi.Size() - c.Offset
		default:
			total += fi.Size()
		}
	}
	return total
}

// IngestFile reads what is new in one transcript file (o.Progress aside).
// A file with nothing new is no error: its stats say it was not read.
func (e *Engine) IngestFile(ctx context.Context, path string, o IngestOptions) (FileStats, error) {
	st, err := e.Store(ctx)
	if err != nil {
		return FileStats{}, err
	}
	fs, err := (&ingester{st: st, stopAt: o.StopAt}).file(ctx, path)
	if errors.Is(err, errUnchanged) {
		err = nil
	}
	return fs, err
}

// IngestSession reads what is new in every transcript file of a session
// (its main transcript and its subagents'). A file deleted since it was
// ingested is skipped: the ledger has it.
func (e *Engine) IngestSession(ctx context.Context, sessionID string) error {
	st, err := e.Store(ctx)
	if err != nil {
		return err
	}
	paths, err := st.SessionFiles(ctx, sessionID)
	if err != nil {
		return err
	}
	in := &ingester{st: st}
	for _, p := range paths {
		_, err := in.file(ctx, p)
		switch {
		case err == nil, errors.Is(err, errUnchanged), errors.Is(err, fs.ErrNotExist):
		default:
			return fmt.Errorf("ingest %s: %w", p, err)
		}
	}
	return nil
}
