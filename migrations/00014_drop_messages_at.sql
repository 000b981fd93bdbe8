-- messages_at (a message's time) served no query: every read of messages
-- by time is within one session (messages_session_seq), and search finds
-- messages through the full-text index, its --since and --until checked on
-- the rows found (EXPLAIN QUERY PLAN: the FTS5 scan, then each row by its
-- id). It cost every ingest a b-tree insert per message at a place all
-- over the index (sessions read one after another overlap in time): at a
-- million messages, pages outside the ingest's page cache, read and
-- written again by each transaction. PostgreSQL keeps its own (its planner
-- may combine it with the text index).

-- +goose Up
DROP INDEX messages_at;

-- +goose Down
CREATE INDEX messages_at ON messages (at);
