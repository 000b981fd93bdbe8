package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/agentledger/ledger/handoff/gitrepo"
	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/transcript"
)

// headLen is how much of a file's head the cursor fingerprints: enough to
// hold the first records (session id, first message), so that a rewrite is
// seen, and small enough to read at no cost.
const headLen = 4096

// recordBatch is how many records the reader hands the writer at a time.
const recordBatch = 256

// maxInFlight bounds the bytes of prepared messages the reader may have
// handed the writer and the writer not yet written: batches of big
// messages (a line of a few MB each) would otherwise pile up in the
// channel, eight batches of 256.
const maxInFlight = 16 << 20

// FileStats is what ingesting one file added and skipped.
type FileStats struct {
	Path  string
	Read  bool // the file had new lines (or was re-read)
	Bytes int64
	// Left is what the read left of the file for a later one, in bytes
	// (of a database, in sessions): reading stopped at
	// IngestOptions.StopAt.
	Left    int64
	Counts  store.Counts
	Skipped int
	Skips   []transcript.Skip
	Format  transcript.Format
	Session string
	// sessions are, for a database, the sessions it added to.
	sessions []string
}

// errUnchanged says a file has nothing new since its cursor.
var errUnchanged = errors.New("unchanged")

// ingester reads transcript files into the store, incrementally: each
// file's cursor says where the last run stopped.
type ingester struct {
	st *store.Store
	// now is the engine's clock (nil: time.Now), for what the ingest
	// itself stamps (an ignored project's first sighting).
	now     func() time.Time
	cursors map[string]store.Cursor // preloaded for many files; nil: ask per file
	// progress is told how many bytes were read, if set.
	progress func(n int64)
	// stopAt, when set, is when reading stops: the lines read by then are
	// committed, the rest is left for a later read.
	stopAt time.Time
	// touched, when set, collects the sessions messages were written to
	// (for the refresher).
	touched touchedSessions
	// opt says which projects are kept out of the ledger (optout.go),
	// loaded at the first record that needs it.
	opt *optOut
	// threadNames are the Codex session indexes read, by Codex home
	// (codexnames.go).
	threadNames map[string]map[string]string
	// ignoredNoted are the projects found kept out by a .ledgerignore in
	// this run; ignoredNew those of them not recorded yet (optout.go).
	ignoredNoted map[string]bool
	ignoredNew   [][2]string
}

// cursor returns the stored cursor of path, if any.
func (in *ingester) cursor(ctx context.Context, path string) (store.Cursor, bool, error) {
	if in.cursors != nil {
		if c, ok := in.cursors[path]; ok || !in.st.Redacts() {
			return c, ok, nil
		}
		// Not there by its path: maybe stored under it redacted (a path
		// holding a secret), which Cursor finds.
	}
	c, err := in.st.Cursor(ctx, path)
	if notFound(err) {
		return store.Cursor{}, false, nil
	}
	return c, err == nil, err
}

// file reads what is new in one transcript and writes it in one
// transaction together with the file's new cursor: an interrupted ingest
// loses nothing and duplicates nothing. When another process holds the
// database past the busy timeout, the whole file is tried again from its
// cursor (store.Retry): a busy transaction wrote nothing, and only the last
// attempt's counts are returned.
func (in *ingester) file(ctx context.Context, path string) (FileStats, error) {
	var fs FileStats
	err := store.Retry(ctx, func() error {
		job, err := in.prepare(ctx, AbsPath(path))
		fs = job.stats
		if errors.Is(err, errNotYet) {
			return nil
		}
		if err != nil {
			return err
		}
		defer job.close()
		w, err := in.st.NewWriter(ctx, string(job.plan.state.Format))
		if err != nil {
			return err
		}
		defer w.Rollback()
		if fs, err = job.into(ctx, w, in); err != nil {
			return err
		}
		return w.Commit(ctx, nil)
	})
	return fs, err
}

// errNotYet: a file's first lines were not read before the ingester's
// stopAt; it is left for a later read (FileStats.Left).
var errNotYet = errors.New("not read within the time given")

// fileJob is one file to read: open, with its read planned.
type fileJob struct {
	f     *os.File
	fi    os.FileInfo
	plan  readPlan
	stats FileStats
}

func (j *fileJob) close() {
	if j.f != nil {
		j.f.Close()
	}
}

