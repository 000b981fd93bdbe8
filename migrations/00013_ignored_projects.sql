-- Projects ingest kept out of the ledger because of a .ledgerignore file,
-- so that `ledger pause --list` and `ledger doctor` can name them though
-- the ledger holds nothing of their sessions: the project's folder and the
-- file's path, never anything of the transcripts skipped.

-- +goose Up
CREATE TABLE ignored_projects (
    project TEXT PRIMARY KEY,
    file    TEXT NOT NULL,
    at      DATETIME NOT NULL
) WITHOUT ROWID;

-- +goose Down
DROP TABLE ignored_projects;
