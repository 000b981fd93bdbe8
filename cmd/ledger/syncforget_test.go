package main

import (
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentledger/ledger/store/storetest"
)

// TestSyncAfterForgetOnServer: a session forgotten on the team ledger is
// not pushed again by a later sync (its tombstone holds), and is no error;
// a session the server refuses fails alone: the others are pushed, the
// failure is one line (exit 1), and the next sync pushes it once the
// server takes it. Before, the forgotten session's note failed its foreign
// key, and that error stopped the sync of every session after it.
func TestSyncAfterForgetOnServer(t *testing.T) {
	t.Parallel()
	url := storetest.MigratedPG(t)
	home := t.TempDir()
	local := corpusFile(t, filepath.Join(home, "local.db"))
	var sessions []struct{ ID string }
	decodeJSON(t, ledgerEnv(t, home, nil, "--db", local, "sessions", "--json").stdout, &sessions)
	if len(sessions) < 3 {
		t.Fatalf("%d sessions in the corpus", len(sessions))
	}
	sync := func() (result, map[string]any) {
		r := ledgerEnv(t, home, []string{"LEDGER_HOST=alice"}, "--db", local, "sync", "--to", url, "--json")
		var out map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Errorf("sync --json: exit %d, stderr %q, stdout not one JSON document: %v", r.code, r.stderr, err)
		}
		return r, out
	}
	if r, _ := sync(); r.code != 0 {
		t.Fatalf("first sync: %s", r.stderr)
	}
	gone, poisoned, fine := sessions[0].ID, sessions[1].ID, sessions[2].ID
	if r := ledgerEnv(t, home, nil, "--db", url, "forget", gone); r.code != 0 {
		t.Fatalf("forget on the server: %s", r.stderr)
	}
	for id, text := range map[string]string{gone: "after the forget", poisoned: "poison pill", fine: "pin the toolchain"} {
		if r := ledgerEnv(t, home, nil, "--db", local, "note", id, "--decision", text); r.code != 0 {
			t.Fatalf("note: %s", r.stderr)
		}
	}
	// The server refuses one session's note (a trigger of the test
	// database): a failure of that session alone.
	admin, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec(`CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.text LIKE '%poison%' THEN RAISE EXCEPTION 'poisoned note refused'; END IF; RETURN NEW; END $$;
		CREATE TRIGGER refuse_poison BEFORE INSERT ON notes FOR EACH ROW EXECUTE FUNCTION refuse_poison()`); err != nil {
		t.Fatal(err)
	}
	r, out := sync()
	if r.code != 1 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, poisoned) || !strings.Contains(r.stderr, "poisoned note refused") ||
		strings.Contains(r.stderr, gone) {
		t.Errorf("sync with one session refused: exit %d, %q; want exit 1 and one line naming %s alone", r.code, r.stderr, poisoned)
	}
	if out["notes"] != 1.0 || out["forgotten"] != 1.0 {
		t.Errorf("sync pushed %v; want the fine session's note, and the forgotten session counted", out)
	}
	search := func(q string) string {
		return ledgerEnv(t, home, nil, "--db", url, "search", "--json", "--kind", "note", q).stdout
	}
	if !strings.Contains(search("toolchain"), fine) {
		t.Errorf("the note of %s did not reach the server", fine)
	}
	if _, err := admin.Exec(`DROP TRIGGER refuse_poison ON notes`); err != nil {
		t.Fatal(err)
	}
	r, out = sync()
	if r.code != 0 || out["notes"] != 1.0 || !strings.Contains(search("poison"), poisoned) {
		t.Errorf("sync once the server takes it: exit %d %q, %v", r.code, r.stderr, out)
	}
	if r, out := sync(); r.code != 0 || out["notes"] != 0.0 || out["forgotten"] != 0.0 {
		t.Errorf("a sync with nothing new: exit %d %q, %v", r.code, r.stderr, out)
	}
	// The forgotten session stays forgotten on the server.
	if r := ledgerEnv(t, home, nil, "--db", url, "sessions", "--json"); strings.Contains(r.stdout, gone) || strings.Contains(search("forget"), gone) {
		t.Errorf("the session forgotten on the server is back: %.300s", r.stdout)
	}
}
