-- The machine whose ledger first wrote a session (os.Hostname, or
-- $LEDGER_HOST): one person's ledger holds one host, a team's server
-- (PostgreSQL, or a ledger that `sync` pushed into) many; `sessions
-- --host` and `search --host` filter on it. Sessions written before this
-- migration have none ('').

-- +goose Up
ALTER TABLE sessions ADD COLUMN host TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE sessions DROP COLUMN host;
