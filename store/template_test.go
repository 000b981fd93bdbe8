package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/agentledger/ledger/store/pgtest"
)

// A test whose subject is not the migrations starts from a migrated
// template rather than migrating a new ledger itself: under -race,
// migrating a new SQLite file costs ~0.6 CPU-seconds, and a PostgreSQL
// database seven migrations' statements on the server. The template is
// made once per test process by Open itself (TestTemplateIsAFreshLedger
// checks that a copy is what Open makes); the migration tests open new
// files and databases themselves.

// sqliteTemplate is a migrated ledger file's bytes, made once per test
// process.
var sqliteTemplate = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "ledger-template-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "ledger.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		return nil, err
	}
	// Closing checkpoints the WAL into the file and empties it: the file
	// alone is the ledger.
	if err := s.Close(); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
})

// migratedFile writes a copy of the migrated template at path, in a folder
// made as Open makes it, and returns path.
func migratedFile(t testing.TB, path string) string {
	t.Helper()
	b, err := sqliteTemplate()
	if err != nil {
		t.Fatalf("make the template ledger: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// migratedPG returns a new database on the test server, a copy of one
// Open migrated.
func migratedPG(t testing.TB) string {
	t.Helper()
	return pgtest.Migrated(t, "store", func(url string) error {
		s, err := Open(context.Background(), url, WithLocalPath(filepath.Join(os.TempDir(), "ledger-template.db")))
		if err != nil {
			return err
		}
		return s.Close()
	})
}

// schemaDump is what a ledger's schema is: its objects' definitions, the
// migrations goose recorded as applied, and the version mark.
func schemaDump(t *testing.T, s *Store) []string {
	t.Helper()
	var dump []string
	var objects, applied []string
	var err error
	if _, ok := s.d.(sqliteDialect); ok {
		err = s.db.Select(&objects, `SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM sqlite_master ORDER BY type, name`)
		var mark int64
		if err == nil {
			err = s.db.Get(&mark, `PRAGMA user_version`)
		}
		dump = append(dump, fmt.Sprint("user_version ", mark))
	} else {
		err = s.db.Select(&objects, `SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || coalesce(column_default, '')
			FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, column_name`)
		var more []string
		if err == nil {
			err = s.db.Select(&more, `SELECT tablename || ' ' || indexname || ' ' || indexdef FROM pg_indexes
				WHERE schemaname = current_schema() ORDER BY tablename, indexname`)
		}
		objects = append(objects, more...)
		if err == nil {
			err = s.db.Select(&more, `SELECT event_object_table || ' ' || trigger_name || ' ' || event_manipulation || ' ' || action_statement
				FROM information_schema.triggers WHERE trigger_schema = current_schema() ORDER BY 1`)
		}
		objects = append(objects, more...)
	}
	if err == nil {
		err = s.db.Select(&applied, `SELECT version_id || ' ' || is_applied FROM goose_db_version ORDER BY id`)
	}
	if err != nil {
		t.Fatal(err)
	}
	return slices.Concat(dump, objects, applied)
}

// TestTemplateIsAFreshLedger checks that the template copies the tests
// start from are what Open makes of a new file or an empty database: the
// same schema, the same migrations recorded, the same version mark; and
// that Open of a copy migrates nothing more.
func TestTemplateIsAFreshLedger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		name        string
		fresh, copy func(t *testing.T) string
	}{
		{"sqlite",
			func(t *testing.T) string { return filepath.Join(t.TempDir(), "ledger.db") },
			func(t *testing.T) string { return migratedFile(t, filepath.Join(t.TempDir(), "ledger.db")) }},
		{"postgres",
			func(t *testing.T) string { return pgtest.URL(t) },
			func(t *testing.T) string { return migratedPG(t) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fresh := openAt(t, c.fresh(t))
			copied := openAt(t, c.copy(t))
			want, got := schemaDump(t, fresh), schemaDump(t, copied)
			if len(want) < 10 {
				t.Fatalf("the dump of a fresh ledger is too short to compare: %q", want)
			}
			if !slices.Equal(got, want) {
				t.Errorf("a template copy differs from a fresh ledger:\n got %q\nwant %q", got, want)
			}
			target, err := TargetVersion()
			if c.name == "postgres" {
				target, err = postgresDialect{}.target()
			}
			if err != nil {
				t.Fatal(err)
			}
			if v, err := copied.SchemaVersion(ctx); err != nil || v != target {
				t.Errorf("copy's schema version = %d, %v; want %d", v, err, target)
			}
		})
	}
}
