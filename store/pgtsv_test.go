package store

import (
	"context"
	"fmt"
	"github.com/agentledger/ledger/compact"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/store/pgtest"
	"github.com/agentledger/ledger/store/secrets/secretstest"
)

// TestTSVectorAsTheServerMadeIt: the tsvector the client copies with a
// message is the one the server made before migration 00010
// (ledger_text_tsv, its generated column's expression), on a database in
// a UTF-8 locale and on one in the C locale: the same words, positions
// and limits (words of over 2,046 bytes left out without a position, at
// most 255 positions a word, none past 16,383, the first 400,000
// characters only), a number with an exponent cut from what follows it.
func TestTSVectorAsTheServerMadeIt(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 2048)
	texts := []string{
		"",
		"  ...  ",
		"Fix the flaky test in pkg/auth/session_store.go (line 42); see README.md",
		"the cat and the hat and the bat",
		"Émile ÉCOLE ǅemal straße 日本語 テキスト mañana ΩMEGA Ωmega “quoted” — dashed ٣",
		"keep " + long + " out, " + long[:2047] + " out, but " + long[:2046] + " in",
		strings.Repeat("again ", 300) + "done",
		strings.Repeat("w ", 16500) + "late late tail",
		strings.Repeat("é ", 200_001) + "cut",
		"tab\tnew\nline\r\nCRLF",
		"commit 81e0c76 and 12e2d10 12E2x 3e4f5e6 1ee2 12e 69000e1e 0x1e5 12e2٣ e5",
		"deja\u0301 vu, ok\u2764\ufe0f done",
	}
	dbs := map[string]string{"utf8": pgtest.URL(t), "C": pgtest.URLInCLocale(t)}
	for name, url := range dbs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, err := Open(ctx, url, WithLocalPath(filepath.Join(t.TempDir(), "ledger.db")))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for _, text := range texts {
				mine := pgTSVector(text)
				var same bool
				var theirs string
				if err := s.db.QueryRowContext(ctx, `SELECT ledger_text_tsv($1) = CAST($2 AS tsvector), left(CAST(ledger_text_tsv($1) AS text), 300)`,
					text, mine.String()).Scan(&same, &theirs); err != nil {
					t.Fatal(err)
				}
				if !same {
					t.Errorf("text %.60q: client %.300s, server %s", text, mine.String(), theirs)
				}
			}
		})
	}
}

