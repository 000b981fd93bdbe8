-- Projects the user paused recording for (`ledger pause`): ingest and
-- every hook keep, search and inject nothing of a session whose project is
-- one of these folders or below one, until `ledger resume-recording`.

-- +goose Up
CREATE TABLE paused_projects (
    project TEXT PRIMARY KEY,
    at      DATETIME NOT NULL
) WITHOUT ROWID;

-- +goose Down
DROP TABLE paused_projects;
