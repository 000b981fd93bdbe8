package store

import (
	"context"
	"fmt"
)

// FTSSegments counts the segments of each full-text index: each ingest
// transaction adds one and FTS5 merges them as they pile up, so a count in
// the hundreds says searches read many b-trees (ledger doctor --rebuild
// merges each index into one). On PostgreSQL, whose GIN indexes have no
// segments to merge, it is empty.
func (s *Store) FTSSegments(ctx context.Context) (map[string]int64, error) {
	return s.d.ftsSegments(ctx, s.db)
}

// LastHookReceipts is the newest receipt of each hook event, by event.
func (s *Store) LastHookReceipts(ctx context.Context) ([]HookReceipt, error) {
	out := []HookReceipt{}
	if err := s.db.SelectContext(ctx, &out, `SELECT id, session_id, event, at, ms, outcome, detail FROM hook_receipts
		WHERE id IN (SELECT max(id) FROM hook_receipts GROUP BY event) ORDER BY event`); err != nil {
		return nil, fmt.Errorf("last hook receipts: %w", err)
	}
	for i := range out {
		out[i].At = out[i].At.UTC()
	}
	return out, nil
}
