-- ledger sync: a fingerprint of each session's compaction records as the
-- origin held them at its last push. A record can be completed after it
-- was pushed (a PreCompact hook's record, by the transcript's boundary; a
-- handoff attached to a compaction read before it): a push whose
-- fingerprint differs sends the session's earlier records again, as
-- updates.

-- +goose Up
ALTER TABLE sync_marks ADD COLUMN records TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE sync_marks DROP COLUMN records;
