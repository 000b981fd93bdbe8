-- The long values of a team ledger (a message's text, its blocks and
-- tsvector, a compaction's summary) are compressed with LZ4 where the
-- server was built with it (PostgreSQL 14 or later, --with-lz4, as the
-- Debian and Ubuntu packages and the official images are): pglz, the
-- default, was a twentieth of what the server spent on an ingest of 100k
-- messages, and LZ4 compresses several times faster (and reads back
-- faster). Only values written from now on are; those stored stay as
-- they are, and both are read alike. A server without LZ4 keeps pglz.

-- +goose Up
-- +goose StatementBegin
DO $$
DECLARE
    c record;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
        RETURN;
    END IF;
    FOR c IN SELECT a.attrelid::regclass AS tab, a.attname AS col FROM pg_attribute a
        WHERE a.attrelid IN ('messages'::regclass, 'compactions'::regclass, 'handoffs'::regclass, 'notes'::regclass, 'resume_states'::regclass)
            AND a.attnum > 0 AND NOT a.attisdropped AND a.attstorage IN ('x', 'm')
    LOOP
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET COMPRESSION lz4', c.tab, c.col);
    END LOOP;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
DO $$
DECLARE
    c record;
BEGIN
    IF current_setting('server_version_num')::int < 140000 THEN
        RETURN;
    END IF;
    FOR c IN SELECT a.attrelid::regclass AS tab, a.attname AS col FROM pg_attribute a
        WHERE a.attrelid IN ('messages'::regclass, 'compactions'::regclass, 'handoffs'::regclass, 'notes'::regclass, 'resume_states'::regclass)
            AND a.attnum > 0 AND NOT a.attisdropped AND a.attcompression <> ''
    LOOP
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET COMPRESSION default', c.tab, c.col);
    END LOOP;
END
$$;
-- +goose StatementEnd
