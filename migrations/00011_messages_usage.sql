-- The usage of each API response, by session: the session list's peak
-- context (Store.PeakContexts) reads it from this index alone instead of
-- every message of the sessions listed (50 sessions of 1,000 messages:
-- about 60 MB of message pages). Partial: only the lines that keep a
-- response's usage, about half of the messages; sidechain and output_tokens
-- are in it so that the query's conditions are read from the index too.

-- +goose Up
CREATE INDEX messages_usage ON messages (session_id, sidechain, output_tokens, input_tokens, cache_creation_tokens, cache_read_tokens)
    WHERE output_tokens IS NOT NULL AND sidechain = 0;

-- +goose Down
DROP INDEX messages_usage;
