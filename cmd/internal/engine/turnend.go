package engine

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/agentledger/ledger/store"
)

// Qwen Code fires Stop while its chat recording may still hold the turn's
// last records in its write queue (appended asynchronously, flushed later):
// a Stop hook that reads the transcript at once can miss the tool results
// and the answer that ended the turn. Its Stop input names that answer
// (last_assistant_message), so the hook can tell: when the ledger does not
// hold it after the read, the hook waits for the file to grow, until the
// transcript's read budget, and reads again. What is still missing then is
// left for the next event, and the receipt says so.

// turnEndPoll is how often the file's size is checked while waiting.
const turnEndPoll = 10 * time.Millisecond

// turnEndRedacted is how much of the answer's start is redacted to make
// the needle: past any secret that starts in its first 80 bytes (a
// private key is a few KB).
const turnEndRedacted = 16 << 10

// noResponseText is what Qwen Code sends as last_assistant_message for a
// turn that ended without text: nothing to look for.
const noResponseText = "[no response text]"

// turnEndNeedle is what of the turn's last answer must be in the ledger:
// the start of its text as the ledger stores it (redacted), up to 80
// bytes; "" when there is nothing to look for.
func turnEndNeedle(st *store.Store, answer string) string {
	answer = strings.TrimSpace(answer)
	if answer == "" || answer == noResponseText {
		return ""
	}
	if len(answer) > turnEndRedacted {
		// Only the start is looked for, so only the start is redacted: an
		// answer of megabytes would spend the hook's budget on it.
		answer = strings.ToValidUTF8(answer[:turnEndRedacted], "")
	}
	answer = st.StoredKey(answer) // redacted as the stored message is
	if len(answer) > 80 {
		// Cut at 80 bytes; a rune cut in two is dropped.
		answer = strings.ToValidUTF8(answer[:80], "")
	}
	return strings.TrimSpace(answer)
}

// holdsAnswer tells whether the session's latest messages hold needle.
func holdsAnswer(ctx context.Context, st *store.Store, session, needle string) bool {
	msgs, err := st.Messages(ctx, session, 8)
	if err != nil {
		return true // nothing to wait for that can be told
	}
	for _, m := range msgs {
		if strings.Contains(m.Text(), needle) {
			return true
		}
	}
	return false
}

// awaitTurnEnd makes sure the ledger holds the turn's last answer the Stop
// input names (see above), reading the transcript again as it grows until
// c.readBy.
func (e *Engine) awaitTurnEnd(ctx context.Context, in HookInput, c hookClocks, r *hookResult) {
	st := e.Opened()
	if st == nil || in.SessionID == "" || r.outcome == store.OutcomeDeferred {
		return
	}
	needle := turnEndNeedle(st, in.LastAssistantMessage)
	if needle == "" || holdsAnswer(ctx, st, in.SessionID, needle) {
		return
	}
	path := e.expandHome(in.TranscriptPath)
	var more int
	last := int64(-1) // the file's size at the last read here
	for time.Now().Before(c.readBy) && ctx.Err() == nil {
		// Read again when the file holds bytes past what the ledger
		// read and has changed since the last read here (a line still
		// being written is read once it changes).
		cur, err := st.Cursor(ctx, path)
		size := fileSize(path)
		if err != nil || size <= cur.Offset || size == last {
			time.Sleep(turnEndPoll)
			continue
		}
		last = size
		fs, err := e.IngestFile(store.WithLockDeadline(ctx, c.lockBy), path, IngestOptions{StopAt: c.readBy, Session: in.SessionID})
		if err != nil {
			break
		}
		more += fs.Counts.Messages
		if holdsAnswer(ctx, st, in.SessionID, needle) {
			r.note("then %d more messages, once the agent had written the turn's last answer", more)
			return
		}
	}
	r.deferred("the transcript did not hold the turn's last answer within the budget (the agent writes it later): left for the next event")
}

// fileSize is path's size, -1 when it cannot be told.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return fi.Size()
}
