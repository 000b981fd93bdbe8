package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"strconv"
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

// pushMark is how far a session was pushed: the largest local ids of its
// messages, compactions, handoffs and notes sent. (Messages go by id, not
// by their number: a message older than the session's latest, read later,
// is numbered among them, and a mark by number would pass it over. The
// column is named seq; a mark a push by number left there is below every
// id not yet sent, so nothing is missed: what was sent comes again, and
// dst's writer adds it once.)
type pushMark struct {
	SessionID   string `db:"session_id"`
	Seq         int64  `db:"seq"`
	Compactions int64  `db:"compactions"`
	Handoffs    int64  `db:"handoffs"`
	Notes       int64  `db:"notes"`
	// Records is the fingerprint of the session's compaction records as
	// they were pushed (recordsPrint): a record completed after its push
	// changes it, and the next push sends the records again.
	Records string `db:"records"`
	// Messages is the session's count of messages added (sessions.messages,
	// which every insert raises) when it was pushed; -1 in a mark an older
	// ledger left. A count still the same says nothing was added since,
	// without looking for the session's largest message id.
	Messages int64 `db:"messages"`
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
	if err := dst.db.SelectContext(ctx, &sent, `SELECT session_id, seq, compactions, handoffs, notes, records, messages FROM sync_marks WHERE origin = $1`, origin); err != nil {
		return out, fmt.Errorf("sync: read marks: %w", err)
	}
	marks := map[string]pushMark{}
	for _, m := range sent {
		marks[m.SessionID] = m
	}
	// The sessions dst has forgotten are read once something is to be
	// sent: a push with nothing new is the marks' one statement.
	var gone map[string]bool
	forgotten := func() (map[string]bool, error) {
		if gone != nil {
			return gone, nil
		}
		var ids []string
		if err := dst.db.SelectContext(ctx, &ids, `SELECT session_id FROM forgotten`); err != nil {
			return nil, fmt.Errorf("sync: read forgotten sessions: %w", err)
		}
		gone = make(map[string]bool, len(ids))
		for _, id := range ids {
			gone[id] = true
		}
		return gone, nil
	}
	var failed PushError
	// What each session holds here: its count of messages added, the
	// largest ids of its records (small tables). The largest message id,
	// the mark a push moves on to, is looked for only for a session with
	// something to send.
	var have []pushMark
	if err := s.db.SelectContext(ctx, &have, `SELECT s.id AS session_id, s.messages AS messages,
		coalesce(c.last, 0) AS compactions, coalesce(h.last, 0) AS handoffs, coalesce(n.last, 0) AS notes
		FROM sessions s
		LEFT JOIN (SELECT session_id, max(id) AS last FROM compactions GROUP BY session_id) c ON c.session_id = s.id
		LEFT JOIN (SELECT session_id, max(id) AS last FROM handoffs GROUP BY session_id) h ON h.session_id = s.id
		LEFT JOIN (SELECT session_id, max(id) AS last FROM notes GROUP BY session_id) n ON n.session_id = s.id
		ORDER BY s.id`); err != nil {
		return out, fmt.Errorf("sync: read sessions: %w", err)
	}
	prints, err := s.recordsPrints(ctx)
	if err != nil {
		return out, err
	}
	for _, h := range have {
		h.Records = prints[h.SessionID]
		m, ok := marks[h.SessionID]
		if !ok {
			m = pushMark{SessionID: h.SessionID, Seq: -1, Records: h.Records}
		}
		if h.Messages == m.Messages && h.Compactions <= m.Compactions && h.Handoffs <= m.Handoffs && h.Notes <= m.Notes && h.Records == m.Records {
			continue
		}
		if err := s.db.GetContext(ctx, &h.Seq, `SELECT coalesce(max(id), -1) FROM messages WHERE session_id = $1`, h.SessionID); err != nil {
			return out, fmt.Errorf("sync: read messages of %s: %w", h.SessionID, err)
		}
		if err := ctx.Err(); err != nil {
			return out, err
		}
		failed.Tried++
		gone, err := forgotten()
		if err != nil {
			return out, err
		}
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
	if failed.Tried > 0 {
		// Once anything was sent, even rows the server held already.
		// Best effort (SettleSearch): what was sent is stored either way.
		_ = dst.SettleSearch(ctx, out.Messages)
	}
	if len(failed.Failed) > 0 {
		return out, &failed
	}
	return out, nil
}

// saveMark records how far a session was pushed from origin.
func saveMark(ctx context.Context, db sqlx.ExecerContext, origin string, to pushMark) error {
	if _, err := db.ExecContext(ctx, `INSERT INTO sync_marks (origin, session_id, seq, compactions, handoffs, notes, records, messages, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (origin, session_id) DO UPDATE SET seq = excluded.seq, compactions = excluded.compactions,
			handoffs = excluded.handoffs, notes = excluded.notes, records = excluded.records, messages = excluded.messages,
			updated_at = excluded.updated_at`,
		origin, to.SessionID, to.Seq, to.Compactions, to.Handoffs, to.Notes, to.Records, to.Messages, time.Now().UTC()); err != nil {
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
	for after := from.Seq; after < to.Seq; {
		var rows []messageRow
		if err := s.db.SelectContext(ctx, &rows, `SELECT id, `+messageColumns+` FROM messages
			WHERE session_id = $1 AND id > $2 AND id <= $3 ORDER BY id LIMIT $4`, sess.ID, after, to.Seq, pushPage); err != nil {
			return fmt.Errorf("read messages of %s: %w", sess.ID, err)
		}
		if len(rows) == 0 {
			break
		}
		after = rows[len(rows)-1].ID
		msgs, err := messages(rows)
		if err != nil {
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
	// The context in use as this ledger knows it: a Codex session's comes
	// from its token counts, which are not messages the push sends.
	if st, err := w.session(ctx, w.StoredID(sess.ID)); err != nil {
		return err
	} else if sess.ContextTokens > 0 {
		st.context = sess.ContextTokens
	}
	if from.Records != to.Records && from.Compactions > 0 {
		if err := s.repushRecords(ctx, w, from, out); err != nil {
			return err
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
// their text with its rules, as everything it writes). Each record goes
// as this ledger holds it: a compaction with its source, its tool calls
// and its handoff (by the handoff's id on dst), and it counts in its
// session's compactions there as here.
func (s *Store) pushRecords(ctx context.Context, w *Writer, from, to pushMark, out *PushCounts) error {
	id := from.SessionID
	// Handoffs first: the compactions made for them name them by dst's ids.
	var hs []Handoff
	if err := s.db.SelectContext(ctx, &hs, `SELECT `+handoffColumns+` FROM handoffs
		WHERE session_id = $1 AND id > $2 AND id <= $3 ORDER BY id`, id, from.Handoffs, to.Handoffs); err != nil {
		return fmt.Errorf("read handoffs: %w", err)
	}
	sent := map[int64]int64{} // local handoff id: its id on dst
	for _, h := range hs {
		// The Markdown file stays on this machine: its path means nothing
		// on the others.
		var dstID int64
		if err := w.tx.GetContext(ctx, &dstID, `INSERT INTO handoffs (session_id, created_at, trigger, task, sections, markdown, tokens)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`, id, h.CreatedAt.UTC(), h.Trigger, h.Task, h.Sections, h.Markdown, h.Tokens); err != nil {
			return fmt.Errorf("insert handoff: %w", err)
		}
		sent[h.ID] = dstID
		out.Handoffs++
	}
	var comps []compactionRow
	if err := s.db.SelectContext(ctx, &comps, `SELECT `+compactionColumns+` FROM compactions
		WHERE session_id = $1 AND id > $2 AND id <= $3 ORDER BY id`, id, from.Compactions, to.Compactions); err != nil {
		return fmt.Errorf("read compactions: %w", err)
	}
	for _, c := range comps {
		handoffID, err := s.dstHandoff(ctx, w, c.HandoffID, sent)
		if err != nil {
			return err
		}
		if c.BoundaryUUID.Valid {
			b := compact.Boundary{UUID: c.BoundaryUUID.String, SessionID: id, Time: c.At,
				Trigger: c.Trigger, PreTokens: c.PreTokens.Int64, PostTokens: c.PostTokens.Int64,
				LogicalParentUUID: c.LogicalParentUUID, Summary: c.Summary}
			if c.PreservedHead != "" {
				b.Preserved = &compact.Preserved{HeadUUID: c.PreservedHead, TailUUID: c.PreservedTail, Messages: int(c.PreservedMessages)}
			}
			added, err := w.addBoundary(ctx, b, &syncedRecord{Source: c.Source, ToolCalls: c.ToolCalls, HandoffID: handoffID})
			if err != nil {
				return err
			}
			if added {
				out.Compactions++
			}
			continue
		}
		// A hook's or the cli's record: no boundary to know it by; the
		// mark keeps it from being sent twice. It counts in the session's
		// compactions (a clear is told apart by its source when read), as
		// addCompactionRecord counted it here.
		st, err := w.session(ctx, w.StoredID(id))
		if err != nil {
			return err
		}
		if st.forgotten {
			continue
		}
		if _, err := w.tx.ExecContext(ctx, `INSERT INTO compactions (session_id, logical_parent_uuid, at, trigger, pre_tokens, post_tokens, summary, source, tool_calls, handoff_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, id, c.LogicalParentUUID, c.At.UTC(), c.Trigger, c.PreTokens, c.PostTokens,
			c.Summary, c.Source, c.ToolCalls, handoffID); err != nil {
			return fmt.Errorf("insert compaction: %w", err)
		}
		st.compactions++
		out.Compactions++
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

// dstHandoff is the id on dst of the local handoff local (nil: none): one
// this push sent, else one an earlier push sent, found by its session,
// time and trigger (a handoff attached to a compaction pushed before it);
// nil when dst does not have it.
func (s *Store) dstHandoff(ctx context.Context, w *Writer, local sql.NullInt64, sent map[int64]int64) (*int64, error) {
	if !local.Valid {
		return nil, nil
	}
	if id, ok := sent[local.Int64]; ok {
		return &id, nil
	}
	var h Handoff
	err := s.db.GetContext(ctx, &h, `SELECT `+handoffColumns+` FROM handoffs WHERE id = $1`, local.Int64)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read handoff %d: %w", local.Int64, err)
	}
	var id int64
	err = w.tx.GetContext(ctx, &id, `SELECT id FROM handoffs WHERE session_id = $1 AND created_at = $2 AND trigger = $3
		ORDER BY id LIMIT 1`, h.SessionID, h.CreatedAt.UTC(), h.Trigger)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find handoff %d on the server: %w", local.Int64, err)
	}
	return &id, nil
}

// recordsPrints is, by session, a fingerprint of what of its compaction
// records can change after a push: a boundary found for a hook's record
// (with its tokens, trigger and what it kept), a summary or a post-
// compaction figure read later, a handoff attached to a record read
// before it. Sessions without records have none ("").
func (s *Store) recordsPrints(ctx context.Context) (map[string]string, error) {
	// The summary's size, not its text: octet_length reads the size
	// from the row without the summary's overflow pages (the text was
	// most of an up-to-date sync's time at 100k messages).
	rows, err := s.db.QueryxContext(ctx, `SELECT id, session_id, trigger, pre_tokens, post_tokens, octet_length(summary) AS summary,
		source, handoff_id, boundary_uuid, logical_parent_uuid, preserved_head_uuid, preserved_tail_uuid, preserved_messages
		FROM compactions ORDER BY session_id, id`)
	if err != nil {
		return nil, fmt.Errorf("sync: read compactions: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	var (
		session string
		h       hash.Hash64
	)
	flush := func() {
		if h != nil {
			out[session] = strconv.FormatUint(h.Sum64(), 36)
		}
	}
	for rows.Next() {
		var c compactionRow // its Summary holds the summary's size
		if err := rows.StructScan(&c); err != nil {
			return nil, fmt.Errorf("sync: read compactions: %w", err)
		}
		if c.SessionID != session || h == nil {
			flush()
			session, h = c.SessionID, fnv.New64a()
		}
		fmt.Fprintf(h, "%d|%s|%s|%v|%v|%s|%s|%v|%s|%s|%s|%d\n", c.ID, c.BoundaryUUID.String, c.Trigger, c.PreTokens, c.PostTokens,
			c.Summary, c.Source, c.HandoffID, c.LogicalParentUUID, c.PreservedHead, c.PreservedTail, c.PreservedMessages)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sync: read compactions: %w", err)
	}
	flush()
	return out, nil
}

// repushRecords sends again, as updates, the session's compaction records
// an earlier push sent (local ids up to from.Compactions) whose
// fingerprint has changed since: each is found on dst by its boundary, or
// else as the record without one made at the same time, and given what
// this ledger now holds of it. A record dst does not have (forgotten
// there, or removed) is left alone.
func (s *Store) repushRecords(ctx context.Context, w *Writer, from pushMark, out *PushCounts) error {
	id := from.SessionID
	st, err := w.session(ctx, w.StoredID(id))
	if err != nil {
		return err
	}
	if st.forgotten {
		return nil
	}
	var comps []compactionRow
	if err := s.db.SelectContext(ctx, &comps, `SELECT `+compactionColumns+` FROM compactions
		WHERE session_id = $1 AND id <= $2 ORDER BY id`, id, from.Compactions); err != nil {
		return fmt.Errorf("read compactions: %w", err)
	}
	for _, c := range comps {
		var dstID int64
		err := w.tx.GetContext(ctx, &dstID, `SELECT id FROM compactions WHERE session_id = $1 AND boundary_uuid = $2`, id, c.BoundaryUUID.String)
		if !c.BoundaryUUID.Valid || errors.Is(err, sql.ErrNoRows) {
			err = w.tx.GetContext(ctx, &dstID, `SELECT id FROM compactions WHERE session_id = $1 AND boundary_uuid IS NULL AND at = $2
				ORDER BY id LIMIT 1`, id, c.At.UTC())
		}
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return fmt.Errorf("find compaction %d on the server: %w", c.ID, err)
		}
		handoffID, err := s.dstHandoff(ctx, w, c.HandoffID, nil)
		if err != nil {
			return err
		}
		var boundary any
		if c.BoundaryUUID.Valid {
			boundary = c.BoundaryUUID.String
		}
		// dst is PostgreSQL: each parameter's type is said where the
		// statement alone does not tell it.
		res, err := w.tx.ExecContext(ctx, `UPDATE compactions SET boundary_uuid = CAST($1 AS TEXT), logical_parent_uuid = $2, trigger = $3,
			pre_tokens = CAST($4 AS BIGINT), post_tokens = coalesce(CAST($5 AS BIGINT), post_tokens),
			summary = CASE WHEN $6 <> '' THEN $6 ELSE summary END,
			source = $7, handoff_id = coalesce(CAST($8 AS BIGINT), handoff_id), preserved_head_uuid = $9, preserved_tail_uuid = $10, preserved_messages = $11
			WHERE id = $12 AND (boundary_uuid IS DISTINCT FROM CAST($1 AS TEXT) OR logical_parent_uuid <> $2 OR trigger <> $3
				OR pre_tokens IS DISTINCT FROM CAST($4 AS BIGINT) OR post_tokens IS DISTINCT FROM coalesce(CAST($5 AS BIGINT), post_tokens)
				OR ($6 <> '' AND summary <> $6) OR source <> $7 OR handoff_id IS DISTINCT FROM coalesce(CAST($8 AS BIGINT), handoff_id)
				OR preserved_head_uuid <> $9 OR preserved_tail_uuid <> $10 OR preserved_messages <> $11)`,
			boundary, c.LogicalParentUUID, c.Trigger, c.PreTokens, c.PostTokens, c.Summary, c.Source, handoffID,
			c.PreservedHead, c.PreservedTail, c.PreservedMessages, dstID)
		if err != nil {
			return fmt.Errorf("update compaction %d on the server: %w", c.ID, err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			out.Compactions++
		}
	}
	return nil
}
