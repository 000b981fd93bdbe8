package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/transcript"
	"github.com/agentledger/ledger/transcript/opencode"
)

// OpenCode and Kilo keep their sessions in a SQLite database rather than
// in files that grow (transcript/opencode). The ingest engine is built
// around files and byte offsets; a database joins it with the same two
// kinds of cursor row, and nothing else changes:
//
//	path          what its cursor row says
//	<db>          the database file: Size (the database and its WAL) and
//	              ModTime (the later of theirs) as read by the last whole
//	              ingest, so that an unchanged database is not even opened
//	<db>#<id>     one session: State is its opencode.Cursor (how far its
//	              messages were read, and its change mark), SessionID the
//	              ledger session it went to (the top session, for a
//	              subagent's)
//
// Each session's records are written in one transaction with its cursor,
// as a file's lines are with its cursor: an interrupted ingest loses
// nothing and duplicates nothing. A read limited to one session (a hook's)
// never moves the database's row, which says when every session was read.

// dbSessionKey is the cursor path of a session of the database at db.
func dbSessionKey(db, id string) string { return db + "#" + id }

// splitDBSessionKey is the database and session of a cursor path made by
// dbSessionKey; ok is false for a transcript file's path.
func splitDBSessionKey(p string) (db, id string, ok bool) {
	i := strings.LastIndexByte(p, '#')
	if i < 0 {
		return "", "", false
	}
	if _, isDB := transcript.DatabaseFormat(p[:i]); !isDB {
		return "", "", false
	}
	return p[:i], p[i+1:], true
}

// dbStamp is what the database's cursor row compares: the sizes of the
// database and its WAL, and the later of their modification times.
func dbStamp(path string) (size, mtime int64, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, err
	}
	if !fi.Mode().IsRegular() {
		return 0, 0, fmt.Errorf("%s: %w", path, transcript.ErrNotRegular)
	}
	size, mtime = fi.Size(), fi.ModTime().UnixNano()
	if wal, err := os.Stat(path + "-wal"); err == nil {
		size += wal.Size()
		mtime = max(mtime, wal.ModTime().UnixNano())
	}
	return size, mtime, nil
}

