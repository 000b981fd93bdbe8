package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Compaction is one compaction of a session: read from its transcript, or
// recorded by the PreCompact hook or `ledger compact`.
type Compaction struct {
	ID         int64         `db:"id"`
	SessionID  string        `db:"session_id"`
	At         time.Time     `db:"at"`
	Trigger    string        `db:"trigger"`
	PreTokens  sql.NullInt64 `db:"pre_tokens"`
	PostTokens sql.NullInt64 `db:"post_tokens"`
	Summary    string        `db:"summary"`
	Source     string        `db:"source"`
	HandoffID  sql.NullInt64 `db:"handoff_id"`
	ToolCalls  int64         `db:"tool_calls"`
}

// CompactionFilter narrows the compaction history.
type CompactionFilter struct {
	SessionID string    // one session (a full id)
	Since     time.Time // at or after
}

// Compactions lists compactions, oldest first.
func (s *Store) Compactions(ctx context.Context, f CompactionFilter) ([]Compaction, error) {
	q := `SELECT id, session_id, at, trigger, pre_tokens, post_tokens, summary, source, handoff_id, tool_calls
		FROM compactions WHERE 1 = 1`
	var args []any
	if f.SessionID != "" {
		q += ` AND session_id = ?`
		args = append(args, f.SessionID)
	}
	if !f.Since.IsZero() {
		q += ` AND at >= ?`
		args = append(args, f.Since.UTC())
	}
	q += ` ORDER BY at, id`
	var out []Compaction
	if err := s.db.SelectContext(ctx, &out, q, args...); err != nil {
		return nil, fmt.Errorf("list compactions: %w", err)
	}
	for i := range out {
		out[i].At = out[i].At.UTC()
	}
	return out, nil
}

// Mark sets a one-off marker of a session and reports whether it was not
// set before (hook thresholds are announced once).
func (s *Store) Mark(ctx context.Context, sessionID, name string) (bool, error) {
	res, err := s.db.ExecContext(ctx, `INSERT INTO session_marks (session_id, name, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`,
		sessionID, name, time.Now().UTC())
	if err != nil {
		return false, fmt.Errorf("mark %s: %w", name, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}
