-- Resume state: the handoff `ledger resume` extracts for a session that
-- has none written, kept up to date by ingest and the Stop and SessionEnd
-- hooks so that resume reads one row instead of the session's latest
-- messages (and extracts nothing). input_key says what it was extracted
-- from: the session's last message (its seq), its notes, and the session
-- facts extraction reads (project, branch, compactions). Resume uses the
-- row only when the key is still the session's; otherwise it extracts anew
-- and stores the result. Deleting a session (forget) deletes its row.

-- +goose Up
CREATE TABLE resume_states (
    session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    input_key  TEXT NOT NULL,
    -- the extracted handoff.Doc as JSON
    doc        TEXT NOT NULL,
    updated_at DATETIME NOT NULL
) WITHOUT ROWID;

-- +goose Down
DROP TABLE resume_states;
