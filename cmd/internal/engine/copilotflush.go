package engine

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"time"

	"github.com/tidwall/gjson"

	"github.com/agentledger/ledger/transcript"
)

// Copilot CLI 1.0.102 writes a session's events.jsonl behind it: at its
// agentStop hook the turn's records are often not in the file yet (the
// file of a new session may not exist), and they come a few hundred
// milliseconds later, while the hook runs. Read then, the turn would be
// missed until the session's next event, and a one-off `copilot -p` run
// would leave the ledger with none of it. Copilot CLI records each hook's
// invocation in the file, in order, before the records that follow it:
// a hook.start record naming the hook (hookType) with its input (the
// same timestamp). Once the file holds this hook's own hook.start, it
// holds everything that came before the hook.

// copilotRecordPoll is how often the file is read again while waiting.
const copilotRecordPoll = 20 * time.Millisecond

// awaitCopilotRecord waits, at a Copilot CLI native agentStop or
// sessionEnd hook, until the session's events.jsonl holds the hook's own
// hook.start record, for at most half of what is left of the read budget
// (the ingest that follows needs the rest). Past that it notes it and
// lets the ingest read what there is; the rest is read at the next event.
func (e *Engine) awaitCopilotRecord(ctx context.Context, in HookInput, c hookClocks, r *hookResult) {
	if in.copilotHook == "" || in.copilotStamp == 0 || in.TranscriptPath == "" {
		return
	}
	start := time.Now()
	by := start.Add(time.Until(c.readBy) / 2)
	path := e.expandHome(in.TranscriptPath)
	at := copilotScan{next: e.copilotReadFrom(ctx, path)}
	for {
		if at.hookStarted(path, in.copilotHook, in.copilotStamp, by) {
			if waited := time.Since(start); waited >= copilotRecordPoll {
				r.note("waited %d ms for Copilot CLI to write the turn's records", waited.Milliseconds())
			}
			return
		}
		if !time.Now().Add(copilotRecordPoll).Before(by) || ctx.Err() != nil {
			r.note("Copilot CLI had not written the records up to this hook after %d ms: what it had written is read, the rest at the next event",
				time.Since(start).Milliseconds())
			return
		}
		time.Sleep(copilotRecordPoll)
	}
}

// copilotReadFrom is where the wait starts reading path: the ledger's
// cursor, unless the file is no longer the one the cursor read (shorter
// than the cursor's offset, or another head), where the ingest reads it
// from the start (planRead, cursorHolds) and so does the wait: from a cursor past its
// end it would read nothing and wait out its time for a record that is
// already there.
func (e *Engine) copilotReadFrom(ctx context.Context, path string) int64 {
	st := e.Opened()
	if st == nil {
		return 0
	}
	cur, err := st.Cursor(ctx, path)
	if err != nil || cur.Offset == 0 {
		return 0
	}
	f, err := transcript.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !cursorHolds(f, fi.Size(), cur) {
		return 0
	}
	return cur.Offset
}

// copilotMaxRecord bounds the lines the wait looks into: a hook.start
// record is a few KB (the hook's input); a longer line (a huge message)
// is passed over without being held.
const copilotMaxRecord = 1 << 20

// copilotScan is how far the wait has looked into the file: next is the
// offset to read from, inLine whether it is inside a line too long to be
// a hook.start record (the rest of that line is passed over).
type copilotScan struct {
	next   int64
	inLine bool
}

// hookStarted reads path's whole lines from s.next, until by, and says
// whether one is the hook.start record of hook with input timestamp
// stamp; s then says where to read from next time. It holds no more than
// copilotMaxRecord of the file at a time, and reads each byte once
// across calls. A file that is missing, or is not a regular file, holds
// none.
func (s *copilotScan) hookStarted(path, hook string, stamp int64, by time.Time) bool {
	f, err := transcript.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if _, err := f.Seek(s.next, io.SeekStart); err != nil {
		return false
	}
	br := bufio.NewReaderSize(f, 64<<10)
	var line []byte
	for n := 0; ; n++ {
		if n%64 == 0 && time.Now().After(by) {
			return false
		}
		chunk, err := br.ReadSlice('\n')
		switch {
		case err == nil:
			s.next += int64(len(line) + len(chunk))
			if s.inLine {
				s.inLine = false // the end of a line passed over
				continue
			}
			if len(line) > 0 {
				chunk = append(line, chunk...)
				line = line[:0]
			}
			if copilotHookStart(chunk, hook, stamp) {
				return true
			}
		case errors.Is(err, bufio.ErrBufferFull):
			if s.inLine {
				s.next += int64(len(chunk))
				continue
			}
			line = append(line, chunk...)
			if len(line) > copilotMaxRecord {
				s.next += int64(len(line))
				s.inLine, line = true, line[:0]
			}
		default:
			// The end of what is written: a line not finished yet is read
			// again next time, unless it is one passed over.
			if s.inLine {
				s.next += int64(len(chunk))
			}
			return false
		}
	}
}

// copilotHookStart tells whether line is the hook.start record of hook
// with input timestamp stamp.
func copilotHookStart(line []byte, hook string, stamp int64) bool {
	if !bytes.Contains(line, []byte(`"hook.start"`)) {
		return false
	}
	rec := gjson.ParseBytes(line)
	return rec.Get("type").String() == "hook.start" && rec.Get("data.hookType").String() == hook &&
		rec.Get("data.input.timestamp").Int() == stamp
}