// prepare opens a file and plans its read from its cursor. A file with
// nothing new is errUnchanged; nothing is written either way, so no write
// transaction is needed to find that out.
func (in *ingester) prepare(ctx context.Context, path string) (*fileJob, error) {
	job := &fileJob{stats: FileStats{Path: path}}
	f, err := transcript.Open(path)
	if err != nil {
		return job, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return job, err
	}
	cur, seen, err := in.cursor(ctx, path)
	if err != nil {
		f.Close()
		return job, err
	}
	dctx := ctx
	if !in.stopAt.IsZero() {
		var cancel context.CancelFunc
		dctx, cancel = context.WithDeadline(ctx, in.stopAt)
		defer cancel()
	}
	plan, err := planRead(dctx, f, fi, cur, seen)
	if err != nil {
		f.Close()
		if dctx.Err() != nil && ctx.Err() == nil {
			// Its first lines took longer than the read may: left for later.
			job.stats.Left = fi.Size()
			return job, errNotYet
		}
		return job, err
	}
	job.stats.Format = plan.state.Format
	if plan.unchanged {
		f.Close()
		return job, errUnchanged
	}
	if _, err := f.Seek(plan.start, io.SeekStart); err != nil {
		f.Close()
		return job, err
	}
	job.f, job.fi, job.plan = f, fi, plan
	return job, nil
}

// into reads the file's new lines into w's transaction and records the
// file's new cursor there; it returns what the file added.
func (j *fileJob) into(ctx context.Context, w *store.Writer, in *ingester) (FileStats, error) {
	fs := j.stats
	w.SetSource(string(j.plan.state.Format))
	before := w.Counts()
	st := j.plan.state
	res, stopped, err := in.pipe(ctx, j.f, &st, j.plan.start, j.plan.line, w)
	if err != nil {
		return fs, err
	}
	if stopped {
		fs.Left = max(0, j.fi.Size()-res.End)
	}
	// A Codex thread's name, given in its session index, is the
	// session's title; only for a session this read wrote to (not one
	// whose project is kept out of the ledger).
	if st.Format == transcript.FormatCodex && w.LastSeq(st.SessionID) >= 0 {
		if name := in.codexThreadName(fs.Path, st.SessionID); name != "" {
			if err := w.PatchSession(ctx, store.SessionPatch{ID: st.SessionID, Title: name}); err != nil {
				return fs, err
			}
		}
	}
	c, err := newCursor(j.f, j.fi, fs.Path, st, res)
	if err != nil {
		return fs, err
	}
	if stopped {
		// Read in part: the size and time must not say "read whole", or
		// the next read would find the file unchanged.
		c.Size = res.End
	}
	if err := w.SaveCursor(ctx, c); err != nil {
		return fs, err
	}
	after := w.Counts()
	fs.Read = true
	fs.Bytes = res.End - j.plan.start
	fs.Counts = store.Counts{Sessions: after.Sessions - before.Sessions, Messages: after.Messages - before.Messages,
		Compactions: after.Compactions - before.Compactions, Redacted: after.Redacted - before.Redacted}
	fs.Skipped, fs.Skips = res.Skipped, res.Skips
	fs.Session = w.StoredID(st.SessionID)
	return fs, nil
}

// readPlan is where to read a file from and with what reader state.
type readPlan struct {
	unchanged bool // nothing to read
	start     int64
	line      int
	state     transcript.State
}

