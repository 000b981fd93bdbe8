package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agentledger/ledger/compact"
)

// PushCounts is what a push sent.
type PushCounts struct {
	Sessions    int `json:"sessions"`
	Messages    int `json:"messages"`
	Compactions int `json:"compactions"`
	Handoffs    int `json:"handoffs"`
	Notes       int `json:"notes"`
	// Forgotten counts the sessions with something new here that the
	// server's ledger has forgotten (ledger forget there): not pushed.
	Forgotten int `json:"forgotten"`
}

// PushFailure is a session a push could not send.
type PushFailure struct {
	Session string `json:"session"`
	Error   string `json:"error"`
}

// PushError is a push that sent every session it could but these.
type PushError struct {
	Failed []PushFailure
	Tried  int // sessions with something to send
}

func (e *PushError) Error() string {
	f := e.Failed[0]
	more := ""
	if len(e.Failed) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(e.Failed)-1)
	}
	return fmt.Sprintf("sync: %d of %d sessions not pushed, the others were: %s: %s%s", len(e.Failed), e.Tried, f.Session, f.Error, more)
}

// pushMark is how far a session was pushed: the seq of its last message
// sent and the largest local ids of its compactions, handoffs and notes.
type pushMark struct {
	SessionID   string `db:"session_id"`
	Seq         int64  `db:"seq"`
	Compactions int64  `db:"compactions"`
	Handoffs    int64  `db:"handoffs"`
	Notes       int64  `db:"notes"`
}

// pushPage is how many messages a push reads at a time.
const pushPage = 2000

// Push sends what this ledger holds to the PostgreSQL ledger dst, each
// session in one transaction of dst: only what it has not sent before
// (dst keeps, per origin and session, how far it got), through dst's own
// writer, so that messages are redacted with dst's rules and added with ON
// CONFLICT (a session dst already has from elsewhere is completed, not
// doubled). origin names this ledger among those that push to dst.
//
// A session dst has forgotten is not sent again (its tombstone holds); its
// mark moves on, so that it is counted once. A session dst refuses fails
// alone: the others are sent, and Push returns a *PushError naming it,
// whose mark stays, so that the next push tries it again. What stops the
// whole push is the context ending and a server that does not answer.
func (s *Store) Push(ctx context.Context, dst *Store, origin string) (PushCounts, error) {
	var out PushCounts
	if !dst.Shared() {
		return out, errors.New("sync: the destination must be a PostgreSQL ledger (postgres://...)")
	}
	var sent []pushMark
	if err := dst.db.SelectContext(ctx, &sent, `SELECT session_id, seq, compactions, handoffs, notes FROM sync_marks WHERE origin = $1`, origin); err != nil {
		return out, fmt.Errorf("sync: read marks: %w", err)
	}
	marks := map[string]pushMark{}
	for _, m := range sent {
		marks[m.SessionID] = m
	}
	var forgotten []string
	if err := dst.db.SelectContext(ctx, &forgotten, `SELECT session_id FROM forgotten`); err != nil {
		return out, fmt.Errorf("sync: read forgotten sessions: %w", err)
	}
	gone := map[string]bool{}
	for _, id := range forgotten {
		gone[id] = true
	}
	var failed PushError
	var have []pushMark
	if err := s.db.SelectContext(ctx, &have, `SELECT s.id AS session_id,
		coalesce((SELECT max(seq) FROM messages WHERE session_id = s.id), -1) AS seq,
		coalesce((SELECT max(id) FROM compactions WHERE session_id = s.id), 0) AS compactions,
		coalesce((SELECT max(id) FROM handoffs WHERE session_id = s.id), 0) AS handoffs,
		coalesce((SELECT max(id) FROM notes WHERE session_id = s.id), 0) AS notes
		FROM sessions s ORDER BY s.id`); err != nil {
		return out, fmt.Errorf("sync: read sessions: %w", err)
	}
	for _, h := range have {
		m, ok := marks[h.SessionID]
		if !ok {
			m = pushMark{SessionID: h.SessionID, Seq: -1}
		}
		if h.Seq <= m.Seq && h.Compactions <= m.Compactions && h.Handoffs <= m.Handoffs && h.Notes <= m.Notes {
			continue
		}
		if err := ctx.Err(); err != nil {
			return out, err
		}
		failed.Tried++
		if gone[h.SessionID] {
			if err := saveMark(ctx, dst.db, origin, h); err != nil {
				return out, fmt.Errorf("sync %s: %w", h.SessionID, err)
			}
			out.Forgotten++
			continue
		}
		var part PushCounts
		if err := s.pushSession(ctx, dst, origin, m, h, &part); err != nil {
			if ctx.Err() != nil || errors.As(err, new(*NoAnswerError)) || errors.Is(err, driver.ErrBadConn) {
				return out, fmt.Errorf("sync %s: %w", h.SessionID, err)
			}
			failed.Failed = append(failed.Failed, PushFailure{Session: h.SessionID, Error: oneLine(err)})
			continue
		}
		out.Sessions += part.Sessions
		out.Messages += part.Messages
		out.Compactions += part.Compactions
		out.Handoffs += part.Handoffs
		out.Notes += part.Notes
	}
	if len(failed.Failed) > 0 {
		return out, &failed
	}
	return out, nil
}

// saveMark records how far a session was pushed from origin.
func saveMark(ctx context.Context, db sqlx.ExecerContext, origin string, to pushMark) error {
	if _, err := db.ExecContext(ctx, `INSERT INTO sync_marks (origin, session_id, seq, compactions, handoffs, notes, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (origin, session_id) DO UPDATE SET seq = excluded.seq, compactions = excluded.compactions,
			handoffs = excluded.handoffs, notes = excluded.notes, updated_at = excluded.updated_at`,
		origin, to.SessionID, to.Seq, to.Compactions, to.Handoffs, to.Notes, time.Now().UTC()); err != nil {
		return fmt.Errorf("save mark: %w", err)
	}
	return nil
}

