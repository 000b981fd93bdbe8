-- What Claude Code 2.1.3x records beside the conversation (issue 27):
--   sessions: the session's cost as its agent reports it (cost-state: the
--     spend at list prices, lines its edits added and removed; NULL when
--     the agent reports none, as Codex does)
--   compactions: the part of the conversation a partial compaction kept
--     verbatim (compactMetadata.preservedSegment: its first and last
--     message; preservedMessages: how many), '' and 0 for none

-- +goose Up
ALTER TABLE sessions ADD COLUMN cost_usd REAL;
ALTER TABLE sessions ADD COLUMN lines_added INTEGER;
ALTER TABLE sessions ADD COLUMN lines_removed INTEGER;
ALTER TABLE compactions ADD COLUMN preserved_head_uuid TEXT NOT NULL DEFAULT '';
ALTER TABLE compactions ADD COLUMN preserved_tail_uuid TEXT NOT NULL DEFAULT '';
ALTER TABLE compactions ADD COLUMN preserved_messages INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE compactions DROP COLUMN preserved_messages;
ALTER TABLE compactions DROP COLUMN preserved_tail_uuid;
ALTER TABLE compactions DROP COLUMN preserved_head_uuid;
ALTER TABLE sessions DROP COLUMN lines_removed;
ALTER TABLE sessions DROP COLUMN lines_added;
ALTER TABLE sessions DROP COLUMN cost_usd;
