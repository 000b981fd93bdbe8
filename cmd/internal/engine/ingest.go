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
	// Folders are the agents' folders read when no path was named.
	Folders []AgentFolder `json:"folders,omitempty"`
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
	// Session, for IngestFile of an OpenCode or Kilo database, reads only
	// that session (with the top session it belongs to and its
	// subagents'): a hook's.
	Session string
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
	in := &ingester{st: st, now: e.now, cursors: cursors, stopAt: o.StopAt}
	if o.Progress != nil {
		in.progress = o.Progress(pendingBytes(files, cursors))
	}
	ref := newRefresher(ctx, st)
	// One connection, set up once, for every transaction of this ingest.
	bulk, release, err := st.HoldIngest(ctx)
	if err == nil {
		err = in.files(bulk, files, &sum, ref)
		release()
	}
	if sum.Files > 0 && ctx.Err() == nil {
		// Once anything was read and written, even rows another writer
		// had stored already (on PostgreSQL such a row still reaches the
		// text indexes before the conflict is found). Best effort, as the
		// server would do it later: an ingest that cannot settle the
		// indexes has still stored everything.
		_ = st.SettleSearch(ctx, sum.Messages)
	}
	if rerr := ref.finish(ctx); err == nil && rerr != nil {
		err = fmt.Errorf("resume states: %w", rerr)
	}
	if err == nil {
		// Handoffs a PreCompact hook left pending are stored once their
		// session is in the ledger; one still held up waits for the next run.
		e.flushPending(ctx, st)
	}
	return sum, err
}

// batchMessages is about how many messages an ingest of many files
// writes per transaction: files are read into one transaction until it
// holds this many, so that their messages are indexed by one statement
// (one FTS5 segment, fewer merges) and committed (and checkpointed) once.
const batchMessages = 10_000

// files ingests files into transactions of several files each (see
// batchMessages), handing the sessions they add to to the refresher once
// committed.
func (in *ingester) files(ctx context.Context, files []string, sum *IngestSummary, ref *refresher) error {
	var b batch
	defer b.rollback()
	for _, path := range files {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("interrupted: %w", err)
		}
		sum.FilesSeen++
		if f, ok := transcript.DatabaseFormat(path); ok {
			if err := b.commit(ctx, in, sum, ref); err != nil {
				return err
			}
			if err := in.databaseFile(ctx, AbsPath(path), f, sum, ref); err != nil {
				return err
			}
			continue
		}
		job, err := in.prepare(ctx, AbsPath(path))
		if err == nil {
			err = b.add(ctx, in, job)
			job.close()
		}
		switch {
		case err == nil:
		case errors.Is(err, errUnchanged), errors.Is(err, transcript.ErrEmpty), errors.Is(err, errNotYet):
		case errors.Is(err, transcript.ErrUnknownFormat):
			sum.Unrecognized = append(sum.Unrecognized, job.stats.Path)
			if sum.Explicit[job.stats.Path] {
				if cerr := b.commit(ctx, in, sum, ref); cerr != nil {
					return cerr
				}
				return fmt.Errorf("%s: not a transcript of an agent ledger reads (%w)", path, err)
			}
		case ctx.Err() != nil:
			return fmt.Errorf("interrupted: %w", ctx.Err())
		case errors.Is(err, errWrite):
			// The transaction is gone, and the files read into it with it:
			// read each again in a transaction of its own.
			for _, p := range append(b.failed, job.stats.Path) {
				fs, err := in.file(ctx, p)
				in.tally(sum, fs, err)
				if err == nil && fs.Session != "" {
					ref.add(fs.Session)
				}
			}
			b = batch{}
		default:
			sum.Failed = append(sum.Failed, FileFailed{job.stats.Path, err.Error()})
		}
		if b.messages >= batchMessages {
			if err := b.commit(ctx, in, sum, ref); err != nil {
				return err
			}
		}
	}
	return b.commit(ctx, in, sum, ref)
}

// errWrite marks a failure after a file's records went into a batch's
// transaction: the transaction is rolled back.
var errWrite = errors.New("write")

// batch is the files read into one open transaction.
type batch struct {
	w        *store.Writer
	done     []FileStats
	failed   []string // the paths in w, for when it is rolled back
	messages int
	touched  touchedSessions
}

// add reads a file into the batch's transaction, beginning one if needed.
func (b *batch) add(ctx context.Context, in *ingester, job *fileJob) error {
	if b.w == nil {
		err := store.Retry(ctx, func() error {
			var err error
			b.w, err = in.st.NewWriter(ctx, string(job.plan.state.Format))
			return err
		})
		if err != nil {
			return err
		}
	}
	if b.touched == nil {
		b.touched = touchedSessions{}
	}
	in.touched = b.touched
	fs, err := job.into(ctx, b.w, in)
	in.touched = nil
	if err != nil {
		b.w.Rollback()
		b.w = nil
		if ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("%w: %w", errWrite, err)
	}
	b.done = append(b.done, fs)
	b.failed = append(b.failed, fs.Path)
	b.messages += fs.Counts.Messages
	return nil
}

// commit commits the batch's transaction and counts what it added.
func (b *batch) commit(ctx context.Context, in *ingester, sum *IngestSummary, ref *refresher) error {
	if b.w == nil {
		return nil
	}
	w := b.w
	err := w.Commit(ctx, nil)
	b.w = nil
	if err != nil {
		return err
	}
	for _, fs := range b.done {
		in.tally(sum, fs, nil)
		if id := fs.Session; id != "" && (fs.Counts.Messages > 0 || fs.Counts.Compactions > 0) {
			ref.add(id)
		}
	}
	for id := range b.touched {
		ref.add(id)
	}
	*b = batch{}
	return nil
}

func (b *batch) rollback() {
	if b.w != nil {
		b.w.Rollback()
	}
}

// tally adds a file's outcome to the summary.
func (in *ingester) tally(sum *IngestSummary, fs FileStats, err error) {
	switch {
	case err == nil:
		sum.add(fs)
	case errors.Is(err, errUnchanged), errors.Is(err, transcript.ErrEmpty):
	default:
		sum.Failed = append(sum.Failed, FileFailed{fs.Path, err.Error()})
	}
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
	in := &ingester{st: st, now: e.now, stopAt: o.StopAt}
	var fs FileStats
	if f, ok := transcript.DatabaseFormat(path); ok {
		fs, err = in.database(ctx, AbsPath(path), f, o.Session)
	} else {
		fs, err = in.file(ctx, path)
	}
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
	in := &ingester{st: st, now: e.now}
	for _, p := range paths {
		var err error
		if db, id, ok := splitDBSessionKey(p); ok {
			f, _ := transcript.DatabaseFormat(db)
			_, err = in.database(ctx, db, f, id)
		} else {
			_, err = in.file(ctx, p)
		}
		switch {
		case err == nil, errors.Is(err, errUnchanged), errors.Is(err, fs.ErrNotExist):
		default:
			return fmt.Errorf("ingest %s: %w", p, err)
		}
	}
	return nil
}
