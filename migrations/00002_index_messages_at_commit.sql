-- Messages are indexed by the ingest transaction that adds them, in one
-- statement just before it commits (store.Writer, the only code that inserts
-- messages): FTS5 flushes its pending terms at every statement, so an
-- AFTER INSERT trigger run per row would flush (and merge) once per message.
-- This replaces 00001's fts_defer row, a database-wide switch every ingest
-- transaction set and reset so that the trigger would stand aside: the
-- deferral is now the writer's own business, not shared state. The UPDATE
-- and DELETE triggers stay (redact --rescan and forget rely on them).

-- +goose Up
DROP TRIGGER messages_ai;
DROP TABLE fts_defer;

-- +goose Down
CREATE TABLE fts_defer (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    deferred INTEGER NOT NULL
);
INSERT INTO fts_defer (id, deferred) VALUES (1, 0);
-- +goose StatementBegin
CREATE TRIGGER messages_ai AFTER INSERT ON messages WHEN (SELECT deferred FROM fts_defer) = 0 BEGIN
    INSERT INTO messages_fts (rowid, text) VALUES (new.id, new.text);
END;
-- +goose StatementEnd
