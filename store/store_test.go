package store

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/migrations"
)

// openTemp opens a new ledger in a temporary folder: a copy of the
// migrated template (see sqliteTemplate).
func openTemp(t testing.TB, opts ...Option) *Store {
	t.Helper()
	s, err := Open(context.Background(), migratedFile(t, filepath.Join(t.TempDir(), "sub", "ledger.db")), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// openAt opens the ledger at path, closed when the test ends.
func openAt(t testing.TB, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func tableExists(t *testing.T, s *Store, name string) bool {
	t.Helper()
	var n int
	if err := s.db.Get(&n, `SELECT count(*) FROM sqlite_master WHERE name = ?`, name); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

func TestOpenCreatesOwnerOnlyFiles(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a b", "ledger")
	path := filepath.Join(dir, "ledger.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for p, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, path: 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode(); got != want {
			t.Errorf("mode of %s = %v, want %v", p, got, want)
		}
	}
	for _, name := range []string{"goose_db_version", "sessions", "messages", "messages_fts", "handoffs_fts", "compactions_fts", "cursors"} {
		if !tableExists(t, s, name) {
			t.Errorf("table %s missing", name)
		}
	}
	var mode string
	if err := s.db.Get(&mode, `PRAGMA journal_mode`); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	var fk int
	if err := s.db.Get(&fk, `PRAGMA foreign_keys`); err != nil || fk != 1 {
		t.Errorf("foreign_keys = %d, %v; want 1", fk, err)
	}
}

func TestMigrateUpDownUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTemp(t)
	want, err := TargetVersion()
	if err != nil || want < 1 {
		t.Fatalf("TargetVersion = %d, %v", want, err)
	}
	if v, _ := s.SchemaVersion(ctx); v != want {
		t.Fatalf("version after open = %d, want %d", v, want)
	}
	if err := s.MigrateDown(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.SchemaVersion(ctx); v != 0 {
		t.Fatalf("version after down = %d, want 0", v)
	}
	for _, name := range []string{"sessions", "messages", "messages_fts", "handoffs", "compactions", "cursors"} {
		if tableExists(t, s, name) {
			t.Errorf("table %s still there after down", name)
		}
	}
	if err := s.MigrateUp(ctx); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.SchemaVersion(ctx); v != want {
		t.Fatalf("version after up again = %d, want %d", v, want)
	}
	if !tableExists(t, s, "messages_fts") {
		t.Error("messages_fts missing after up again")
	}
}

// TestSchemaVersionMark checks the schema version kept in the header's
// user_version: set by a migration, moved by one down, and read back the
// same as goose's table says; a ledger without it (made before it) reads
// goose's and gets it at its next open.
func TestSchemaVersionMark(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	s := openAt(t, path)
	want, _ := TargetVersion()
	mark := func() int64 {
		t.Helper()
		var v int64
		if err := s.db.Get(&v, `PRAGMA user_version`); err != nil {
			t.Fatal(err)
		}
		return v
	}
	check := func(when string, v int64) {
		t.Helper()
		g, err := gooseVersion(ctx, s.db, s.d)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.SchemaVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m := mark(); m != v || g != v || got != v {
			t.Errorf("%s: user_version %d, goose %d, SchemaVersion %d; want %d", when, m, g, got, v)
		}
	}
	check("new ledger", want)
	if err := s.MigrateDown(ctx, 3); err != nil {
		t.Fatal(err)
	}
	check("down to 3", 3)
	if err := s.MigrateUp(ctx); err != nil {
		t.Fatal(err)
	}
	check("up again", want)

	// A ledger from before the mark.
	if _, err := s.db.Exec(`PRAGMA user_version = 0`); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.SchemaVersion(ctx); got != want {
		t.Errorf("SchemaVersion without the mark = %d, want goose's %d", got, want)
	}
	r, err := Open(ctx, path, ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := r.SchemaVersion(ctx); got != want {
		t.Errorf("a reader without the mark: SchemaVersion %d, want %d", got, want)
	}
	r.Close()
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s2.Close()
	check("reopened", want)
}

// TestMarkWaitsForNoLock: opening a ledger made before the schema mark
// while another process holds the write lock does not wait for it (the
// mark is left for a later open), and a later open sets it.
func TestMarkWaitsForNoLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	s := openAt(t, path)
	if _, err := s.db.Exec(`PRAGMA user_version = 0`); err != nil {
		t.Fatal(err)
	}
	holder, err := sqlx.Open("sqlite", DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	tx, err := holder.Beginx() // _txlock=immediate: the write lock
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("open while another connection writes: %v", err)
	}
	if d := time.Since(start); d > 2500*time.Millisecond {
		t.Errorf("open waited %v for the write lock (busy_timeout is 5 s)", d)
	}
	s2.Close()
	var mark int64
	if err := s.db.Get(&mark, `PRAGMA user_version`); err != nil || mark != 0 {
		t.Errorf("mark while locked = %d, %v; want 0 (left for later)", mark, err)
	}
	tx.Rollback()
	s3, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s3.Close()
	want, _ := TargetVersion()
	if err := s.db.Get(&mark, `PRAGMA user_version`); err != nil || mark != want {
		t.Errorf("mark after the lock = %d, %v; want %d", mark, err, want)
	}
}

func TestSQLiteVersionIsTheLibrarys(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	var lib string
	if err := s.db.Get(&lib, `SELECT sqlite_version()`); err != nil {
		t.Fatal(err)
	}
	if got, err := s.SQLiteVersion(context.Background()); err != nil || got != lib {
		t.Errorf("SQLiteVersion = %q, %v; sqlite_version() = %q", got, err, lib)
	}
}

func TestOpenTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	// Two opens at once on a new file race to migrate; both must succeed.
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(ctx, path)
			if err == nil {
				err = s.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("open %d: %v", i, err)
		}
	}
	s1, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	var applied int
	if err := s2.db.Get(&applied, `SELECT count(*) FROM goose_db_version WHERE version_id > 0`); err != nil {
		t.Fatal(err)
	}
	// Numbers may skip (a migration of another branch): count the files.
	files, _ := fs.Glob(migrations.FS, "*.sql")
	if want := len(files); applied != want {
		t.Errorf("migrations applied = %d, want %d (each once)", applied, want)
	}
}

func TestOpenNewerSchemaFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTemp(t)
	if _, err := s.db.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, 1)`); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, s.Path()); err == nil {
		t.Fatal("Open of a newer schema succeeded, want an error")
	}
	// A newer ledger marks its version in the header too (schemaVersion):
	// a reader goes by that.
	if _, err := s.db.Exec(`PRAGMA user_version = 9999`); err != nil {
		t.Fatal(err)
	}
	if r, err := Open(ctx, s.Path(), ReadOnly()); err == nil {
		r.Close()
		t.Fatal("a read-only Open of a newer schema succeeded, want an error")
	}
}

// ftsCheck runs FTS5's integrity-check on an external-content table: it
// fails when the index and the content table disagree.
func ftsCheck(t *testing.T, s *Store, table string) {
	t.Helper()
	if _, err := s.db.Exec(`INSERT INTO ` + table + ` (` + table + `, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Fatalf("%s integrity-check: %v", table, err)
	}
}

