-- Hook receipts: what each run of `ledger hook` did, when, how long it
-- took, and why it did nothing or what it left for later (a transcript
-- read in part within the event's budget, a write lock another process
-- held, a handoff whose row waits for it). Written at the end of every
-- hook run, best-effort: a receipt that cannot be written at once goes to
-- the hook log file instead. session_id is '' when the input named none;
-- no foreign key, a hook may run for a session ledger has not seen.

-- +goose Up
CREATE TABLE hook_receipts (
    id         INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL DEFAULT '',
    event      TEXT NOT NULL,
    at         DATETIME NOT NULL,
    ms         INTEGER NOT NULL,
    outcome    TEXT NOT NULL,
    detail     TEXT NOT NULL DEFAULT ''
);

CREATE INDEX hook_receipts_at ON hook_receipts (at);
CREATE INDEX hook_receipts_session_at ON hook_receipts (session_id, at);

-- +goose Down
DROP TABLE hook_receipts;
