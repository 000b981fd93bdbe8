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

// SettleSearch files into the full-text indexes what a big write (an
// ingest, a sync) left pending, so that the searches after it do not each
// read it: on PostgreSQL, the GIN indexes' pending lists. A search read
// the whole list for every query: 70-100 ms instead of 10 ms for a rare
// word at 100k messages right after an ingest (up to 4 MB of pending
// entries, until autovacuum gets to the table). It is the work the next
// flush of the list would have done (about 50 ms after an ingest of 100k
// messages). Filing a pending list is for the index's owner: under
// another role it does nothing, and the hooks' own limit on the list
// (pgBegin) bounds what is left. Nothing to do on SQLite.
func (s *Store) SettleSearch(ctx context.Context) error {
	return s.d.settleSearch(ctx, s.db)
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
