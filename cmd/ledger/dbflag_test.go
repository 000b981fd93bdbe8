package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDBFlagNotALedger: a --db (or $LEDGER_DB) value that is not a
// postgres:// URL nor a usable SQLite path is a usage error in one line
// (exit 2) that creates nothing: URL-like values of other schemes, a blank
// value, a folder, a SQLite database that is not a ledger (left as it was,
// not migrated), a file that is not a database. Before, URL-like values
// became SQLite files named "postgres:" and the like, a foreign database
// was given ledger's 61 tables, and a folder was "disk I/O error (10)".
func TestDBFlagNotALedger(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	work := filepath.Join(home, "work")
	os.MkdirAll(work, 0o700)
	foreign := filepath.Join(home, "app.db")
	db, err := sql.Open("sqlite", "file:"+foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers (name) VALUES ('ada')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, _ := os.ReadFile(foreign)
	text := filepath.Join(home, "notes.txt")
	os.WriteFile(text, []byte(strings.Repeat("not a database\n", 500)), 0o600)
	for _, tc := range []struct {
		db, want string
	}{
		{"postgres:/x", "not a postgres:// or postgresql:// URL"},
		{"postgres:x", "not a postgres:// or postgresql:// URL"},
		{"mysql://u@h/db", "not a postgres:// or postgresql:// URL"},
		{"sqlite://ledger.db", "not a postgres:// or postgresql:// URL"},
		{"file:ledger.db", "not a postgres:// or postgresql:// URL"},
		{" ", "blank"},
		{home, "is a folder"},
		{foreign, "not a ledger"},
		{text, "not a SQLite database"},
	} {
		for _, args := range [][]string{{"sessions"}, {"ingest", work}} {
			r := runBinIn(t, home, work, "", append([]string{"--db", tc.db}, args...)...)
			if r.code != 2 || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "ledger: ") || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("--db %q %s: exit %d, %q; want exit 2 and one line saying %q", tc.db, args[0], r.code, r.stderr, tc.want)
			}
		}
		r := execLedger(t, home, work, "", []string{"LEDGER_DB=" + tc.db}, "sessions")
		named := tc.db != foreign && tc.db != text // found out at the open, which names the file
		if r.code != 2 || named && !strings.Contains(r.stderr, "$LEDGER_DB") || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("LEDGER_DB=%q sessions: exit %d, %q", tc.db, r.code, r.stderr)
		}
	}
	if left, _ := os.ReadDir(work); len(left) != 0 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Errorf("files created in the working folder: %q", names)
	}
	if after, _ := os.ReadFile(foreign); string(after) != string(before) {
		t.Errorf("the foreign database was changed")
	}
	// A path whose name has a colon is still a file, written so.
	if r := runBinIn(t, home, work, "", "--db", "./notes:v2.db", "init"); r.code != 0 {
		t.Errorf("--db ./notes:v2.db: exit %d %s", r.code, r.stderr)
	}
}