// TestTSVectorOfEveryWrite: every way a message reaches a team ledger
// leaves the tsvector its stored (redacted) text has: copied in with a
// new session, inserted into a session the ledger holds, and its text
// changed; a secret's words are in none.
func TestTSVectorOfEveryWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openPG(t)
	start := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	secret := secretstest.Kinds()[4].Value
	texts := []string{"first words token " + secret, "second words", "third words " + secret}
	i := 0
	next := func() string { i++; return texts[(i-1)%len(texts)] }
	writeWords(t, ctx, s, "s1", "m", start, 3, 1, next)                // a new session: copied
	writeWords(t, ctx, s, "s1", "n", start.Add(time.Hour), 3, 1, next) // a session the ledger holds: inserted
	check := func(when string) {
		t.Helper()
		var n, wrong, leaked int
		if err := s.db.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE tsv IS DISTINCT FROM ledger_text_tsv(text)),
			count(*) FILTER (WHERE tsv @@ to_tsquery('simple', $1)) FROM messages`, strings.ToLower(secret)).Scan(&n, &wrong, &leaked); err != nil {
			t.Fatal(err)
		}
		if n != 6 || wrong != 0 || leaked != 0 {
			t.Errorf("%s: %d messages, %d with a tsvector not their text's, %d with the secret's word", when, n, wrong, leaked)
		}
	}
	check("written")
	if _, err := s.db.ExecContext(ctx, `UPDATE messages SET text = 'rewritten words' WHERE id = (SELECT min(id) FROM messages)`); err != nil {
		t.Fatal(err)
	}
	check("a text changed")
	res, err := s.Search(ctx, SearchOptions{Query: ParseQuery("rewritten"), Limit: 5})
	if err != nil || len(res.Hits) != 1 {
		t.Errorf("search rewritten = %+v (%v), want the changed message", res.Hits, err)
	}
}

func BenchmarkTSVector(b *testing.B) {
	text := strings.Repeat("Fix the flaky test in pkg/auth/session_store.go: the deadline of 30s (see 81e0c76) was too short. ", 4)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		pgTSVector(text)
	}
}

// TestFailedCopyLosesNothing: a copy goes on while the writer reads on;
// one the server refuses (here a row whose id another row has) fails
// whatever comes next with its error, its transaction is rolled back with
// the rows written before it, and the connection serves the next write.
func TestFailedCopyLosesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openPG(t)
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	w, err := s.NewWriter(ctx, "claude")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Rollback()
	if _, err := w.AddMessage(ctx, compact.Message{UUID: "u1", SessionID: "s-fail", Role: compact.RoleUser, Time: at,
		Blocks: []compact.Block{{Kind: compact.BlockText, Text: "kept only if all is"}}}); err != nil {
		t.Fatal(err)
	}
	if len(w.copied.rows) != 1 {
		t.Fatalf("the message was not put to copy: %+v", w.copied)
	}
	id := w.copied.rows[0][0]
	if err := w.flushCopy(ctx); err != nil {
		t.Fatal(err)
	}
	row := []any{id, "s-fail", "u2", "", int64(2), "user", "text", "", "the same id", nil, at,
		"", "", nil, nil, nil, nil, false, false, false, ""}
	if err := w.copied.copier.copyRows(ctx, "messages", copyColumns, [][]any{row}); err != nil {
		t.Fatalf("the copy is under way, its error is for later: %v", err)
	}
	err = w.Commit(ctx, nil)
	if err == nil || !strings.Contains(err.Error(), "copy into messages") || !strings.Contains(err.Error(), "duplicate key") {
		t.Fatalf("commit after a refused copy = %v, want the copy's error", err)
	}
	var n int
	if err := s.db.GetContext(ctx, &n, `SELECT count(*) FROM messages`); err != nil || n != 0 {
		t.Errorf("%d messages stored (%v), want none: the transaction is rolled back", n, err)
	}
	writeWords(t, ctx, s, "s-next", "m", at, 3, 1, func() string { return "next" })
	if err := s.db.GetContext(ctx, &n, `SELECT count(*) FROM messages`); err != nil || n != 3 {
		t.Errorf("%d messages after the next write (%v), want 3", n, err)
	}
}

// TestCopiesWhileTheWriterReadsOn: a write of several copy batches, whose
// rows the copy makes (redacted, with their tsvectors) while the writer
// prepares the next ones, stores every message once, each with its
// text's tsvector and no word of a secret (run with -race: the two share
// the redactor).
func TestCopiesWhileTheWriterReadsOn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openPG(t)
	secret := secretstest.Kinds()[3].Value
	n := 2*copyBatch + 100
	i := 0
	writeWords(t, ctx, s, "s-batches", "m", time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC), n, 1, func() string {
		i++
		if i%100 == 0 {
			return fmt.Sprintf("word%d key %s", i, secret)
		}
		return fmt.Sprintf("word%d", i)
	})
	var count, wrong, leaked int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE tsv IS DISTINCT FROM ledger_text_tsv(text)),
		count(*) FILTER (WHERE tsv @@ to_tsquery('simple', $1) OR strpos(text, $2) > 0) FROM messages`,
		ParseQuery(secret).render(tsSyntax, true), secret).Scan(&count, &wrong, &leaked); err != nil {
		t.Fatal(err)
	}
	if count != n || wrong != 0 || leaked != 0 {
		t.Errorf("%d messages (want %d), %d with a tsvector not their text's, %d holding the secret", count, n, wrong, leaked)
	}
	res, err := s.Search(ctx, SearchOptions{Query: ParseQuery(fmt.Sprintf("word%d", n-1)), Limit: 5})
	if err != nil || len(res.Hits) != 1 {
		t.Errorf("the last batch's message: %+v (%v)", res.Hits, err)
	}
}

