package store

import (
	"context"
	"fmt"
)

// FTSSegments counts the segments of each full-text index: each ingest
// transaction adds one and FTS5 merges them as they pile up, so a count in
// the hundreds says searches read many b-trees (ledger doctor --rebuild
// merges each index into one).
func (s *Store) FTSSegments(ctx context.Context) (map[string]int64, error) {
	out := map[string]int64{}
	if s.pg {
		return out, nil // GIN indexes have no segments to merge
	}
	for _, t := range ftsTables {
		var n int64
		if err := s.db.GetContext(ctx, &n, `SELECT count(DISTINCT segid) FROM `+t+`_idx`); err != nil {
			return nil, fmt.Errorf("count segments of %s: %w", t, err)
		}
		out[t] = n
	}
	return out, nil
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
