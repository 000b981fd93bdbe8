package engine

import (
	"bytes"
	"context"
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
	from := e.copilotReadFrom(ctx, path)
	for {
		found, next := copilotHookStarted(path, from, in.copilotHook, in.copilotStamp)
		if found {
			if waited := time.Since(start); waited >= copilotRecordPoll {
				r.note("waited %d ms for Copilot CLI to write the turn's records", waited.Milliseconds())
			}
			return
		}
		from = next
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
// from the start (planRead) and so does the wait: from a cursor past its
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
	if err != nil || cur.Offset > fi.Size() || !headMatches(f, cur.HeadLen, cur.HeadHash) {
		return 0
	}
	return cur.Offset
}

// copilotHookStarted reads path's whole lines from offset from and says
// whether one is the hook.start record of hook with input timestamp
// stamp; next is the offset to read from next time (past the whole lines
// read). A file that is missing, or is not a regular file, holds none.
func copilotHookStarted(path string, from int64, hook string, stamp int64) (found bool, next int64) {
	f, err := transcript.Open(path)
	if err != nil {
		return false, from
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return false, from
	}
	// Records are small; a cap keeps a huge or hostile file's read bounded.
	b, err := io.ReadAll(io.LimitReader(f, 64<<20))
	if err != nil {
		return false, from
	}
	end := bytes.LastIndexByte(b, '\n') + 1
	for _, line := range bytes.Split(b[:end], []byte("\n")) {
		if !bytes.Contains(line, []byte(`"hook.start"`)) {
			continue
		}
		rec := gjson.ParseBytes(line)
		if rec.Get("type").String() == "hook.start" && rec.Get("data.hookType").String() == hook &&
			rec.Get("data.input.timestamp").Int() == stamp {
			return true, from + int64(end)
		}
	}
	return false, from + int64(end)
}