// TestTSVectorAcrossTheMigration: rows a team ledger holds from before
// migration 00010 (their tsvector generated by the server) keep it, equal
// to what ledger_text_tsv makes, and are found as rows written since are;
// down again, the column is generated once more.
func TestTSVectorAcrossTheMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openPG(t)
	if err := s.MigrateDown(ctx, 9); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	if _, err := s.db.ExecContext(ctx, `INSERT INTO sessions (id, source, host) VALUES ('s-old', 'claude', 'h')`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO messages (session_id, uuid, parent_uuid, seq, role, kind, tool_name, text, at)
		VALUES ('s-old', 'u1', '', 1, 'user', 'text', '', 'rebased onto 81e0c7609de5 before the release', $1)`, at); err != nil {
		t.Fatal(err)
	}
	if err := s.MigrateUp(ctx); err != nil {
		t.Fatal(err)
	}
	writeWords(t, ctx, s, "s-new", "m", at.Add(time.Hour), 1, 1, func() string { return "cherry-picked 81e0c7609de5 again" })
	var n, differ int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE tsv IS DISTINCT FROM ledger_text_tsv(text)) FROM messages`).Scan(&n, &differ); err != nil {
		t.Fatal(err)
	}
	if n != 2 || differ != 0 {
		t.Errorf("%d messages, %d with a tsvector ledger_text_tsv would not make", n, differ)
	}
	res, err := s.Search(ctx, SearchOptions{Query: ParseQuery("81e0c7609de5"), Limit: 5})
	if err != nil || len(res.Hits) != 2 {
		t.Errorf("search 81e0c7609de5 = %+v (%v), want the message from before the migration and the one since", res.Hits, err)
	}
	if err := s.MigrateDown(ctx, 9); err != nil {
		t.Fatal(err)
	}
	var generated string
	if err := s.db.GetContext(ctx, &generated, `SELECT attgenerated FROM pg_attribute WHERE attrelid = 'messages'::regclass AND attname = 'tsv'`); err != nil || generated != "s" {
		t.Errorf("down at 9, messages.tsv is generated %q (%v), want stored (s)", generated, err)
	}
	res, err = s.Search(ctx, SearchOptions{Query: ParseQuery("81e0c7609de5"), Limit: 5})
	if err != nil || len(res.Hits) != 2 {
		t.Errorf("down at 9, search 81e0c7609de5 = %+v (%v), want both messages", res.Hits, err)
	}
}

