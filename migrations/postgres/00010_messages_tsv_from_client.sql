-- A message's tsvector comes from the client that copies it in: the
-- server computing it (a regular expression, then to_tsvector's parser)
-- was half of what the server spent on an ingest. messages.tsv stops
-- being generated and keeps what it holds (no rewrite); the expression it
-- was generated with (00001's, or 00009's on a database in the C locale)
-- becomes ledger_text_tsv, which triggers run on a row written without a
-- tsvector (a single INSERT, an older writer) and on a row whose text
-- changes. The client splits a text as ledger's queries are split
-- (store/pgtsv.go); the other three tables, small, stay generated.
-- ALTER COLUMN ... DROP EXPRESSION needs PostgreSQL 13.

-- +goose Up
-- +goose StatementBegin
DO $$
DECLARE
    e text;
BEGIN
    IF current_setting('server_version_num')::int < 130000 THEN
        RAISE EXCEPTION 'ledger needs PostgreSQL 13 or later (this server is %)', current_setting('server_version');
    END IF;
    SELECT pg_get_expr(d.adbin, d.adrelid) INTO e FROM pg_attrdef d
        JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
        WHERE d.adrelid = 'messages'::regclass AND a.attname = 'tsv';
    IF e IS NULL OR position('"left"(text, 400000)' IN e) = 0 THEN
        RAISE EXCEPTION 'ledger: messages.tsv is not generated as a ledger migration made it: %', coalesce(e, 'no expression');
    END IF;
    EXECUTE format('CREATE FUNCTION ledger_text_tsv(doc text) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS %L',
        'SELECT ' || replace(e, '"left"(text, 400000)', '"left"(doc, 400000)'));
    ALTER TABLE messages ALTER COLUMN tsv DROP EXPRESSION;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION ledger_messages_tsv() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.tsv := ledger_text_tsv(NEW.text);
    RETURN NEW;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER messages_tsv_insert BEFORE INSERT ON messages
    FOR EACH ROW WHEN (NEW.tsv IS NULL) EXECUTE FUNCTION ledger_messages_tsv();
CREATE TRIGGER messages_tsv_update BEFORE UPDATE OF text ON messages
    FOR EACH ROW WHEN (NEW.text IS DISTINCT FROM OLD.text AND NEW.tsv IS NOT DISTINCT FROM OLD.tsv)
    EXECUTE FUNCTION ledger_messages_tsv();

-- +goose Down
DROP TRIGGER messages_tsv_update ON messages;
DROP TRIGGER messages_tsv_insert ON messages;
DROP FUNCTION ledger_messages_tsv();
-- +goose StatementBegin
DO $$
DECLARE
    e text;
BEGIN
    SELECT replace(regexp_replace(prosrc, '^\s*SELECT\s+', ''), '"left"(doc, 400000)', '"left"(text, 400000)') INTO e
        FROM pg_proc WHERE oid = 'ledger_text_tsv(text)'::regprocedure;
    DROP INDEX messages_tsv;
    ALTER TABLE messages DROP COLUMN tsv;
    EXECUTE format('ALTER TABLE messages ADD COLUMN tsv TSVECTOR GENERATED ALWAYS AS (%s) STORED', e);
    CREATE INDEX messages_tsv ON messages USING gin (tsv);
    DROP FUNCTION ledger_text_tsv(text);
END
$$;
-- +goose StatementEnd
