package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/store/pgtest"
	"github.com/agentledger/ledger/store/storetest"
)

// forgetFixture writes two sessions of one project, the first full of
// distinctive words, and returns the transcripts' folder and the words.
func forgetFixture(t *testing.T, home string, gone, kept string) (string, []string) {
	t.Helper()
	markers := forgetMarkers(30)
	dir := filepath.Join(home, "projects", "-app")
	for _, s := range []string{gone, kept} {
		var b []byte
		for i, m := range markers {
			if s == kept {
				m = "keptwordxyzzy"
			}
			line, _ := json.Marshal(map[string]any{"type": "user", "uuid": fmt.Sprintf("%s-%d", s[:4], i), "sessionId": s, "cwd": "/home/dev/src/app",
				"timestamp": "2026-03-02T09:00:00Z", "message": map[string]any{"role": "user", "content": "please look at " + m + " " + strings.Repeat("and its neighbours ", 30)}})
			b = append(append(b, line...), '\n')
		}
		appendFile(t, filepath.Join(dir, s+".jsonl"), b)
	}
	return dir, markers
}

// present are the words found in raw (by their ends: FTS5 stores a term
// after the prefix it shares with the one before it). The words are lower
// case (forgetMarkers), as the full-text indexes keep their terms: raw is
// searched as it is, without a case-folded copy of megabytes (seconds
// under the race detector).
func present(raw []byte, markers []string) []string {
	var found []string
	for _, m := range markers {
		if bytes.Contains(raw, []byte(m[len(m)-10:])) {
			found = append(found, m)
		}
	}
	return found
}

// TestForgetWhileAReaderHoldsASnapshot: when a reader (ledger serve or
// mcp) holds a read transaction through the forget, the file cannot be
// scrubbed: forget waits for it a while, then says so truthfully (the
// words are still in the database file and its WAL, and `ledger doctor`
// empties them once the reader is done), and doctor does, even with the
// reader's connection still open. Before, the warning said only the WAL
// held them and that it would be emptied when the reader was done, which
// nothing did.
func TestForgetWhileAReaderHoldsASnapshot(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	const gone, kept = "f1f1f1f1-0000-4000-8000-000000000001", "c1c1c1c1-0000-4000-8000-000000000002"
	dir, markers := forgetFixture(t, home, gone, kept)
	ingestBin(t, home, db, dir)
	reader, err := sql.Open("sqlite", "file:"+db+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	reader.SetMaxOpenConns(1)
	tx, err := reader.Begin()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRow(`SELECT count(*) FROM messages`).Scan(&n); err != nil || n == 0 {
		t.Fatalf("reader: %d messages, %v", n, err)
	}
	r := runBin(t, home, "", "--db", db, "forget", gone[:8])
	if r.code != 0 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "database file and its WAL") || !strings.Contains(r.stderr, "ledger doctor") {
		t.Errorf("forget with a reader: exit %d, stderr %q; want a warning that the words are in the database file and its WAL until ledger doctor", r.code, r.stderr)
	}
	// The warning tells the truth.
	if found := present(dbBytes(t, db), markers); len(found) == 0 {
		t.Errorf("the warning says the words remain, and none does: it should not have warned")
	}
	// The reader is done with its transaction; its connection stays open,
	// as an idle ledger serve's does.
	tx.Rollback()
	if err := reader.QueryRow(`SELECT count(*) FROM sessions`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	r = runBin(t, home, "", "--db", db, "doctor", "--json")
	var h struct {
		Integrity  string `json:"integrity"`
		WALEmptied bool   `json:"wal_emptied"`
	}
	decodeJSON(t, r.stdout, &h)
	if r.code != 0 || h.Integrity != "ok" || !h.WALEmptied {
		t.Errorf("doctor: exit %d %+v %s", r.code, h, r.stderr)
	}
	if found := present(dbBytes(t, db), markers); len(found) > 0 {
		t.Errorf("after doctor, the database file and WAL still hold %d of the %d words", len(found), len(markers))
	}
	if hits, _ := search(t, home, db, "keptwordxyzzy"); len(hits) == 0 {
		t.Error("the other session is no longer searchable")
	}
}

// TestForgetFilesLeavesNoFolders: forget --files removes the session's
// handoff files and the folders ledger made for them, named after the
// session and the project, once they are empty; a folder another session
// still uses stays.
func TestForgetFilesLeavesNoFolders(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	const gone, kept = "f2f2f2f2-0000-4000-8000-000000000001", "c2c2c2c2-0000-4000-8000-000000000002"
	dir, _ := forgetFixture(t, home, gone, kept)
	ingestBin(t, home, db, dir)
	for _, id := range []string{gone, kept} {
		if r := runBin(t, home, "", "--db", db, "compact", id[:8]); r.code != 0 {
			t.Fatalf("compact: %s", r.stderr)
		}
	}
	projectDir := engine.HandoffsDir(db, "/home/dev/src/app")
	if r := runBin(t, home, "", "--db", db, "forget", gone[:8], "--files"); r.code != 0 {
		t.Fatalf("forget: %s", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(projectDir, gone)); !os.IsNotExist(err) {
		t.Errorf("the session's handoff folder is left (%v)", err)
	}
	if fs, _ := filepath.Glob(filepath.Join(projectDir, kept, "*.md")); len(fs) != 1 {
		t.Errorf("the other session's handoff: %v", fs)
	}
	if r := runBin(t, home, "", "--db", db, "forget", kept[:8], "--files"); r.code != 0 {
		t.Fatalf("forget: %s", r.stderr)
	}
	if _, err := os.Stat(projectDir); !os.IsNotExist(err) {
		entries, _ := os.ReadDir(projectDir)
		t.Errorf("the project's handoff folder is left: %v %v", err, entries)
	}
}

// pgForget is a team ledger with a session to forget, full of words
// found nowhere else, and another to keep.
type pgForget struct {
	url, home, gone string
	markers         []string
	admin           *sql.DB // the test's own connections, as a superuser
	firstWAL        string  // the WAL segment in use before the ledger was written
}

func newPGForget(t *testing.T, gone, kept string) *pgForget {
	t.Helper()
	f := &pgForget{url: pgtest.URL(t), home: t.TempDir(), gone: gone}
	var dir string
	dir, f.markers = forgetFixture(t, f.home, gone, kept)
	var err error
	if f.admin, err = sql.Open("pgx", f.url); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.admin.Close() })
	// The write-ahead log segment in use before this test wrote anything:
	// its words can only be in that one and those after it.
	if err := f.admin.QueryRow(`SELECT pg_walfile_name(pg_current_wal_lsn())`).Scan(&f.firstWAL); err != nil {
		t.Fatal(err)
	}
	ingestBin(t, f.home, f.url, dir)
	if r := runBin(t, f.home, "", "--db", f.url, "note", gone[:8], "--decision", "use "+f.markers[0]); r.code != 0 {
		t.Fatalf("note: %s", r.stderr)
	}
	if n := len(f.left(t)); n < len(f.markers) {
		t.Fatalf("only %d of %d words are in the tables' files before forget: the check proves nothing", n, len(f.markers))
	}
	return f
}

