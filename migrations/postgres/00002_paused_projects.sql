-- Projects the user paused recording for (`ledger pause`), as in the
-- SQLite schema's 00006: ingest and every hook keep, search and inject
-- nothing of a session whose project is one of these folders or below one.

-- +goose Up
CREATE TABLE paused_projects (
    project TEXT COLLATE "C" PRIMARY KEY,
    at      TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE paused_projects;