// TestSummaryTSVector: a compaction's summary linked by an ingest is
// written with its text's tsvector, made by the client (the server's
// trigger is disabled here: a tsvector the server made would be the empty
// summary's), without a secret's words; an update of the compaction that
// leaves its summary keeps it, one that changes it (no tsvector given)
// has the server's trigger make it again, as for the notes' and handoffs'
// texts (migration 00011). The summary is found.
func TestSummaryTSVector(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openPG(t)
	secret := secretstest.Kinds()[2].Value
	if _, err := s.db.ExecContext(ctx, `ALTER TABLE compactions DISABLE TRIGGER compactions_tsv_update`); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	w, err := s.NewWriter(ctx, "claude")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Rollback()
	if _, err := w.AddMessage(ctx, compact.Message{UUID: "m1", SessionID: "s1", Role: compact.RoleUser, Time: at,
		Blocks: []compact.Block{{Kind: compact.BlockText, Text: "before the compaction"}}}); err != nil {
		t.Fatal(err)
	}
	b := compact.NewBoundary("s1", "b1", "auto", at.Add(time.Minute), 3020, 0)
	b.LogicalParentUUID = "m1"
	if _, err := w.AddBoundary(ctx, b); err != nil {
		t.Fatal(err)
	}
	summary := "This session is being continued: the zebrafish migration of 81e0c7609de5, key " + secret + "; Émile's ÉCOLE branch"
	if _, err := w.AddMessage(ctx, compact.Message{UUID: "m2", ParentUUID: "b1", SessionID: "s1", Role: compact.RoleUser,
		CompactSummary: true, Time: at.Add(2 * time.Minute), Blocks: []compact.Block{{Kind: compact.BlockText, Text: summary}}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx, nil); err != nil {
		t.Fatal(err)
	}
	check := func(when, table, col string, rows int) {
		t.Helper()
		var n, wrong, leaked int
		if err := s.db.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE tsv IS DISTINCT FROM ledger_text_tsv(`+col+`)),
			count(*) FILTER (WHERE tsv @@ to_tsquery('simple', $1) OR strpos(`+col+`, $2) > 0) FROM `+table,
			ParseQuery(secret).render(tsSyntax, true), secret).Scan(&n, &wrong, &leaked); err != nil {
			t.Fatal(err)
		}
		if n != rows || wrong != 0 || leaked != 0 {
			t.Errorf("%s: %d %s (want %d), %d with a tsvector not their text's, %d with the secret", when, n, table, rows, wrong, leaked)
		}
	}
	check("summary linked", "compactions", "summary", 1)
	res, err := s.Search(ctx, SearchOptions{Query: ParseQuery("zebrafish"), Limit: 5})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].Kind != "compaction" {
		t.Errorf("search zebrafish = %+v (%v), want the compaction", res.Hits, err)
	}
	if _, err := s.db.ExecContext(ctx, `ALTER TABLE compactions ENABLE TRIGGER compactions_tsv_update`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE compactions SET post_tokens = 812`); err != nil {
		t.Fatal(err)
	}
	check("tokens updated", "compactions", "summary", 1)
	if _, err := s.db.ExecContext(ctx, `UPDATE compactions SET summary = 'a rewritten kingfisher summary'`); err != nil {
		t.Fatal(err)
	}
	check("summary changed", "compactions", "summary", 1)
	if res, err := s.Search(ctx, SearchOptions{Query: ParseQuery("kingfisher"), Limit: 5}); err != nil || len(res.Hits) != 1 {
		t.Errorf("search kingfisher = %+v (%v), want the changed summary", res.Hits, err)
	}
	if _, err := s.AddNote(ctx, Note{SessionID: "s1", Kind: "decision", Text: "keep the heron " + secret}); err != nil {
		t.Fatal(err)
	}
	check("note added", "notes", "text", 1)
	if _, err := s.db.ExecContext(ctx, `UPDATE notes SET text = 'keep the egret'`); err != nil {
		t.Fatal(err)
	}
	check("note changed", "notes", "text", 1)
}

