package store

import (
	"context"
	"fmt"
	"time"
)

// HookReceipt is the record of one hook run: the event, the session it
// ran for ("" when the input named none), when it started and how long it
// took, its outcome and, in a sentence, what it did or why it did nothing
// or what it left for later.
type HookReceipt struct {
	ID        int64     `db:"id" json:"id"`
	SessionID string    `db:"session_id" json:"session"`
	Event     string    `db:"event" json:"event"`
	At        time.Time `db:"at" json:"at"`
	MS        int64     `db:"ms" json:"ms"`
	// Outcome is one of the Outcome constants.
	Outcome string `db:"outcome" json:"outcome"`
	Detail  string `db:"detail" json:"detail"`
}

// Hook outcomes.
const (
	OutcomeOK       = "ok"       // the event's work is done
	OutcomeNothing  = "nothing"  // nothing to do; Detail says why
	OutcomeDeferred = "deferred" // part of the work is left for later; Detail says what
	OutcomeFailed   = "failed"   // it failed open; Detail is the warning
	OutcomeBlocked  = "blocked"  // clear mode blocked the compaction
	OutcomeTimeout  = "timeout"  // the budget ran out before the work ended
)

// AddHookReceipt stores a receipt. It waits for the write lock no longer
// than ctx allows (WithLockDeadline): a caller in a hurry keeps the
// receipt elsewhere when it fails.
func (s *Store) AddHookReceipt(ctx context.Context, r HookReceipt) error {
	tx, done, err := s.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("add hook receipt: %w", err)
	}
	defer done()
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO hook_receipts (session_id, event, at, ms, outcome, detail)
		VALUES ($1, $2, $3, $4, $5, $6)`, r.SessionID, r.Event, r.At.UTC(), r.MS, r.Outcome, r.Detail); err != nil {
		return fmt.Errorf("add hook receipt: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("add hook receipt: %w", err)
	}
	return nil
}

// ReceiptFilter selects hook receipts: of one session ("" for all), at or
// after Since (zero for any time), at most Limit (0 for all), newest first.
type ReceiptFilter struct {
	SessionID string
	Since     time.Time
	Limit     int
}

// HookReceipts lists hook receipts, newest first.
func (s *Store) HookReceipts(ctx context.Context, f ReceiptFilter) ([]HookReceipt, error) {
	var q query
	q.add(`SELECT id, session_id, event, at, ms, outcome, detail FROM hook_receipts WHERE at >= ` + q.arg(f.Since.UTC()))
	if f.SessionID != "" {
		q.add(` AND session_id = ` + q.arg(f.SessionID))
	}
	q.add(` ORDER BY at DESC, id DESC`)
	if f.Limit > 0 {
		q.add(` LIMIT ` + q.arg(f.Limit))
	}
	out := []HookReceipt{}
	if err := s.db.SelectContext(ctx, &out, q.String(), q.args...); err != nil {
		return nil, fmt.Errorf("list hook receipts: %w", err)
	}
	for i := range out {
		out[i].At = out[i].At.UTC()
	}
	return out, nil
}
