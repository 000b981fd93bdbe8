package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Compaction is one compaction of a session: read from its transcript, or
// recorded by the PreCompact hook or `ledger compact`. (What it does not
// know: see the package doc.)
type Compaction struct {
	ID        int64
	SessionID string
	At        time.Time
	Trigger   string
	// PreTokens and PostTokens are the context before and after it, nil
	// when its agent did not say.
	PreTokens, PostTokens *int64
	Summary               string
	Source                string
	// HandoffID is the handoff written for it, nil for none.
	HandoffID *int64
	ToolCalls int64
	// BoundaryUUID is the transcript's compact_boundary ('' for a hook or
	// cli record no boundary completed); LogicalParentUUID is the last
	// message before the cut, which may be absent from the ledger.
	BoundaryUUID      string
	LogicalParentUUID string
	// PreservedHead and PreservedTail are the first and last message of
	// the part of the conversation a partial compaction kept verbatim,
	// PreservedMessages how many messages it kept ('' and 0: none).
	PreservedHead     string
	PreservedTail     string
	PreservedMessages int64
}

// compactionRow is a compactions row as both backends scan it.
type compactionRow struct {
	ID                int64          `db:"id"`
	SessionID         string         `db:"session_id"`
	At                time.Time      `db:"at"`
	Trigger           string         `db:"trigger"`
	PreTokens         sql.NullInt64  `db:"pre_tokens"`
	PostTokens        sql.NullInt64  `db:"post_tokens"`
	Summary           string         `db:"summary"`
	Source            string         `db:"source"`
	HandoffID         sql.NullInt64  `db:"handoff_id"`
	ToolCalls         int64          `db:"tool_calls"`
	BoundaryUUID      sql.NullString `db:"boundary_uuid"`
	LogicalParentUUID string         `db:"logical_parent_uuid"`
	PreservedHead     string         `db:"preserved_head_uuid"`
	PreservedTail     string         `db:"preserved_tail_uuid"`
	PreservedMessages int64          `db:"preserved_messages"`
}

func (r compactionRow) compaction() Compaction {
	return Compaction{ID: r.ID, SessionID: r.SessionID, At: r.At.UTC(), Trigger: r.Trigger,
		PreTokens: int64Ptr(r.PreTokens), PostTokens: int64Ptr(r.PostTokens), Summary: r.Summary, Source: r.Source,
		HandoffID: int64Ptr(r.HandoffID), ToolCalls: r.ToolCalls, BoundaryUUID: r.BoundaryUUID.String,
		LogicalParentUUID: r.LogicalParentUUID, PreservedHead: r.PreservedHead, PreservedTail: r.PreservedTail,
		PreservedMessages: r.PreservedMessages}
}

const compactionColumns = `id, session_id, at, trigger, pre_tokens, post_tokens, summary, source, handoff_id, tool_calls,
	boundary_uuid, logical_parent_uuid, preserved_head_uuid, preserved_tail_uuid, preserved_messages`

// CompactionFilter narrows the compaction history.
type CompactionFilter struct {
	SessionID string    // one session (a full id)
	Since     time.Time // at or after
}

// Compactions lists compactions, oldest first; those of one second in the
// order of their sessions' ids, then their own (the same order on every
// ledger that holds them).
func (s *Store) Compactions(ctx context.Context, f CompactionFilter) ([]Compaction, error) {
	var q query
	q.add(`SELECT ` + compactionColumns + ` FROM compactions WHERE 1 = 1`)
	if f.SessionID != "" {
		q.add(` AND session_id = ` + q.arg(f.SessionID))
	}
	if !f.Since.IsZero() {
		q.add(` AND at >= ` + q.arg(f.Since.UTC()))
	}
	q.add(` ORDER BY at, session_id, id`)
	var rows []compactionRow
	if err := s.db.SelectContext(ctx, &rows, q.String(), q.args...); err != nil {
		return nil, fmt.Errorf("list compactions: %w", err)
	}
	out := make([]Compaction, len(rows))
	for i, r := range rows {
		out[i] = r.compaction()
	}
	return out, nil
}

