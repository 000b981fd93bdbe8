-- ledger sync: each session's count of messages added and a fingerprint
-- of its compaction records, as the origin held them at its last push.
-- A count still the same tells a push nothing was added, without looking
-- for the session's largest message id (-1: a mark an older ledger left).
-- A record can be completed after it was pushed (a PreCompact hook's
-- record, by the transcript's boundary; a handoff attached to a
-- compaction read before it): a push whose fingerprint differs sends the
-- session's earlier records again, as updates.

-- +goose Up
ALTER TABLE sync_marks ADD COLUMN records TEXT NOT NULL DEFAULT '';
ALTER TABLE sync_marks ADD COLUMN messages BIGINT NOT NULL DEFAULT -1;

-- +goose Down
ALTER TABLE sync_marks DROP COLUMN messages;
ALTER TABLE sync_marks DROP COLUMN records;