// TestTextVectorsAcrossTheMigration: compactions, handoffs and notes from
// before migration 00011 (their tsvector generated by the server) keep it
// as ledger_text_tsv makes it, with no column generated since; down again,
// the three are generated once more and their rows still found.
func TestTextVectorsAcrossTheMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openPG(t)
	if err := s.MigrateDown(ctx, 10); err != nil {
		t.Fatal(err)
	}
	generated := func(when, want string) {
		t.Helper()
		var got []string
		if err := s.db.SelectContext(ctx, &got, `SELECT attrelid::regclass || ':' || attgenerated::text FROM pg_attribute
			WHERE attrelid IN ('compactions'::regclass, 'handoffs'::regclass, 'notes'::regclass) AND attname = 'tsv' ORDER BY 1`); err != nil {
			t.Fatal(err)
		}
		if w := "compactions:" + want + " handoffs:" + want + " notes:" + want; strings.Join(got, " ") != w {
			t.Errorf("%s: tsv generated %v, want %s", when, got, w)
		}
	}
	generated("down at 10", "s")
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	if _, err := s.db.ExecContext(ctx, `INSERT INTO sessions (id, source, host) VALUES ('s-old', 'claude', 'h')`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO compactions (session_id, at, trigger, summary, source) VALUES ('s-old', $1, 'auto', 'the osprey summary', 'transcript')`, at); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO notes (session_id, kind, text, created_at) VALUES ('s-old', 'next', 'the osprey note', $1)`, at); err != nil {
		t.Fatal(err)
	}
	if err := s.MigrateUp(ctx); err != nil {
		t.Fatal(err)
	}
	generated("up", "")
	var n, differ int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE tsv IS DISTINCT FROM ledger_text_tsv(summary)) FROM compactions`).Scan(&n, &differ); err != nil || n != 1 || differ != 0 {
		t.Errorf("%d compactions, %d with a tsvector ledger_text_tsv would not make (%v)", n, differ, err)
	}
	res, err := s.Search(ctx, SearchOptions{Query: ParseQuery("osprey"), Limit: 5})
	if err != nil || len(res.Hits) != 2 {
		t.Errorf("search osprey = %+v (%v), want the compaction and the note from before the migration", res.Hits, err)
	}
	if err := s.MigrateDown(ctx, 10); err != nil {
		t.Fatal(err)
	}
	generated("down at 10 again", "s")
	if res, err := s.Search(ctx, SearchOptions{Query: ParseQuery("osprey"), Limit: 5}); err != nil || len(res.Hits) != 2 {
		t.Errorf("down at 10, search osprey = %+v (%v), want both", res.Hits, err)
	}
}

// TestLZ4Compression: on a server built with LZ4 (as PostgreSQL's Debian
// packages are, which the tests run on), a team ledger's long values are
// compressed with it from migration 00012 on, and read back whole; down
// at 11 the columns are back to the server's default.
func TestLZ4Compression(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openPG(t)
	var lz4 bool
	if err := s.db.GetContext(ctx, &lz4, `SELECT EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals))`); err != nil {
		t.Fatal(err)
	}
	if !lz4 {
		t.Fatal("this PostgreSQL server was built without LZ4: the tests need one with it (Debian's postgresql package)")
	}
	columns := func() string {
		t.Helper()
		var got []string
		if err := s.db.SelectContext(ctx, &got, `SELECT attrelid::regclass || '.' || attname || ':' || attcompression::text FROM pg_attribute
			WHERE (attrelid, attname) IN (('messages'::regclass, 'text'), ('messages'::regclass, 'blocks'), ('messages'::regclass, 'tsv'),
				('compactions'::regclass, 'summary'), ('handoffs'::regclass, 'markdown'), ('notes'::regclass, 'text')) ORDER BY 1`); err != nil {
			t.Fatal(err)
		}
		return strings.Join(got, " ")
	}
	if got, want := columns(), "compactions.summary:l handoffs.markdown:l messages.blocks:l messages.text:l messages.tsv:l notes.text:l"; got != want {
		t.Errorf("compression %s, want %s", got, want)
	}
	long := strings.Repeat("the pelican flew over the estuary at dawn; ", 200)
	writeWords(t, ctx, s, "s-long", "m", time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC), 1, 1, func() string { return long })
	var method string
	var same bool
	if err := s.db.QueryRowContext(ctx, `SELECT coalesce(pg_column_compression(text), 'none'), text = $1 FROM messages`, long).Scan(&method, &same); err != nil {
		t.Fatal(err)
	}
	if method != "lz4" || !same {
		t.Errorf("a long message compressed with %s, read back whole %v: want lz4, true", method, same)
	}
	if err := s.MigrateDown(ctx, 11); err != nil {
		t.Fatal(err)
	}
	if got, want := columns(), "compactions.summary: handoffs.markdown: messages.blocks: messages.text: messages.tsv: notes.text:"; got != want {
		t.Errorf("down at 11: compression %s, want %s", got, want)
	}
}
