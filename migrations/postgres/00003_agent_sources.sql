-- A session's source is any agent ledger reads, as in the SQLite schema's
-- 00009: the CHECK on sessions.source goes.

-- +goose Up
ALTER TABLE sessions DROP CONSTRAINT IF EXISTS sessions_source_check;

-- +goose Down
ALTER TABLE sessions ADD CONSTRAINT sessions_source_check CHECK (source IN ('claude', 'codex'));
