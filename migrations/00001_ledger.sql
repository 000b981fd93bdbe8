-- The whole ledger schema. Times are DATETIME in UTC (written by the driver
-- with _time_format=sqlite, so they sort as text). Counts that listings need
-- are kept on the session row so that `ledger sessions` never counts
-- millions of messages.

-- +goose Up
CREATE TABLE sessions (
    id             TEXT PRIMARY KEY,
    source         TEXT NOT NULL CHECK (source IN ('claude', 'codex')),
    project        TEXT NOT NULL DEFAULT '',
    git_branch     TEXT NOT NULL DEFAULT '',
    title          TEXT NOT NULL DEFAULT '',
    model          TEXT NOT NULL DEFAULT '',
    -- the model's window when the transcript states it (Codex), else 0
    context_window INTEGER NOT NULL DEFAULT 0,
    -- context in use at the last API response seen (input + cache creation + cache read)
    context_tokens INTEGER NOT NULL DEFAULT 0,
    started_at     DATETIME,
    last_at        DATETIME,
    messages       INTEGER NOT NULL DEFAULT 0,
    compactions    INTEGER NOT NULL DEFAULT 0,
    tool_calls     INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

CREATE INDEX sessions_last_at ON sessions (last_at DESC);
CREATE INDEX sessions_project_last_at ON sessions (project, last_at DESC);

CREATE TABLE messages (
    id                    INTEGER PRIMARY KEY,
    session_id            TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    uuid                  TEXT NOT NULL,
    parent_uuid           TEXT NOT NULL DEFAULT '',
    seq                   INTEGER NOT NULL,
    role                  TEXT NOT NULL,
    kind                  TEXT NOT NULL,
    tool_name             TEXT NOT NULL DEFAULT '',
    -- what search sees: text, tool names and inputs, tool output
    text                  TEXT NOT NULL,
    -- the content blocks as JSON when the message is more than one text block
    blocks                TEXT,
    at                    DATETIME,
    model                 TEXT NOT NULL DEFAULT '',
    response_id           TEXT NOT NULL DEFAULT '',
    -- usage of the API response, kept on its last line only (NULL elsewhere)
    input_tokens          INTEGER,
    cache_creation_tokens INTEGER,
    cache_read_tokens     INTEGER,
    output_tokens         INTEGER,
    meta                  INTEGER NOT NULL DEFAULT 0,
    compact_summary       INTEGER NOT NULL DEFAULT 0,
    sidechain             INTEGER NOT NULL DEFAULT 0,
    agent_id              TEXT NOT NULL DEFAULT '',
    UNIQUE (session_id, uuid)
);

CREATE INDEX messages_session_seq ON messages (session_id, seq);
CREATE INDEX messages_session_response ON messages (session_id, response_id) WHERE response_id <> '';
CREATE INDEX messages_at ON messages (at);

CREATE TABLE handoffs (
    id         INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    created_at DATETIME NOT NULL,
    trigger    TEXT NOT NULL,
    task       TEXT NOT NULL DEFAULT '',
    -- the whole handoff document as JSON (every section, untrimmed)
    sections   TEXT NOT NULL,
    markdown   TEXT NOT NULL,
    tokens     INTEGER NOT NULL,
    -- the Markdown file ledger wrote, if any (forget --files removes it)
    path       TEXT NOT NULL DEFAULT ''
);

CREATE INDEX handoffs_session_created ON handoffs (session_id, created_at);
CREATE INDEX handoffs_created ON handoffs (created_at);

CREATE TABLE compactions (
    id                  INTEGER PRIMARY KEY,
    session_id          TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    -- the transcript's compact_boundary uuid; NULL for a hook or cli record
    -- until the transcript's boundary completes it
    boundary_uuid       TEXT,
    logical_parent_uuid TEXT NOT NULL DEFAULT '',
    at                  DATETIME NOT NULL,
    trigger             TEXT NOT NULL,
    pre_tokens          INTEGER,
    post_tokens         INTEGER,
    summary             TEXT NOT NULL DEFAULT '',
    source              TEXT NOT NULL CHECK (source IN ('transcript', 'hook', 'cli')),
    handoff_id          INTEGER REFERENCES handoffs (id) ON DELETE SET NULL,
    -- tool calls in the session since the previous compaction
    tool_calls          INTEGER NOT NULL DEFAULT 0
);

CREATE UNIQUE INDEX compactions_boundary ON compactions (session_id, boundary_uuid) WHERE boundary_uuid IS NOT NULL;
CREATE INDEX compactions_session_at ON compactions (session_id, at);
CREATE INDEX compactions_at ON compactions (at);
CREATE INDEX compactions_handoff ON compactions (handoff_id) WHERE handoff_id IS NOT NULL;

CREATE TABLE cursors (
    path        TEXT PRIMARY KEY,
    session_id  TEXT NOT NULL DEFAULT '',
    format      TEXT NOT NULL,
    size        INTEGER NOT NULL,
    mod_time    INTEGER NOT NULL,
    -- byte offset just after the last complete line read, and its line number
    offset      INTEGER NOT NULL,
    line        INTEGER NOT NULL,
    -- sha256 of the file's first head_len bytes: a rewrite changes it
    head_len    INTEGER NOT NULL,
    head_hash   TEXT NOT NULL,
    -- reader state carried between runs (JSON)
    state       TEXT NOT NULL DEFAULT '{}',
    updated_at  DATETIME NOT NULL
) WITHOUT ROWID;

CREATE INDEX cursors_session ON cursors (session_id);

-- Set to 1 only inside an ingest transaction, which then indexes its new
-- messages in one statement at commit: FTS5 flushes its pending terms at
-- every statement, so one trigger run per row would flush (and merge) once
-- per message. Other connections never see it set: it is reset before the
-- same transaction commits, and a crash rolls it back.
CREATE TABLE fts_defer (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    deferred INTEGER NOT NULL
);
INSERT INTO fts_defer (id, deferred) VALUES (1, 0);

-- sessions the user forgot: ingest skips them, so a transcript still on
-- disk does not bring them back
CREATE TABLE forgotten (
    session_id TEXT PRIMARY KEY,
    at         DATETIME NOT NULL
) WITHOUT ROWID;

-- one-off markers per session (hook thresholds already announced, ...)
CREATE TABLE session_marks (
    session_id TEXT NOT NULL,
    name       TEXT NOT NULL,
    at         DATETIME NOT NULL,
    PRIMARY KEY (session_id, name)
) WITHOUT ROWID;

-- Full-text indexes. External content: the text lives once, in its table;
-- triggers keep the index in step. unicode61 splits on punctuation, so a
-- path or snake_case name is found as a phrase of its parts.
CREATE VIRTUAL TABLE messages_fts USING fts5 (
    text, content = 'messages', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE handoffs_fts USING fts5 (
    markdown, content = 'handoffs', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE compactions_fts USING fts5 (
    summary, content = 'compactions', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2'
);

-- +goose StatementBegin
CREATE TRIGGER messages_ai AFTER INSERT ON messages WHEN (SELECT deferred FROM fts_defer) = 0 BEGIN
    INSERT INTO messages_fts (rowid, text) VALUES (new.id, new.text);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER messages_au AFTER UPDATE OF text ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO messages_fts (rowid, text) VALUES (new.id, new.text);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER handoffs_ai AFTER INSERT ON handoffs BEGIN
    INSERT INTO handoffs_fts (rowid, markdown) VALUES (new.id, new.markdown);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER handoffs_ad AFTER DELETE ON handoffs BEGIN
    INSERT INTO handoffs_fts (handoffs_fts, rowid, markdown) VALUES ('delete', old.id, old.markdown);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER handoffs_au AFTER UPDATE OF markdown ON handoffs BEGIN
    INSERT INTO handoffs_fts (handoffs_fts, rowid, markdown) VALUES ('delete', old.id, old.markdown);
    INSERT INTO handoffs_fts (rowid, markdown) VALUES (new.id, new.markdown);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER compactions_ai AFTER INSERT ON compactions BEGIN
    INSERT INTO compactions_fts (rowid, summary) VALUES (new.id, new.summary);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER compactions_ad AFTER DELETE ON compactions BEGIN
    INSERT INTO compactions_fts (compactions_fts, rowid, summary) VALUES ('delete', old.id, old.summary);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER compactions_au AFTER UPDATE OF summary ON compactions BEGIN
    INSERT INTO compactions_fts (compactions_fts, rowid, summary) VALUES ('delete', old.id, old.summary);
    INSERT INTO compactions_fts (rowid, summary) VALUES (new.id, new.summary);
END;
-- +goose StatementEnd

-- +goose Down
DROP TABLE compactions_fts;
DROP TABLE handoffs_fts;
DROP TABLE messages_fts;
DROP TABLE session_marks;
DROP TABLE fts_defer;
DROP TABLE forgotten;
DROP TABLE cursors;
DROP TABLE compactions;
DROP TABLE handoffs;
DROP TABLE messages;
DROP TABLE sessions;