// left are the words found in any file of the ledger's tables (heap,
// TOAST and indexes) and of the column statistics, which sample their
// rows, each file searched on its own.
func (f *pgForget) left(t *testing.T) []string {
	t.Helper()
	if _, err := f.admin.Exec(`CHECKPOINT`); err != nil {
		t.Fatal(err)
	}
	rows, err := f.admin.Query(`SELECT pg_relation_filepath(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE (n.nspname IN ('public', 'pg_toast') OR c.relname = 'pg_statistic') AND c.relkind IN ('r', 't', 'i')
			AND pg_relation_filepath(c.oid) IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var paths []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, p := range paths {
		var b []byte
		if err := f.admin.QueryRow(`SELECT pg_read_binary_file($1, 0, (pg_stat_file($1)).size, true)`, p).Scan(&b); err != nil {
			continue // a file not made yet
		}
		in := present(b, f.markers)
		if len(in) > 0 {
			t.Logf("words in %s", p)
		}
		for _, m := range in {
			found[m] = true
		}
	}
	var out []string
	for _, m := range f.markers {
		if found[m] {
			out = append(out, m)
		}
	}
	return out
}

// olderXact begins, in the server's maintenance database (not the
// ledger's), a transaction that takes an id, as any writer elsewhere on
// the server does.
func olderXact(t *testing.T) *sql.Tx {
	t.Helper()
	other, err := sql.Open("pgx", pgtest.Server(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	tx, err := other.Begin()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback() })
	if _, err := tx.Exec(`SELECT pg_current_xact_id()`); err != nil {
		t.Fatal(err)
	}
	return tx
}

// forget starts ledger forget --json on the session, and returns once
// its delete is committed: the session's tombstone is seen from a
// connection of the test's own.
func (f *pgForget) forget(t *testing.T) *proc {
	t.Helper()
	p := startBin(t, f.home, "", "--db", f.url, "forget", f.gone[:8], "--json")
	for deadline := time.Now().Add(2 * time.Minute); ; {
		var tomb int
		if err := f.admin.QueryRow(`SELECT count(*) FROM forgotten WHERE session_id = $1`, f.gone).Scan(&tomb); err != nil {
			t.Fatal(err)
		}
		if tomb > 0 {
			return p
		}
		if p.exited() || time.Now().After(deadline) {
			t.Fatalf("forget did not commit its delete: %s", p.errb.String())
		}
		time.Sleep(time.Millisecond)
	}
}

// forgotten is forget's JSON, once it has exited.
type forgottenJSON struct {
	HeapRewritten bool   `json:"heap_rewritten"`
	HeapError     string `json:"heap_error"`
	WALTruncated  bool   `json:"wal_truncated"`
}

func (p *proc) forgotten(t *testing.T) (forgottenJSON, result) {
	t.Helper()
	p.wait(t)
	r := result{p.out.String(), p.errb.String(), p.exitCode}
	var f forgottenJSON
	decodeJSON(t, r.stdout, &f)
	return f, r
}

// TestForgetOnPostgresLeavesNoHeapBytes: forget on a team ledger rewrites
// the tables that held the session (VACUUM FULL): none of its words is in
// any file of them (heap, TOAST, indexes) nor of the column statistics
// afterwards, read through the server as raw bytes, even when older
// transactions end just after the delete commits: a read of the ledger
// (an autovacuum's ANALYZE, another client's) and a writer in another
// database of the server, whose transaction id holds back VACUUM FULL's
// own snapshot. Before, forget waited only for this database's readers:
// the rewrite ran while the other database's transaction was still open
// and kept the rows, and forget said heap_rewritten. What PostgreSQL keeps
// in its write-ahead log is logged: ledger cannot remove it. The words
// are found whole in values the server compressed because it compresses
// them with LZ4 (migration 00012), which keeps a run of bytes it has not
// seen before as it is; pglz breaks such a run every 8 bytes, and hid the
// resume state forget left in its table's pages until it rewrote that one
// too.
func TestForgetOnPostgresLeavesNoHeapBytes(t *testing.T) {
	t.Parallel()
	const gone, kept = "f3f3f3f3-0000-4000-8000-000000000001", "c3c3c3c3-0000-4000-8000-000000000002"
	f := newPGForget(t, gone, kept)
	reading, err := f.admin.BeginTx(context.Background(), &sql.TxOptions{Isolation: sql.LevelRepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := reading.QueryRow(`SELECT count(*) FROM messages`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	elsewhere := olderXact(t)
	p := f.forget(t)
	// The read ends as soon as the delete is committed; the other
	// database's transaction once forget is seen waiting for it (it holds
	// every rewrite back, and holding it longer would hold back every
	// other test's on this server).
	reading.Commit()
	for deadline := time.Now().Add(2 * time.Minute); !p.exited(); time.Sleep(time.Millisecond) {
		var waiting bool
		if err := f.admin.QueryRow(`SELECT EXISTS (SELECT FROM pg_stat_activity
			WHERE datname = current_database() AND query LIKE '%pg_current_snapshot()%' AND pid <> pg_backend_pid())`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting || time.Now().After(deadline) {
			break
		}
	}
	elsewhere.Commit()
	out, r := p.forgotten(t)
	if r.code != 0 || !out.HeapRewritten || out.WALTruncated {
		t.Errorf("forget on PostgreSQL: exit %d %+v %s; want heap_rewritten and not wal_truncated (pg_wal is the server's)", r.code, out, r.stderr)
	}
	if found := f.left(t); len(found) > 0 {
		t.Errorf("the tables' files still hold %d of the %d words (%s, ...)", len(found), len(f.markers), found[0])
	}
	if hits, _ := search(t, f.home, f.url, "keptwordxyzzy"); len(hits) == 0 {
		t.Error("the other session is no longer searchable")
	}
	// What the write-ahead log still holds: the limit the docs state.
	var names []string
	rows, err := f.admin.Query(`SELECT name FROM pg_ls_waldir() WHERE name >= $1 ORDER BY name`, f.firstWAL)
	if err == nil {
		for rows.Next() {
			var name string
			rows.Scan(&name)
			names = append(names, name)
		}
		rows.Close()
	}
	inWAL := map[string]bool{}
	for _, name := range names {
		var b []byte
		if f.admin.QueryRow(`SELECT pg_read_binary_file('pg_wal/' || $1, 0, 16777216, true)`, name).Scan(&b) == nil {
			for _, m := range present(b, f.markers) {
				inWAL[m] = true
			}
		}
	}
	t.Logf("pg_wal still holds %d of the %d words after forget (PostgreSQL recycles its segments later; ledger cannot remove them)", len(inWAL), len(f.markers))
}

// TestForgetOnPostgresWithAnOlderTransactionOpenThroughout: a
// transaction of the ledger's database that began before the delete (a
// snapshot, as a long report's) stays open through the whole
// forget. Every rewrite keeps the rows then: forget waits for it (10 s),
// then says the tables could not be rewritten without them, naming it and
// the tables, and the words are indeed still there; once it ends, the
// VACUUM FULL forget's warning asks for removes them.
func TestForgetOnPostgresWithAnOlderTransactionOpenThroughout(t *testing.T) {
	t.Parallel()
	const gone, kept = "f4f4f4f4-0000-4000-8000-000000000001", "c4c4c4c4-0000-4000-8000-000000000002"
	f := newPGForget(t, gone, kept)
	elsewhere, err := f.admin.BeginTx(context.Background(), &sql.TxOptions{Isolation: sql.LevelRepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	defer elsewhere.Rollback()
	// Its snapshot, without a lock on the ledger's tables (one would
	// stop the rewrite at its lock wait instead).
	if _, err := elsewhere.Exec(`SELECT 1`); err != nil {
		t.Fatal(err)
	}
	var pid string
	if err := elsewhere.QueryRow(`SELECT pg_backend_pid()::text`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	out, r := f.forget(t).forgotten(t)
	if r.code != 0 || out.HeapRewritten || !(strings.Contains(out.HeapError, "server process "+pid+")") || strings.Contains(out.HeapError, "server process "+pid+";")) || !strings.Contains(out.HeapError, "messages") {
		t.Errorf("forget with an older transaction open throughout: exit %d %+v %s; want heap_rewritten false, naming process %s and the messages table", r.code, out, r.stderr, pid)
	}
	if found := f.left(t); len(found) == 0 {
		t.Error("forget says the rows' bytes stay, and none does: it should have said heap_rewritten")
	}
	elsewhere.Commit()
	// Every transaction id from here on is newer than forget's delete.
	var after string
	if err := f.admin.QueryRow(`SELECT (pg_current_xact_id()::text::numeric % 4294967296)::text`).Scan(&after); err != nil {
		t.Fatal(err)
	}
	// Other transactions on the server hold VACUUM FULL back as this one
	// did: it is done again until they have ended.
	for deadline := time.Now().Add(2 * time.Minute); ; {
		// ANALYZE first, as forget's advice says: an autovacuum ANALYZE
		// that began before the delete and ended after forget's own can
		// leave live column statistics that sample the deleted rows,
		// which no rewrite removes.
		if _, err := f.admin.Exec(`ANALYZE`); err != nil {
			t.Fatal(err)
		}
		if _, err := f.admin.Exec(`VACUUM FULL`); err != nil {
			t.Fatal(err)
		}
		found := f.left(t)
		if len(found) == 0 {
			break
		}
		if time.Now().After(deadline) {
			// The test server is shared with other tests: a snapshot of
			// theirs older than the delete holds every rewrite back, as
			// forget says — one begun before ours ended, or a later one
			// whose horizon an overlapping older one set (a chain of
			// them can hold it for long). Only with none is a word left
			// a failure.
			var holders string
			if err := f.admin.QueryRow(`SELECT coalesce(string_agg(pid::text || ' in ' || coalesce(datname, '-'), ', '), '')
				FROM pg_stat_activity WHERE pid <> pg_backend_pid()
					AND (age(backend_xid) >= age($1::xid) OR age(backend_xmin) >= age($1::xid))`, after).Scan(&holders); err != nil {
				t.Fatal(err)
			}
			if holders != "" {
				t.Logf("the words stay while other tests' transactions older than ours run (%s)", holders)
				return
			}
			t.Fatalf("after the transaction ended and VACUUM FULL, the tables' files still hold %d of the %d words (%s, ...)", len(found), len(f.markers), found[0])
		}
		time.Sleep(100 * time.Millisecond)
	}
}
