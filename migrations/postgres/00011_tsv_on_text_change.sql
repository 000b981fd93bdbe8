-- The tsvectors of compactions, handoffs and notes stop being generated,
-- as messages.tsv did in 00010, so that a client may write one with its
-- text: an ingest writes the summary it links to a compaction with its
-- tsvector (store/pgtsv.go), which the server computing it (a regular
-- expression, then to_tsvector's parser, over kilobytes of summary) was a
-- tenth of what the server spent on an ingest of 100k messages. The
-- columns keep what they hold (no rewrite), and triggers compute
-- ledger_text_tsv (00010: the expression every tsv column was generated
-- with) for a row inserted without one and for a row whose text changes
-- without one given: the value the generated column had.

-- +goose Up
-- +goose StatementBegin
DO $$
DECLARE
    want text;
    e text;
    t record;
BEGIN
    SELECT regexp_replace(prosrc, '^\s*SELECT\s+', '') INTO want
        FROM pg_proc WHERE oid = 'ledger_text_tsv(text)'::regprocedure;
    FOR t IN SELECT * FROM (VALUES ('compactions', 'summary'), ('handoffs', 'markdown'), ('notes', 'text')) AS v(tab, col) LOOP
        SELECT pg_get_expr(d.adbin, d.adrelid) INTO e FROM pg_attrdef d
            JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
            WHERE d.adrelid = t.tab::regclass AND a.attname = 'tsv';
        IF e IS NULL OR replace(e, format('"left"(%s, 400000)', t.col), '"left"(doc, 400000)') <> want THEN
            RAISE EXCEPTION 'ledger: %.tsv is not generated as a ledger migration made it: %', t.tab, coalesce(e, 'no expression');
        END IF;
        EXECUTE format('ALTER TABLE %I ALTER COLUMN tsv DROP EXPRESSION', t.tab);
        EXECUTE format('CREATE FUNCTION %I() RETURNS trigger LANGUAGE plpgsql AS %L', 'ledger_' || t.tab || '_tsv',
            format('BEGIN NEW.tsv := ledger_text_tsv(NEW.%I); RETURN NEW; END', t.col));
        EXECUTE format('CREATE TRIGGER %I BEFORE INSERT ON %I FOR EACH ROW WHEN (NEW.tsv IS NULL) EXECUTE FUNCTION %I()',
            t.tab || '_tsv_insert', t.tab, 'ledger_' || t.tab || '_tsv');
        EXECUTE format('CREATE TRIGGER %I BEFORE UPDATE OF %I ON %I FOR EACH ROW '
            'WHEN (NEW.%I IS DISTINCT FROM OLD.%I AND NEW.tsv IS NOT DISTINCT FROM OLD.tsv) EXECUTE FUNCTION %I()',
            t.tab || '_tsv_update', t.col, t.tab, t.col, t.col, 'ledger_' || t.tab || '_tsv');
    END LOOP;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
DO $$
DECLARE
    e text;
    t record;
BEGIN
    SELECT regexp_replace(prosrc, '^\s*SELECT\s+', '') INTO e
        FROM pg_proc WHERE oid = 'ledger_text_tsv(text)'::regprocedure;
    FOR t IN SELECT * FROM (VALUES ('compactions', 'summary'), ('handoffs', 'markdown'), ('notes', 'text')) AS v(tab, col) LOOP
        EXECUTE format('DROP TRIGGER %I ON %I', t.tab || '_tsv_update', t.tab);
        EXECUTE format('DROP TRIGGER %I ON %I', t.tab || '_tsv_insert', t.tab);
        EXECUTE format('DROP FUNCTION %I()', 'ledger_' || t.tab || '_tsv');
        EXECUTE format('DROP INDEX %I', t.tab || '_tsv');
        EXECUTE format('ALTER TABLE %I DROP COLUMN tsv', t.tab);
        EXECUTE format('ALTER TABLE %I ADD COLUMN tsv TSVECTOR GENERATED ALWAYS AS (%s) STORED', t.tab,
            replace(e, '"left"(doc, 400000)', format('"left"(%I, 400000)', t.col)));
        EXECUTE format('CREATE INDEX %I ON %I USING gin (tsv)', t.tab || '_tsv', t.tab);
    END LOOP;
END
$$;
-- +goose StatementEnd