// database ingests what is new in an OpenCode or Kilo database: every
// session that changed since its cursor, or with only set, the tree of
// that session (the top session it belongs to and its subagents'). A
// database not changed since the last whole ingest is not opened.
func (in *ingester) database(ctx context.Context, path string, f transcript.Format, only string) (FileStats, error) {
	fs := FileStats{Path: path, Format: f}
	size, mtime, err := dbStamp(path)
	if err != nil {
		return fs, err
	}
	dbCur, seen, err := in.cursor(ctx, path)
	if err != nil {
		return fs, err
	}
	if seen && dbCur.Size == size && dbCur.ModTime == mtime {
		return fs, errUnchanged
	}
	d, err := opencode.Open(ctx, path, f)
	if errors.Is(err, opencode.ErrNotDatabase) {
		return fs, fmt.Errorf("%w: %w", transcript.ErrUnknownFormat, err)
	}
	if err != nil {
		return fs, err
	}
	defer d.Close()
	sessions, err := d.Sessions(ctx)
	if err != nil {
		return fs, err
	}
	parents := make(map[string]string, len(sessions))
	for _, s := range sessions {
		parents[s.ID] = s.ParentID
	}
	if only != "" {
		only = opencode.Root(only, parents)
		fs.Session = only
	}
	type job struct {
		s    opencode.Session
		root string
		cur  opencode.Cursor
	}
	var jobs []job
	for _, s := range sessions {
		root := opencode.Root(s.ID, parents)
		if only != "" && root != only {
			continue
		}
		c, seen, err := in.cursor(ctx, dbSessionKey(path, s.ID))
		if err != nil {
			return fs, err
		}
		var cur opencode.Cursor
		if seen && json.Unmarshal([]byte(c.State), &cur) != nil {
			cur = opencode.Cursor{} // a state it cannot read: from the start (idempotent)
		}
		if seen && cur.Mark == s.Mark && cur.After != "" {
			continue
		}
		jobs = append(jobs, job{s, root, cur})
	}
	// A transaction per run of sessions holding about batchMessages
	// messages, each session's cursor in it; a busy ledger retries the
	// run from the cursors it started from.
	for len(jobs) > 0 {
		if err := ctx.Err(); err != nil {
			return fs, err
		}
		if in.stopped() && fs.Read {
			fs.Left = int64(len(jobs))
			break
		}
		var done int
		var stats FileStats
		// partial is the cursor of a session read only in part (its read
		// ended at stopAt or at its page's bytes): the job goes on from
		// it in the next transaction.
		var partial *opencode.Cursor
		err := store.Retry(ctx, func() error {
			stats = FileStats{}
			partial = nil
			w, err := in.st.NewWriter(ctx, string(f))
			if err != nil {
				return err
			}
			defer w.Rollback()
			before := w.Counts()
			var roots projectRoots
			decided := map[string]bool{}
			done = 0
			for _, j := range jobs {
				var recs []preparedRecord
				next, skips, more, err := d.ReadUntil(ctx, j.s, j.root, j.cur, in.stopAt, func(r transcript.Record) error {
					p := preparedRecord{Record: r}
					if r.Message != nil {
						p.msg = w.Prepare(*r.Message)
					}
					recs = append(recs, p)
					return nil
				})
				if err != nil {
					return err
				}
				if err := in.writeRecords(ctx, w, recs, &roots, decided); err != nil {
					return err
				}
				state, err := json.Marshal(next)
				if err != nil {
					return err
				}
				if err := w.SaveCursor(ctx, &store.Cursor{Path: dbSessionKey(path, j.s.ID), SessionID: j.root,
					Format: string(f), State: string(state)}); err != nil {
					return err
				}
				stats.Skipped += len(skips)
				for _, sk := range skips {
					if len(stats.Skips) < transcript.MaxSkipsListed {
						stats.Skips = append(stats.Skips, transcript.Skip{Reason: "session " + j.s.ID + ": " + sk})
					}
				}
				if more {
					partial = &next
					break
				}
				done++
				if w.Counts().Messages-before.Messages >= batchMessages || in.stopped() {
					break
				}
			}
			if done == len(jobs) && only == "" {
				// Every changed session read: the database is read as of its stamp.
				if err := w.SaveCursor(ctx, &store.Cursor{Path: path, Format: string(f), Size: size, ModTime: mtime}); err != nil {
					return err
				}
			}
			after := w.Counts()
			stats.Counts = store.Counts{Sessions: after.Sessions - before.Sessions, Messages: after.Messages - before.Messages,
				Compactions: after.Compactions - before.Compactions, Redacted: after.Redacted - before.Redacted}
			return w.Commit(ctx, nil)
		})
		if err != nil {
			return fs, err
		}
		fs.Read = true
		fs.Counts.Sessions += stats.Counts.Sessions
		fs.Counts.Messages += stats.Counts.Messages
		fs.Counts.Compactions += stats.Counts.Compactions
		fs.Counts.Redacted += stats.Counts.Redacted
		fs.Skipped += stats.Skipped
		for _, sk := range stats.Skips {
			if len(fs.Skips) < transcript.MaxSkipsListed {
				fs.Skips = append(fs.Skips, sk)
			}
		}
		for _, j := range jobs[:done] {
			fs.sessions = append(fs.sessions, j.root)
		}
		jobs = jobs[done:]
		if partial != nil {
			jobs[0].cur = *partial
		}
	}
	if !fs.Read && only == "" && len(jobs) == 0 {
		// Nothing changed in any session (the file was touched: a
		// checkpoint, another tool): remember the stamp all the same.
		err := store.Retry(ctx, func() error {
			w, err := in.st.NewWriter(ctx, string(f))
			if err != nil {
				return err
			}
			defer w.Rollback()
			return w.Commit(ctx, &store.Cursor{Path: path, Format: string(f), Size: size, ModTime: mtime})
		})
		if err != nil {
			return fs, err
		}
		return fs, errUnchanged
	}
	if !fs.Read {
		return fs, errUnchanged
	}
	return fs, nil
}

// writeRecords writes records read from a database as pipe writes a
// file's: the sessions of a project kept out of the ledger are read and
// not written.
func (in *ingester) writeRecords(ctx context.Context, w *store.Writer, recs []preparedRecord, roots *projectRoots, decided map[string]bool) error {
	if err := in.decideAhead(ctx, recs, roots, decided); err != nil {
		return err
	}
	for _, rec := range recs {
		out, err := in.optedOut(ctx, rec.Record, roots, decided)
		if err != nil {
			return err
		}
		if out {
			continue
		}
		if _, err := writeRecord(ctx, w, rec, roots); err != nil {
			return err
		}
	}
	return nil
}

// databaseFile is one database met by Ingest: read, its outcome added to
// the summary and its sessions handed to the refresher. The error is one
// that ends the ingest (an interruption, or a named file that is not an
// agent's database).
func (in *ingester) databaseFile(ctx context.Context, path string, f transcript.Format, sum *IngestSummary, ref *refresher) error {
	fs, err := in.database(ctx, path, f, "")
	switch {
	case err == nil:
		sum.add(fs)
		for _, id := range fs.sessions {
			ref.add(id)
		}
	case errors.Is(err, errUnchanged):
	case ctx.Err() != nil:
		return fmt.Errorf("interrupted: %w", ctx.Err())
	case errors.Is(err, transcript.ErrUnknownFormat):
		sum.Unrecognized = append(sum.Unrecognized, path)
		if sum.Explicit[path] {
			return fmt.Errorf("%s: %w", path, err)
		}
	default:
		sum.Failed = append(sum.Failed, FileFailed{path, err.Error()})
	}
	return nil
}

// stopped tells whether the ingest's stopAt, if set, has passed.
func (in *ingester) stopped() bool {
	return !in.stopAt.IsZero() && time.Now().After(in.stopAt)
}
