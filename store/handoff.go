package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agentledger/ledger/handoff"
)

// Handoff is a stored handoff.
type Handoff struct {
	ID        int64     `db:"id"`
	SessionID string    `db:"session_id"`
	CreatedAt time.Time `db:"created_at"`
	Trigger   string    `db:"trigger"`
	Task      string    `db:"task"`
	Sections  string    `db:"sections"` // the whole document as JSON
	Markdown  string    `db:"markdown"`
	Tokens    int       `db:"tokens"`
	Path      string    `db:"path"`
}

// Doc decodes the stored document, with the stored id, Markdown and tokens.
func (h Handoff) Doc() (handoff.Doc, error) {
	var d handoff.Doc
	if err := decodeJSON(h.Sections, &d); err != nil {
		return d, fmt.Errorf("decode handoff %d: %w", h.ID, err)
	}
	d.ID = h.ID
	d.Markdown, d.Tokens = h.Markdown, h.Tokens
	d.CreatedAt = h.CreatedAt.UTC()
	return d, nil
}

// CompactionRecord is a compaction recorded by ledger itself (the
// PreCompact hook, or `ledger compact`) rather than read from a transcript.
type CompactionRecord struct {
	Source    string // "hook" or "cli"
	Trigger   string
	At        time.Time
	PreTokens int64 // 0: unknown
	// LogicalParent is the point of the transcript the record was made at:
	// the session's last message, or the boundary of a compaction that
	// came right after it (TranscriptPoint). The transcript's
	// compact_boundary names the same point as its logicalParentUuid,
	// which is how the two are matched.
	LogicalParent string
	// Debounce, when set, makes the record one per compaction. A
	// compaction is one point of the transcript: nothing is written when
	// the session has a record of the same source at the same
	// LogicalParent that the transcript's compaction has not completed yet,
	// however long ago (Claude Code may fire PreCompact more than once for
	// one compaction; a record the transcript completed was for a
	// compaction that happened). Only a record with no LogicalParent (no
	// message yet) falls back on time: one of the same source made less
	// than Debounce before At, not completed yet. And a compaction the
	// transcript recorded at LogicalParent at or after At is this one (its
	// row waited for the write lock while the compaction was read): it
	// gets the handoff, or, when it has one, nothing is written.
	Debounce time.Duration
	// Attach, when set, is for agents that record a compaction before
	// their pre-compaction event fires (OpenCode and Kilo store the
	// compaction part first): the session's compaction read from its
	// transcript less than Attach before At, when there is one, is this
	// compaction. It gets the handoff (and becomes a hook record completed
	// from the transcript) instead of a record of its own; when it has a
	// handoff already, nothing is written, as with Debounce.
	Attach time.Duration
	// Boundary, when set, is the boundary of the transcript's compaction
	// this one is: for Pi, which compacts no branch that ends with a
	// compaction, a pre-compaction event at a point such a compaction
	// follows is that compaction's, fired again. It gets the handoff, as
	// with Attach; when it has one, nothing is written.
	Boundary string
}

// NewHandoff is a handoff to store, with the compaction record made for it.
type NewHandoff struct {
	Doc    handoff.Doc
	Path   string            // the Markdown file written for it, "" for none
	Record *CompactionRecord // nil: the handoff alone
	// BeforeCommit, when set, runs inside the transaction once the rows
	// are in (the caller writes the handoff file there, so that the file
	// exists exactly when its row does). It returns the path of the file
	// as written, which the row then holds (a name taken may have made
	// the caller choose another than Path). Its error rolls everything
	// back.
	BeforeCommit func() (path string, err error)
}

// AddHandoff stores a handoff and its compaction record in one immediate
// transaction, and returns the handoff's id. With Record.Debounce the check
// for an earlier record of the same compaction is made in that transaction
// too, so that writers racing for one compaction leave one handoff and one
// record: the others write nothing and get the id of the handoff already
// there, with written false.
func (s *Store) AddHandoff(ctx context.Context, h NewHandoff) (id int64, written bool, err error) {
	// A handoff is made of messages already redacted, but a --task given
	// on the command line, or a handoff from elsewhere, may carry a secret.
	h.Doc = s.RedactHandoff(h.Doc)
	sections, err := json.Marshal(h.Doc)
	if err != nil {
		return 0, false, fmt.Errorf("encode handoff: %w", err)
	}
	err = Retry(ctx, func() error {
		id, written, err = s.addHandoff(ctx, h, string(sections))
		return err
	})
	return id, written, err
}

