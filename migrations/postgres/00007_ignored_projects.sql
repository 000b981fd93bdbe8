-- Projects ingest kept out of the ledger because of a .ledgerignore file,
-- as in the SQLite schema's 00013: the project's folder and the file's
-- path, never anything of the transcripts skipped.

-- +goose Up
CREATE TABLE ignored_projects (
    project TEXT COLLATE "C" PRIMARY KEY,
    file    TEXT NOT NULL,
    at      TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE ignored_projects;