// planRead decides where to read a file from, by its cursor:
//
//	the cursor says                             read
//	nothing (a new file)                        from the start
//	the same size and modification time        nothing
//	an offset past the file's end (it shrank)   from the start
//	a head that no longer matches (rewritten)  from the start
//	a reader state it cannot decode            from the start
//	otherwise (the file grew)                   from the cursor
//	  ... and the cursor is at the end          nothing
//
// Reading from the start again is safe: message uuids make it idempotent.
// From the start, the format is detected anew.
func planRead(ctx context.Context, f *os.File, fi os.FileInfo, cur store.Cursor, seen bool) (readPlan, error) {
	size, mtime := fi.Size(), fi.ModTime().UnixNano()
	if seen && cur.Size == size && cur.ModTime == mtime {
		return readPlan{unchanged: true}, nil
	}
	if seen && cursorHolds(f, size, cur) {
		var st transcript.State
		if json.Unmarshal([]byte(cur.State), &st) == nil && st.Format != "" {
			return readPlan{unchanged: cur.Offset == size, start: cur.Offset, line: cur.Line, state: st}, nil
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return readPlan{}, err
	}
	format, err := transcript.DetectContext(ctx, f)
	if err != nil {
		return readPlan{}, err
	}
	st := transcript.State{Format: format}
	switch format {
	case transcript.FormatClaude, transcript.FormatPi:
		// Both name their files after the session (Pi's header names it too).
		st.SessionID = transcript.SessionHint(f.Name())
	case transcript.FormatCopilot:
		// session-state/<session>/events.jsonl: for a file whose
		// session.start line is gone.
		st.SessionID = transcript.SessionHint(filepath.Dir(f.Name()))
	}
	return readPlan{start: 0, line: 1, state: st}, nil
}

// newCursor is the cursor after a read: where it ended, the reader's state,
// and the fingerprint of the file's head.
func newCursor(f *os.File, fi os.FileInfo, path string, st transcript.State, res transcript.Result) (*store.Cursor, error) {
	c := &store.Cursor{Path: path, SessionID: st.SessionID, Format: string(st.Format), Size: fi.Size(),
		ModTime: fi.ModTime().UnixNano(), Offset: res.End, Line: res.NextLine}
	var err error
	if c.HeadLen, c.HeadHash, err = headHash(f, min(res.End, headLen)); err != nil {
		return nil, err
	}
	state, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	c.State = string(state)
	return c, nil
}

// pipe parses on one goroutine while the writer writes on this one: JSON
// decoding and SQLite each get a core. The parsing goroutine also prepares
// each message (redacts its secrets, computes its search text): SQLite is
// the slower side, so that work costs no time. Reading stops early at
// in.stopAt, if set: stopped is true, and what was read is the result, for
// the caller to commit. The two sides share nothing but the channel of
// batches and the in-flight budget; the reader's outcome comes back on a
// channel of its own.
func (in *ingester) pipe(ctx context.Context, r io.Reader, st *transcript.State, start int64, line int, w *store.Writer) (transcript.Result, bool, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// readCtx ends at stopAt too; ctx only when the read must be abandoned.
	readCtx := ctx
	if !in.stopAt.IsZero() {
		var stop context.CancelFunc
		readCtx, stop = context.WithDeadline(ctx, in.stopAt)
		defer stop()
	}
	rd := &batchReader{in: in, w: w, batches: make(chan recBatch, 8), inFlight: semaphore.NewWeighted(maxInFlight), last: start}
	outcome := make(chan readOutcome, 1)
	go func() { outcome <- rd.read(ctx, readCtx, r, st, start, line) }()
	writeErr := in.writeBatches(ctx, cancel, w, rd)
	out := <-outcome
	if writeErr != nil {
		return out.res, false, writeErr
	}
	return out.res, out.stopped, out.err
}

// readOutcome is how the parsing side of pipe ended.
type readOutcome struct {
	res     transcript.Result
	stopped bool
	err     error
}

// batchReader is the parsing side of pipe: it reads records, prepares
// their messages and hands them to the writer in batches, within the
// in-flight budget.
type batchReader struct {
	in       *ingester
	w        *store.Writer
	batches  chan recBatch
	inFlight *semaphore.Weighted
	b        recBatch // the batch being gathered
	last     int64    // offset reported to progress so far
}

// read reads r to its end (or readCtx's), then closes the channel.
func (rd *batchReader) read(ctx, readCtx context.Context, r io.Reader, st *transcript.State, start int64, line int) (out readOutcome) {
	defer close(rd.batches)
	out.res, out.err = transcript.Read(readCtx, r, st, start, line, func(rec transcript.Record) error {
		p := preparedRecord{Record: rec}
		if rec.Message != nil {
			p.msg = rd.w.Prepare(*rec.Message)
			rd.b.bytes += int64(p.msg.Size())
		}
		rd.b.recs = append(rd.b.recs, p)
		if len(rd.b.recs) < recordBatch && rd.b.bytes < maxInFlight/4 {
			return nil
		}
		rd.progress(rec.Offset)
		return rd.send(readCtx)
	})
	if out.err != nil && readCtx.Err() != nil && ctx.Err() == nil {
		// Stopped on time: what the read counts as read is written, the
		// rest left for the next read (the batch's last record may be of
		// a line the read does not count as read).
		out.stopped, out.err = true, nil
		kept := rd.b.recs[:0]
		for _, rec := range rd.b.recs {
			if rec.Offset < out.res.End {
				kept = append(kept, rec)
			}
		}
		rd.b.recs = kept
	}
	if out.err == nil && len(rd.b.recs) > 0 {
		out.err = rd.send(ctx)
	}
	if out.err == nil {
		rd.progress(out.res.End)
	}
	return out
}

// progress tells the ingester's progress how far the read got.
func (rd *batchReader) progress(offset int64) {
	if rd.in.progress != nil {
		rd.in.progress(offset - rd.last)
		rd.last = offset
	}
}

// send hands the batch to the writer. Bytes over the budget wait for the
// writer; a batch bigger than the whole budget waits for it to be empty.
func (rd *batchReader) send(ctx context.Context) error {
	n := min(rd.b.bytes, maxInFlight)
	if err := rd.inFlight.Acquire(ctx, n); err != nil {
		return err
	}
	select {
	case rd.batches <- rd.b:
	case <-ctx.Done():
		rd.inFlight.Release(n)
		return ctx.Err()
	}
	rd.b = recBatch{}
	return nil
}

// writeBatches is the writing side of pipe: it writes each batch's records
// into w, giving their bytes back to the budget. After an error it cancels
// the read and drains the channel, so that the reader can finish.
func (in *ingester) writeBatches(ctx context.Context, cancel context.CancelFunc, w *store.Writer, rd *batchReader) error {
	var writeErr error
	var roots projectRoots
	optedOut := map[string]bool{}
	for b := range rd.batches {
		if writeErr == nil {
			if writeErr = in.decideAhead(ctx, b.recs, &roots, optedOut); writeErr != nil {
				cancel()
			}
		}
		for _, rec := range b.recs {
			if writeErr != nil {
				break // drain so the reader can finish
			}
			if out, err := in.optedOut(ctx, rec.Record, &roots, optedOut); out || err != nil {
				if writeErr = err; writeErr != nil {
					cancel()
				}
				continue
			}
			added, err := writeRecord(ctx, w, rec, &roots)
			if added && in.touched != nil {
				in.touched[rec.msg.Stored().SessionID] = true
			}
			if writeErr = err; writeErr != nil {
				cancel()
			}
		}
		if writeErr == nil && len(in.ignoredNew) > 0 {
			if writeErr = in.flushIgnored(ctx, w); writeErr != nil {
				cancel()
			}
		}
		rd.inFlight.Release(min(b.bytes, maxInFlight))
	}
	return writeErr
}

// recBatch is records handed to the writer at once, with the bytes of their
// prepared messages.
type recBatch struct {
	recs  []preparedRecord
	bytes int64
}

// preparedRecord is a record with its message prepared for the writer.
type preparedRecord struct {
	transcript.Record
	msg store.PreparedMessage
}

// writeRecord writes one record; added says whether it held a message
// the ledger did not have.
func writeRecord(ctx context.Context, w *store.Writer, rec preparedRecord, roots *projectRoots) (added bool, err error) {
	if s := rec.Session; s != nil && s.ID != "" {
		if err := w.PatchSession(ctx, store.SessionPatch{ID: s.ID, Project: roots.of(s.Project),
			GitBranch: s.GitBranch, Title: s.Title, Model: s.Model, ContextWindow: s.ContextWindow,
			Usage: s.Usage, UsageOf: s.UsageOf, Cost: s.Cost, Time: s.Time}); err != nil {
			return false, err
		}
	}
	if rec.Message != nil {
		if added, err = w.AddPrepared(ctx, rec.msg); err != nil {
			return false, fmt.Errorf("line %d: %w", rec.Line, err)
		}
	}
	if rec.Boundary != nil {
		if _, err := w.AddBoundary(ctx, *rec.Boundary); err != nil {
			return added, fmt.Errorf("line %d: %w", rec.Line, err)
		}
	}
	return added, nil
}

// projectRoots resolves a session's working directory to its project: the
// top folder of the git checkout holding it, when it is one on this
// machine (a worktree is its own checkout), else the folder itself.
type projectRoots map[string]string

func (r *projectRoots) of(dir string) string {
	if dir == "" {
		return ""
	}
	if *r == nil {
		*r = projectRoots{}
	}
	if root, ok := (*r)[dir]; ok {
		return root
	}
	root := dir
	// A folder of another system (C:\Users\… read on Linux) is no path
	// here: looked up, it would be taken relative to this process's folder.
	if filepath.IsAbs(dir) {
		if g, ok := gitrepo.Read(dir); ok && g.Root != "" {
			root = g.Root
		}
	}
	(*r)[dir] = root
	return root
}

// headHash fingerprints the first n bytes of f.
func headHash(f *os.File, n int64) (int64, string, error) {
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
		return 0, "", fmt.Errorf("read head: %w", err)
	}
	sum := sha256.Sum256(buf)
	return n, hex.EncodeToString(sum[:]), nil
}

// cursorHolds tells whether cur may still be read on from in f, of size
// bytes: the file is at least as long and starts with the bytes the
// cursor saw (else it is read from the start).
func cursorHolds(f *os.File, size int64, cur store.Cursor) bool {
	return cur.Offset <= size && headMatches(f, cur.HeadLen, cur.HeadHash)
}

// headMatches tells whether f still starts with the bytes the cursor saw.
func headMatches(f *os.File, n int64, want string) bool {
	_, got, err := headHash(f, n)
	return err == nil && want != "" && got == want
}