func (s *Store) addHandoff(ctx context.Context, h NewHandoff, sections string) (int64, bool, error) {
	tx, done, err := s.beginWrite(ctx)
	if err != nil {
		return 0, false, fmt.Errorf("begin: %w", err)
	}
	defer done()
	defer tx.Rollback()
	if rec := h.Record; rec != nil && rec.Debounce > 0 {
		id, found, err := sameCompaction(ctx, tx, h.Doc.Session, *rec)
		if err != nil || found {
			return id, false, err
		}
	}
	var attach int64
	if rec := h.Record; rec != nil {
		row, found, err := compactionOf(ctx, tx, h.Doc.Session, *rec)
		switch {
		case err != nil:
			return 0, false, err
		case found && row.Handoff.Valid:
			return row.Handoff.Int64, false, nil
		case found:
			attach = row.ID
		}
	}
	d := h.Doc
	// RETURNING rather than LastInsertId: PostgreSQL has no last insert id.
	var id int64
	err = tx.GetContext(ctx, &id, `INSERT INTO handoffs (session_id, created_at, trigger, task, sections, markdown, tokens, path)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`, d.Session, d.CreatedAt.UTC(), d.Trigger, d.Task, sections, d.Markdown, d.Tokens, h.Path)
	if err != nil {
		return 0, false, fmt.Errorf("insert handoff: %w", err)
	}
	switch {
	case attach != 0:
		if _, err := tx.ExecContext(ctx, `UPDATE compactions SET handoff_id = $1, source = 'hook' WHERE id = $2`, id, attach); err != nil {
			return 0, false, fmt.Errorf("attach the handoff to its compaction: %w", err)
		}
	case h.Record != nil:
		if err := addCompactionRecord(ctx, tx, d.Session, id, *h.Record); err != nil {
			return 0, false, err
		}
	}
	if h.BeforeCommit != nil {
		path, err := h.BeforeCommit()
		if err != nil {
			return 0, false, err
		}
		if path != h.Path {
			if _, err := tx.ExecContext(ctx, `UPDATE handoffs SET path = $1 WHERE id = $2`, path, id); err != nil {
				return 0, false, fmt.Errorf("handoff path: %w", err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, false, fmt.Errorf("commit handoff: %w", err)
	}
	return id, true, nil
}

// sameCompaction finds the session's record of the compaction rec is
// about, and its handoff: one of the same source at the same point of the
// transcript (rec.LogicalParent), or, for a record of no point, one made
// less than rec.Debounce before it; either not yet completed by the
// transcript's compaction (a PreCompact after that is the next
// compaction's).
func sameCompaction(ctx context.Context, tx *sqlx.Tx, session string, rec CompactionRecord) (int64, bool, error) {
	var h sql.NullInt64
	var err error
	if rec.LogicalParent != "" {
		err = tx.GetContext(ctx, &h, `SELECT handoff_id FROM compactions
			WHERE session_id = $1 AND source = $2 AND logical_parent_uuid = $3 AND boundary_uuid IS NULL
			ORDER BY at DESC, id DESC LIMIT 1`, session, rec.Source, rec.LogicalParent)
	} else {
		err = tx.GetContext(ctx, &h, `SELECT handoff_id FROM compactions
			WHERE session_id = $1 AND source = $2 AND at >= $3 AND boundary_uuid IS NULL
			ORDER BY at DESC, id DESC LIMIT 1`, session, rec.Source, rec.At.Add(-rec.Debounce).UTC())
	}
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("find the %s record of this compaction: %w", rec.Source, err)
	}
	return h.Int64, true, nil
}

// joinable is a compaction row a handoff may join.
type joinable struct {
	ID      int64         `db:"id"`
	Handoff sql.NullInt64 `db:"handoff_id"`
}

// compactionOf finds the compaction the transcript recorded already that
// rec is about, if any: the one of rec.Boundary; for a PreCompact record
// (Debounce), one the transcript recorded at rec's point at or after the
// time rec was made (a PreCompact whose row waited for the write lock
// while the compaction was read: one compaction, one record); with
// rec.Attach, the latest one read less than Attach before rec.
func compactionOf(ctx context.Context, tx *sqlx.Tx, session string, rec CompactionRecord) (joinable, bool, error) {
	var row joinable
	var err error
	switch {
	case rec.Boundary != "":
		err = tx.GetContext(ctx, &row, `SELECT id, handoff_id FROM compactions
			WHERE session_id = $1 AND boundary_uuid = $2 ORDER BY id DESC LIMIT 1`, session, rec.Boundary)
	case rec.Debounce > 0 && rec.LogicalParent != "":
		err = tx.GetContext(ctx, &row, `SELECT id, handoff_id FROM compactions
			WHERE session_id = $1 AND logical_parent_uuid = $2 AND boundary_uuid IS NOT NULL AND at >= $3
			ORDER BY at, id LIMIT 1`, session, rec.LogicalParent, rec.At.UTC())
		if errors.Is(err, sql.ErrNoRows) && rec.Attach > 0 {
			return compactionOf(ctx, tx, session, CompactionRecord{At: rec.At, Attach: rec.Attach})
		}
	case rec.Attach > 0:
		err = tx.GetContext(ctx, &row, `SELECT id, handoff_id FROM compactions
			WHERE session_id = $1 AND source IN ('transcript', 'hook') AND boundary_uuid IS NOT NULL AND at >= $2
			ORDER BY at DESC LIMIT 1`, session, rec.At.Add(-rec.Attach).UTC())
	default:
		return row, false, nil
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return row, false, nil
	case err != nil:
		return row, false, fmt.Errorf("find the compaction read already: %w", err)
	}
	return row, true, nil
}

// maxBoundaryChain bounds the walk of TranscriptPoint: compactions back to
// back with no message between them are a handful at most.
const maxBoundaryChain = 16

// TranscriptPoint is the point of a session's transcript just after its
// message uuid: that message, or, when compactions came right after it
// with no message between them (Codex compacting twice in a row), the
// boundary of the last of those. A compaction made now follows that
// point, and its boundary will name it as its logical parent.
func (s *Store) TranscriptPoint(ctx context.Context, session, uuid string) (string, error) {
	point := uuid
	for range maxBoundaryChain {
		if point == "" {
			return "", nil
		}
		var next sql.NullString
		err := s.db.GetContext(ctx, &next, `SELECT boundary_uuid FROM compactions
			WHERE session_id = $1 AND logical_parent_uuid = $2 AND boundary_uuid IS NOT NULL AND boundary_uuid <> $2
			ORDER BY at DESC, id DESC LIMIT 1`, session, point)
		if errors.Is(err, sql.ErrNoRows) {
			return point, nil
		}
		if err != nil {
			return "", fmt.Errorf("find the transcript point after %s: %w", point, err)
		}
		point = next.String
	}
	return point, nil
}

// addCompactionRecord inserts a hook or cli compaction; its tool_calls are
// the session's calls since the previous compaction.
func addCompactionRecord(ctx context.Context, tx execer, session string, handoffID int64, rec CompactionRecord) error {
	var pre any
	if rec.PreTokens > 0 {
		pre = rec.PreTokens
	}
	_, err := tx.ExecContext(ctx, `
		INSERT INTO compactions (session_id, at, trigger, pre_tokens, source, handoff_id, logical_parent_uuid, tool_calls)
		SELECT $1, $2, $3, $4, $5, $6, $7, s.tool_calls - coalesce((SELECT sum(tool_calls) FROM compactions WHERE session_id = s.id), 0)
		FROM sessions s WHERE s.id = $8`,
		session, rec.At.UTC(), rec.Trigger, pre, rec.Source, handoffID, rec.LogicalParent, session)
	if err != nil {
		return fmt.Errorf("insert compaction record: %w", err)
	}
	_, err = tx.ExecContext(ctx, `UPDATE sessions SET compactions = compactions + 1 WHERE id = $1`, session)
	return err
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

const handoffColumns = `id, session_id, created_at, trigger, task, sections, markdown, tokens, path`

// Handoffs lists handoffs, newest first: one session's, or every one when
// sessionID is "". Handoffs of one second are in the order of their
// sessions' ids, then their own: the same order on every ledger that holds
// them (a team ledger numbers rows in the order they reached it).
func (s *Store) Handoffs(ctx context.Context, sessionID string, limit int) ([]Handoff, error) {
	var q query
	q.add(`SELECT ` + handoffColumns + ` FROM handoffs`)
	if sessionID != "" {
		q.add(` WHERE session_id = ` + q.arg(sessionID))
	}
	q.add(` ORDER BY created_at DESC, session_id DESC, id DESC`)
	if limit > 0 {
		q.add(` LIMIT ` + q.arg(limit))
	}
	var out []Handoff
	if err := s.db.SelectContext(ctx, &out, q.String(), q.args...); err != nil {
		return nil, fmt.Errorf("list handoffs: %w", err)
	}
	for i := range out {
		out[i].CreatedAt = out[i].CreatedAt.UTC()
	}
	return out, nil
}

// Handoff returns the handoff with this id, or ErrNotFound.
func (s *Store) Handoff(ctx context.Context, id int64) (Handoff, error) {
	var h Handoff
	err := s.db.GetContext(ctx, &h, `SELECT `+handoffColumns+` FROM handoffs WHERE id = $1`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return h, fmt.Errorf("no handoff %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return h, fmt.Errorf("read handoff %d: %w", id, err)
	}
	h.CreatedAt = h.CreatedAt.UTC()
	return h, nil
}

// LatestHandoff returns the session's newest handoff, or ErrNotFound.
func (s *Store) LatestHandoff(ctx context.Context, sessionID string) (Handoff, error) {
	hs, err := s.Handoffs(ctx, sessionID, 1)
	if err != nil {
		return Handoff{}, err
	}
	if len(hs) == 0 {
		return Handoff{}, fmt.Errorf("no handoff for session %s: %w", sessionID, ErrNotFound)
	}
	return hs[0], nil
}
