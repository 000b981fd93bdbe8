-- Notes: facts recorded on purpose while working (`ledger note`, the MCP
-- note tool): a decision, a next step or a blocker. The next handoff of the
-- session carries them verbatim, and search finds them.

-- +goose Up
CREATE TABLE notes (
    id         INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    kind       TEXT NOT NULL CHECK (kind IN ('decision', 'next', 'blocker')),
    text       TEXT NOT NULL,
    created_at DATETIME NOT NULL
);

CREATE INDEX notes_session_created ON notes (session_id, created_at);

CREATE VIRTUAL TABLE notes_fts USING fts5 (
    text, content = 'notes', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2'
);

-- +goose StatementBegin
CREATE TRIGGER notes_ai AFTER INSERT ON notes BEGIN
    INSERT INTO notes_fts (rowid, text) VALUES (new.id, new.text);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER notes_ad AFTER DELETE ON notes BEGIN
    INSERT INTO notes_fts (notes_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER notes_au AFTER UPDATE OF text ON notes BEGIN
    INSERT INTO notes_fts (notes_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO notes_fts (rowid, text) VALUES (new.id, new.text);
END;
-- +goose StatementEnd

-- +goose Down
DROP TABLE notes_fts;
DROP TABLE notes;
