-- The SQLite schema's 00010 in PostgreSQL's terms: a session's cost as its
-- agent reports it (NULL when none), and the part of the conversation a
-- partial compaction kept verbatim.

-- +goose Up
ALTER TABLE sessions ADD COLUMN cost_usd DOUBLE PRECISION;
ALTER TABLE sessions ADD COLUMN lines_added BIGINT;
ALTER TABLE sessions ADD COLUMN lines_removed BIGINT;
ALTER TABLE compactions ADD COLUMN preserved_head_uuid TEXT NOT NULL DEFAULT '';
ALTER TABLE compactions ADD COLUMN preserved_tail_uuid TEXT NOT NULL DEFAULT '';
ALTER TABLE compactions ADD COLUMN preserved_messages BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE compactions DROP COLUMN preserved_messages;
ALTER TABLE compactions DROP COLUMN preserved_tail_uuid;
ALTER TABLE compactions DROP COLUMN preserved_head_uuid;
ALTER TABLE sessions DROP COLUMN lines_removed;
ALTER TABLE sessions DROP COLUMN lines_added;
ALTER TABLE sessions DROP COLUMN cost_usd;