// LastCompaction is a session's newest compaction by its agent and how
// many it went through (0, and a zero Compaction, when none): what a
// resume says of them, without reading every summary. The clears `ledger
// compact` recorded are not compactions.
func (s *Store) LastCompaction(ctx context.Context, sessionID string) (Compaction, int, error) {
	var n int
	if err := s.db.GetContext(ctx, &n, `SELECT COUNT(*) FROM compactions WHERE session_id = $1 AND source <> 'cli'`, sessionID); err != nil {
		return Compaction{}, 0, fmt.Errorf("count compactions: %w", err)
	}
	if n == 0 {
		return Compaction{}, 0, nil
	}
	var c compactionRow
	err := s.db.GetContext(ctx, &c, `SELECT `+compactionColumns+` FROM compactions WHERE session_id = $1 AND source <> 'cli'
		ORDER BY at DESC, id DESC LIMIT 1`, sessionID)
	if err != nil {
		return Compaction{}, 0, fmt.Errorf("read the last compaction: %w", err)
	}
	return c.compaction(), n, nil
}

// CompactionByID returns one compaction, or ErrNotFound.
func (s *Store) CompactionByID(ctx context.Context, id int64) (Compaction, error) {
	var c compactionRow
	err := s.db.GetContext(ctx, &c, `SELECT `+compactionColumns+` FROM compactions WHERE id = $1`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return Compaction{}, fmt.Errorf("no compaction %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Compaction{}, fmt.Errorf("read compaction %d: %w", id, err)
	}
	return c.compaction(), nil
}

// CutSeq is the seq of the last message of the session's main
// conversation before a compaction's cut: the boundary's logical parent
// when the ledger holds it, else the message before the first one that
// follows the boundary (the summary, whose parent is the boundary), else
// the last message at or before the compaction's time. ok is false when
// no message precedes the cut.
func (s *Store) CutSeq(ctx context.Context, c Compaction) (seq int64, ok bool, err error) {
	var v sql.NullInt64
	q := func(query string, args ...any) error {
		if v.Valid {
			return nil
		}
		return s.db.GetContext(ctx, &v, query, args...)
	}
	if c.LogicalParentUUID != "" {
		err = q(`SELECT max(seq) FROM messages WHERE session_id = $1 AND uuid = $2`, c.SessionID, c.LogicalParentUUID)
	}
	if err == nil && c.BoundaryUUID != "" {
		err = q(`SELECT min(seq) - 1 FROM messages WHERE session_id = $1 AND parent_uuid = $2`, c.SessionID, c.BoundaryUUID)
	}
	if err == nil {
		err = q(`SELECT max(seq) FROM messages WHERE session_id = $1 AND sidechain = 0 AND at <= $2`, c.SessionID, c.At.UTC())
	}
	if err != nil {
		return 0, false, fmt.Errorf("find the cut of compaction %d: %w", c.ID, err)
	}
	return v.Int64, v.Valid && v.Int64 >= 0, nil
}

// PreservedText is the text of the messages a partial compaction kept
// verbatim (from its preserved head to its tail, the main conversation
// only), "" when it kept none or the ledger does not hold them.
func (s *Store) PreservedText(ctx context.Context, c Compaction) (string, error) {
	if c.PreservedHead == "" || c.PreservedTail == "" {
		return "", nil
	}
	var texts []string
	err := s.db.SelectContext(ctx, &texts, `SELECT text FROM messages WHERE session_id = $1 AND sidechain = 0
		AND seq BETWEEN (SELECT min(seq) FROM messages WHERE session_id = $1 AND uuid = $2)
		AND (SELECT max(seq) FROM messages WHERE session_id = $1 AND uuid = $3) ORDER BY seq`,
		c.SessionID, c.PreservedHead, c.PreservedTail)
	if err != nil {
		return "", fmt.Errorf("read what compaction %d kept: %w", c.ID, err)
	}
	return strings.Join(texts, "\n"), nil
}

// Mark sets a one-off marker of a session and reports whether it was not
// set before (hook thresholds are announced once).
func (s *Store) Mark(ctx context.Context, sessionID, name string) (bool, error) {
	res, err := s.db.ExecContext(ctx, `INSERT INTO session_marks (session_id, name, at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
		sessionID, name, time.Now().UTC())
	if err != nil {
		return false, fmt.Errorf("mark %s: %w", name, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}