// pushSession sends one session's messages after from.Seq (and its
// compactions, handoffs and notes after from's ids) up to to, and moves
// the mark to to, in one transaction of dst.
func (s *Store) pushSession(ctx context.Context, dst *Store, origin string, from, to pushMark, out *PushCounts) error {
	sess, err := s.Session(ctx, from.SessionID)
	if err != nil {
		return err
	}
	w, err := dst.NewWriter(ctx, sess.Source)
	if err != nil {
		return err
	}
	defer w.Rollback()
	patch := SessionPatch{ID: sess.ID, Project: sess.Project, GitBranch: sess.GitBranch, Title: sess.Title,
		Model: sess.Model, ContextWindow: sess.ContextWindow, Cost: sess.Cost, Time: sess.StartedAt}
	if err := w.PatchSession(ctx, patch); err != nil {
		return err
	}
	if err := w.PatchSession(ctx, SessionPatch{ID: sess.ID, Time: sess.LastAt}); err != nil {
		return err
	}
	var msgs []compact.Message
	for seq := from.Seq + 1; seq <= to.Seq; seq += pushPage {
		if msgs, _, err = s.MessageRange(ctx, sess.ID, seq, seq+pushPage); err != nil {
			return err
		}
		for _, m := range msgs {
			added, err := w.AddMessage(ctx, m)
			if err != nil {
				return err
			}
			if added {
				out.Messages++
			}
		}
	}
	if err := s.pushRecords(ctx, w, from, to, out); err != nil {
		return err
	}
	if err := saveMark(ctx, w.tx, origin, to); err != nil {
		return err
	}
	if err := w.Commit(ctx, nil); err != nil {
		return err
	}
	out.Sessions += w.counts.Sessions
	return nil
}

// pushRecords sends a session's compactions, handoffs and notes whose
// local ids are after from's, in w's transaction (dst's connection redacts
// their text with its rules, as everything it writes).
func (s *Store) pushRecords(ctx context.Context, w *Writer, from, to pushMark, out *PushCounts) error {
	id := from.SessionID
	var comps []compactionRow
	if err := s.db.SelectContext(ctx, &comps, `SELECT `+compactionColumns+` FROM compactions
		WHERE session_id = $1 AND id > $2 AND id <= $3 ORDER BY id`, id, from.Compactions, to.Compactions); err != nil {
		return fmt.Errorf("read compactions: %w", err)
	}
	for _, c := range comps {
		if c.BoundaryUUID.Valid {
			b := compact.Boundary{UUID: c.BoundaryUUID.String, SessionID: id, Time: c.At,
				Trigger: c.Trigger, PreTokens: c.PreTokens.Int64, PostTokens: c.PostTokens.Int64,
				LogicalParentUUID: c.LogicalParentUUID, Summary: c.Summary}
			if c.PreservedHead != "" {
				b.Preserved = &compact.Preserved{HeadUUID: c.PreservedHead, TailUUID: c.PreservedTail, Messages: int(c.PreservedMessages)}
			}
			added, err := w.AddBoundary(ctx, b)
			if err != nil {
				return err
			}
			if added {
				out.Compactions++
			}
			continue
		}
		// A hook's or the cli's record: no boundary to know it by; the
		// mark keeps it from being sent twice.
		if _, err := w.tx.ExecContext(ctx, `INSERT INTO compactions (session_id, logical_parent_uuid, at, trigger, pre_tokens, post_tokens, summary, source, tool_calls)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, id, c.LogicalParentUUID, c.At.UTC(), c.Trigger, c.PreTokens, c.PostTokens,
			c.Summary, c.Source, c.ToolCalls); err != nil {
			return fmt.Errorf("insert compaction: %w", err)
		}
		out.Compactions++
	}
	var hs []Handoff
	if err := s.db.SelectContext(ctx, &hs, `SELECT id, session_id, created_at, trigger, task, sections, markdown, tokens, path FROM handoffs
		WHERE session_id = $1 AND id > $2 AND id <= $3 ORDER BY id`, id, from.Handoffs, to.Handoffs); err != nil {
		return fmt.Errorf("read handoffs: %w", err)
	}
	for _, h := range hs {
		// The Markdown file stays on this machine: its path means nothing
		// on the others.
		if _, err := w.tx.ExecContext(ctx, `INSERT INTO handoffs (session_id, created_at, trigger, task, sections, markdown, tokens)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, id, h.CreatedAt.UTC(), h.Trigger, h.Task, h.Sections, h.Markdown, h.Tokens); err != nil {
			return fmt.Errorf("insert handoff: %w", err)
		}
		out.Handoffs++
	}
	var ns []Note
	if err := s.db.SelectContext(ctx, &ns, `SELECT id, session_id, kind, text, created_at FROM notes
		WHERE session_id = $1 AND id > $2 AND id <= $3 ORDER BY id`, id, from.Notes, to.Notes); err != nil {
		return fmt.Errorf("read notes: %w", err)
	}
	for _, n := range ns {
		if _, err := w.tx.ExecContext(ctx, `INSERT INTO notes (session_id, kind, text, created_at) VALUES ($1, $2, $3, $4)`,
			id, n.Kind, n.Text, n.CreatedAt.UTC()); err != nil {
			return fmt.Errorf("insert note: %w", err)
		}
		out.Notes++
	}
	return nil
}