func ftsCount(t *testing.T, s *Store, table, match string) int {
	t.Helper()
	var n int
	if err := s.db.Get(&n, `SELECT count(*) FROM `+table+` WHERE `+table+` MATCH ?`, match); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestFTSTriggersKeepIndexInStep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTemp(t)
	w, err := s.NewWriter(ctx, "claude")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	msg := func(uuid, text string) compact.Message {
		return compact.Message{UUID: uuid, SessionID: "s1", Role: compact.RoleUser, Time: at,
			Blocks: []compact.Block{{Kind: compact.BlockText, Text: text}}}
	}
	for _, m := range []compact.Message{msg("u1", "the flaky TestSessionExpiry again"), msg("u2", "edit pkg/auth/session_store.go")} {
		if _, err := w.AddMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(ctx, nil); err != nil {
		t.Fatal(err)
	}
	ftsCheck(t, s, "messages_fts")
	if got := ftsCount(t, s, "messages_fts", `"session_store.go"`); got != 1 {
		t.Errorf("after insert: %d hits for session_store.go, want 1", got)
	}
	// update
	if _, err := s.db.Exec(`UPDATE messages SET text = 'renamed to token_store.go' WHERE uuid = 'u2'`); err != nil {
		t.Fatal(err)
	}
	ftsCheck(t, s, "messages_fts")
	if got := ftsCount(t, s, "messages_fts", `"session_store.go"`); got != 0 {
		t.Errorf("after update: %d hits for the old text, want 0", got)
	}
	if got := ftsCount(t, s, "messages_fts", `"token_store.go"`); got != 1 {
		t.Errorf("after update: %d hits for the new text, want 1", got)
	}
	// delete
	if _, err := s.db.Exec(`DELETE FROM messages WHERE uuid = 'u1'`); err != nil {
		t.Fatal(err)
	}
	ftsCheck(t, s, "messages_fts")
	if got := ftsCount(t, s, "messages_fts", `TestSessionExpiry`); got != 0 {
		t.Errorf("after delete: %d hits, want 0", got)
	}
	// handoffs and compactions: insert, update, delete
	for _, tc := range []struct{ table, fts, col, insert string }{
		{"handoffs", "handoffs_fts", "markdown", `INSERT INTO handoffs (session_id, created_at, trigger, sections, markdown, tokens) VALUES ('s1', ?, 'manual', '{}', 'alpha beta', 2)`},
		{"compactions", "compactions_fts", "summary", `INSERT INTO compactions (session_id, at, trigger, summary, source) VALUES ('s1', ?, 'auto', 'alpha beta', 'cli')`},
	} {
		t.Run(tc.table, func(t *testing.T) {
			if _, err := s.db.Exec(tc.insert, at); err != nil {
				t.Fatal(err)
			}
			ftsCheck(t, s, tc.fts)
			if got := ftsCount(t, s, tc.fts, "alpha"); got != 1 {
				t.Errorf("after insert: %d hits, want 1", got)
			}
			if _, err := s.db.Exec(`UPDATE ` + tc.table + ` SET ` + tc.col + ` = 'gamma'`); err != nil {
				t.Fatal(err)
			}
			ftsCheck(t, s, tc.fts)
			if a, g := ftsCount(t, s, tc.fts, "alpha"), ftsCount(t, s, tc.fts, "gamma"); a != 0 || g != 1 {
				t.Errorf("after update: alpha %d gamma %d, want 0 and 1", a, g)
			}
			if _, err := s.db.Exec(`DELETE FROM ` + tc.table); err != nil {
				t.Fatal(err)
			}
			ftsCheck(t, s, tc.fts)
			if g := ftsCount(t, s, tc.fts, "gamma"); g != 0 {
				t.Errorf("after delete: %d hits, want 0", g)
			}
		})
	}
}

func TestSessionPrefix(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTemp(t)
	for _, id := range []string{"abc111", "abc222", "abd333"} {
		if _, err := s.db.Exec(`INSERT INTO sessions (id, source) VALUES (?, 'claude')`, id); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		arg, want string
		ambiguous bool
		notFound  bool
	}{
		{arg: "abc111", want: "abc111"},
		{arg: "abd", want: "abd333"},
		{arg: "abc2", want: "abc222"},
		{arg: "abc", ambiguous: true},
		{arg: "zzz", notFound: true},
		{arg: "", notFound: true},
	}
	for _, tc := range tests {
		t.Run(tc.arg, func(t *testing.T) {
			got, err := s.Session(ctx, tc.arg)
			var amb *AmbiguousError
			switch {
			case tc.ambiguous:
				if !errors.As(err, &amb) || len(amb.Candidates) != 2 {
					t.Fatalf("err = %v, want ambiguous with 2 candidates", err)
				}
			case tc.notFound:
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("err = %v, want ErrNotFound", err)
				}
			default:
				if err != nil || got.ID != tc.want {
					t.Fatalf("Session(%q) = %q, %v; want %q", tc.arg, got.ID, err, tc.want)
				}
			}
		})
	}
}

// BenchmarkOpenMigrated measures opening a database that is already
// current: the cost every `ledger` start pays.
func BenchmarkOpenMigrated(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "ledger.db")
	s, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	s.Close()
	b.ResetTimer()
	for b.Loop() {
		s, err := Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
