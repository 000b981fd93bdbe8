-- The text indexes of a team ledger on a database whose LC_CTYPE is C (or
-- POSIX), as initdb makes one when no locale is set: there [:alnum:] is
-- ASCII only, so the tsvector expression of 00001 split every word at
-- each non-ASCII letter ("héllo wörld" indexed as h, llo, w, rld), and
-- the 'simple' configuration lower-cased ASCII only. On such a database
-- the four tsv columns are made again with the expression's text in a
-- Unicode collation (ICU's root locale, else libc's C.UTF-8), and lower-
-- cased in it: words split and folded as SQLite's unicode61 splits and
-- folds them, as on a database with a UTF-8 locale, whose columns stay as
-- they are. Making a column again rewrites its table.

-- +goose Up
-- +goose StatementBegin
DO $$
DECLARE
    coll text;
    t record;
BEGIN
    IF (SELECT datctype FROM pg_database WHERE datname = current_database()) NOT IN ('C', 'POSIX') THEN
        RETURN;
    END IF;
    SELECT collname INTO coll FROM pg_collation
        WHERE collname IN ('und-x-icu', 'C.utf8', 'C.UTF-8') AND collencoding IN (-1, 6)
        ORDER BY collname <> 'und-x-icu' LIMIT 1;
    IF coll IS NULL THEN
        RAISE WARNING 'ledger: no Unicode collation on this server (und-x-icu, C.utf8): words with non-ASCII letters are split in the text indexes';
        RETURN;
    END IF;
    FOR t IN SELECT * FROM (VALUES ('messages', 'text'), ('handoffs', 'markdown'), ('compactions', 'summary'), ('notes', 'text')) AS v(tab, col) LOOP
        EXECUTE format('DROP INDEX IF EXISTS %I', t.tab || '_tsv');
        EXECUTE format('ALTER TABLE %I DROP COLUMN tsv', t.tab);
        EXECUTE format('ALTER TABLE %I ADD COLUMN tsv TSVECTOR GENERATED ALWAYS AS '
            '(to_tsvector(''simple''::regconfig, lower(regexp_replace(left(%I, 400000) COLLATE %I, ''[^[:alnum:]]+'', '' '', ''g'')))) STORED',
            t.tab, t.col, coll);
        EXECUTE format('CREATE INDEX %I ON %I USING gin (tsv)', t.tab || '_tsv', t.tab);
    END LOOP;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
DO $$
DECLARE
    t record;
BEGIN
    IF (SELECT datctype FROM pg_database WHERE datname = current_database()) NOT IN ('C', 'POSIX') THEN
        RETURN;
    END IF;
    FOR t IN SELECT * FROM (VALUES ('messages', 'text'), ('handoffs', 'markdown'), ('compactions', 'summary'), ('notes', 'text')) AS v(tab, col) LOOP
        EXECUTE format('DROP INDEX IF EXISTS %I', t.tab || '_tsv');
        EXECUTE format('ALTER TABLE %I DROP COLUMN tsv', t.tab);
        EXECUTE format('ALTER TABLE %I ADD COLUMN tsv TSVECTOR GENERATED ALWAYS AS '
            '(to_tsvector(''simple''::regconfig, regexp_replace(left(%I, 400000), ''[^[:alnum:]]+'', '' '', ''g''))) STORED',
            t.tab, t.col);
        EXECUTE format('CREATE INDEX %I ON %I USING gin (tsv)', t.tab || '_tsv', t.tab);
    END LOOP;
END
$$;
-- +goose StatementEnd
