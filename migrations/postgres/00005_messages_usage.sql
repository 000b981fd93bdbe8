-- The SQLite schema's 00011 in PostgreSQL's terms: the usage of each API
-- response by session, for the session list's peak context.

-- +goose Up
CREATE INDEX messages_usage ON messages (session_id, sidechain, output_tokens, input_tokens, cache_creation_tokens, cache_read_tokens)
    WHERE output_tokens IS NOT NULL AND sidechain = 0;

-- +goose Down
DROP INDEX messages_usage;
