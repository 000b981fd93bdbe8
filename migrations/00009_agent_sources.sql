-- A session's source is any agent ledger reads (claude, codex, pi, opencode,
-- kilo, and those to come), not only Claude Code and Codex: the CHECK on
-- sessions.source goes, and the readers name their format. SQLite cannot
-- drop a constraint, and rebuilding sessions would cascade-delete every
-- message (its children reference it and foreign keys are on), so the
-- constraint is removed from the stored CREATE TABLE text, the way SQLite's
-- documentation gives for removing a CHECK (lang_altertable.html, "making
-- other kinds of table schema changes"): no row changes on disk.
-- writable_schema = RESET turns the pragma off and makes this connection
-- read the schema again; the table made and dropped after it bumps the
-- schema cookie, so that every other open connection reads it again too.

-- +goose Up
-- Two processes may migrate a new ledger at once (store.migrate): the one
-- that comes second must fail, as it does on every other migration's
-- CREATE TABLE, rather than apply this one again. json() of a text that is
-- not JSON is that failure, when the CHECK is gone already.
SELECT CASE WHEN (SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'sessions') NOT LIKE '%CHECK (source IN (''claude'', ''codex''))%'
    THEN json('applied already') END;
PRAGMA writable_schema = ON;
UPDATE sqlite_master SET sql = replace(sql, ' CHECK (source IN (''claude'', ''codex''))', '')
WHERE type = 'table' AND name = 'sessions';
PRAGMA writable_schema = RESET;
CREATE TABLE schema_cookie_bump (x INTEGER);
DROP TABLE schema_cookie_bump;

-- +goose Down
PRAGMA writable_schema = ON;
UPDATE sqlite_master SET sql = replace(sql, 'source         TEXT NOT NULL,', 'source         TEXT NOT NULL CHECK (source IN (''claude'', ''codex'')),')
WHERE type = 'table' AND name = 'sessions';
PRAGMA writable_schema = RESET;
CREATE TABLE schema_cookie_bump (x INTEGER);
DROP TABLE schema_cookie_bump;
