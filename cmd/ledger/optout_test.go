package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/store/storetest"
)

// sessionIDs lists the ids `ledger sessions --json` shows.
func sessionIDs(t *testing.T, home, db string) []string {
	t.Helper()
	r := runCmd(t, home, "", "--db", db, "sessions", "--json")
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	var ss []struct {
		ID string `json:"id"`
	}
	decodeJSON(t, r.stdout, &ss)
	var ids []string
	for _, s := range ss {
		ids = append(ids, s.ID)
	}
	return ids
}

func has(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// lastReceipt is the newest hook receipt of the ledger.
func lastReceipt(t *testing.T, db string) store.HookReceipt {
	t.Helper()
	s, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rs, err := s.HookReceipts(context.Background(), store.ReceiptFilter{})
	if err != nil || len(rs) == 0 {
		t.Fatalf("receipts %v, %v", rs, err)
	}
	last := rs[0]
	for _, r := range rs {
		if r.ID > last.ID {
			last = r
		}
	}
	return last
}

// A paused project: ingest keeps nothing new of it, hooks inject nothing,
// resume gives nothing; forget --project removes what was there; after
// resume-recording new sessions are kept again.
func TestPauseKeepsAProjectOutOfTheLedger(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	project := filepath.Join(home, "src", "client")
	os.MkdirAll(project, 0o755)
	gitInit(t, project)
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	const before, during, after = "dddddddd-1111-4222-8333-444444444401", "dddddddd-1111-4222-8333-444444444402", "dddddddd-1111-4222-8333-444444444403"
	ingest(t, home, db, sampleInProject(t, home, project, before))
	if !has(sessionIDs(t, home, db), before) {
		t.Fatal("the session before the pause was not stored")
	}
	if hits, _ := search(t, home, db, "SessionStore"); len(hits) == 0 {
		t.Fatal("nothing to leave out: no hits before the pause")
	}

	r := runCmdIn(t, home, filepath.Join(project), "", "--db", db, "pause")
	if r.code != 0 || !strings.Contains(r.stdout, "recording paused for "+project) {
		t.Fatalf("pause: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
	path := sampleInProject(t, home, project, during)
	ingest(t, home, db, path)
	if has(sessionIDs(t, home, db), during) {
		t.Fatal("a session of a paused project was stored")
	}
	// A hook in the project (a sub-folder too) does nothing and says why.
	for _, ev := range []string{"SessionStart", "PostToolUse", "Stop", "PreCompact"} {
		in := hookJSON(t, map[string]any{"session_id": during, "transcript_path": path,
			"cwd": filepath.Join(project, "pkg"), "hook_event_name": ev, "source": "startup", "trigger": "manual"})
		r = runCmd(t, home, in, "--db", db, "hook")
		if r.code != 0 || strings.TrimSpace(r.stdout) != "" {
			t.Errorf("%s hook in a paused project: exit %d, stdout %q", ev, r.code, r.stdout)
		}
		if rc := lastReceipt(t, db); rc.Event != ev || rc.Outcome != store.OutcomeNothing || !strings.Contains(rc.Detail, "paused") {
			t.Errorf("%s receipt %+v", ev, rc)
		}
	}
	if has(sessionIDs(t, home, db), during) {
		t.Fatal("a hook stored a session of a paused project")
	}
	// Resume injects nothing, held from before or not.
	if r = runCmdIn(t, home, project, "", "--db", db, "resume"); r.code != exitNotFound || r.stdout != "" {
		t.Errorf("resume in a paused project: exit %d, %q", r.code, r.stdout)
	}
	// What was stored before the pause is not searched meanwhile.
	if hits, _ := search(t, home, db, "SessionStore"); len(hits) != 0 {
		t.Errorf("search finds %d hits of a paused project", len(hits))
	}
	// Listed, then forgotten.
	if r = runCmd(t, home, "", "--db", db, "pause", "--list"); !strings.Contains(r.stdout, project+"  paused") {
		t.Errorf("pause --list: %s", r.stdout)
	}
	if r = runCmd(t, home, "", "--db", db, "forget", "--project", project); r.code != 0 || !strings.Contains(r.stdout, "forgot 1 sessions") {
		t.Fatalf("forget --project: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
	if has(sessionIDs(t, home, db), before) {
		t.Fatal("forget --project left the session")
	}
	if hits, _ := search(t, home, db, "SessionStore"); len(hits) != 0 {
		t.Errorf("search finds %d hits of a forgotten project", len(hits))
	}

	if r = runCmd(t, home, "", "--db", db, "resume-recording", "--project", project); r.code != 0 || !strings.Contains(r.stdout, "recording resumed") {
		t.Fatalf("resume-recording: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
	ingest(t, home, db, sampleInProject(t, home, project, after))
	if !has(sessionIDs(t, home, db), after) {
		t.Fatal("a session after resume-recording was not stored")
	}
}

// A .ledgerignore at a repository's top folder keeps it out: sessions in a
// sub-folder included, with no command.
func TestLedgerIgnoreFileKeepsARepositoryOut(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	repo := filepath.Join(home, "src", "secret")
	sub := filepath.Join(repo, "svc")
	os.MkdirAll(sub, 0o755)
	gitInit(t, repo)
	if err := os.WriteFile(filepath.Join(repo, ".ledgerignore"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	const id = "eeeeeeee-1111-4222-8333-444444444401"
	path := sampleInProject(t, home, sub, id)
	ingest(t, home, db, path)
	if ids := sessionIDs(t, home, db); len(ids) != 0 {
		t.Fatalf("sessions of an ignored repository stored: %v", ids)
	}
	in := hookJSON(t, map[string]any{"session_id": id, "transcript_path": path, "cwd": sub,
		"hook_event_name": "SessionStart", "source": "startup"})
	if r := runCmd(t, home, in, "--db", db, "hook"); r.code != 0 || strings.TrimSpace(r.stdout) != "" {
		t.Errorf("SessionStart in an ignored repository: exit %d, %q", r.code, r.stdout)
	}
	if rc := lastReceipt(t, db); rc.Outcome != store.OutcomeNothing || !strings.Contains(rc.Detail, ".ledgerignore") {
		t.Errorf("receipt %+v", rc)
	}
	if ids := sessionIDs(t, home, db); len(ids) != 0 {
		t.Fatalf("the hook stored sessions of an ignored repository: %v", ids)
	}
}

// TestIgnoredProjectsListed: a repository kept out by its .ledgerignore
// before the ledger held anything of it is still named by `pause --list`
// (text and JSON) and `doctor`, with the file that keeps it out; the
// ledger keeps its folder and that file's path only, nothing of the
// sessions skipped; once the file is gone it is listed no more.
func TestIgnoredProjectsListed(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	repo := filepath.Join(home, "src", "secret")
	os.MkdirAll(filepath.Join(repo, "svc"), 0o755)
	gitInit(t, repo)
	ignore := filepath.Join(repo, ".ledgerignore")
	if err := os.WriteFile(ignore, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	// The sighting is stamped by the App's clock, like every record.
	seen := time.Date(2026, 5, 4, 3, 2, 1, 0, time.UTC)
	ingestWith(t, func(t *testing.T, home, stdin string, args ...string) result {
		c := newCmd(home, stdin)
		c.app.Now = func() time.Time { return seen }
		return c.run(args...)
	}, home, db, sampleInProject(t, home, filepath.Join(repo, "svc"), "eeeeeeee-1111-4222-8333-444444444402"))
	if ids := sessionIDs(t, home, db); len(ids) != 0 {
		t.Fatalf("sessions of an ignored repository stored: %v", ids)
	}
	if r := runCmd(t, home, "", "--db", db, "pause", "--list"); r.code != 0 || !strings.Contains(r.stdout, repo+"  ignored by "+ignore+"\n") {
		t.Errorf("pause --list: exit %d, %q", r.code, r.stdout)
	}
	var ex []struct{ Project, How, File string }
	decodeJSON(t, runCmd(t, home, "", "--db", db, "pause", "--list", "--json").stdout, &ex)
	if len(ex) != 1 || ex[0].Project != repo || ex[0].How != "ledgerignore" || ex[0].File != ignore {
		t.Errorf("pause --list --json: %+v", ex)
	}
	if r := runCmd(t, home, "", "--db", db, "doctor"); !strings.Contains(r.stdout, "excluded projects:\n  "+repo+" (ignored by "+ignore+")\n") {
		t.Errorf("doctor: exit %d, %s", r.code, r.stdout)
	}
	// Nothing of the sessions: the sample's words are in no table.
	raw := rawDB(t, db)
	for _, table := range []string{"messages", "sessions", "ignored_projects"} {
		var n int
		if err := raw.Get(&n, `SELECT count(*) FROM `+table+` WHERE CAST(`+map[string]string{"messages": "text", "sessions": "title", "ignored_projects": "project || file"}[table]+` AS TEXT) LIKE '%SessionStore%'`); err != nil || n != 0 {
			t.Errorf("%s holds the skipped session's text: %d, %v", table, n, err)
		}
	}
	var rows int
	if err := raw.Get(&rows, `SELECT count(*) FROM messages`); err != nil || rows != 0 {
		t.Errorf("%d messages stored, %v", rows, err)
	}
	var at string
	if err := raw.Get(&at, `SELECT at FROM ignored_projects`); err != nil || !strings.HasPrefix(at, "2026-05-04") {
		t.Errorf("ignored project's sighting stamped %q (%v), want the App's clock's 2026-05-04", at, err)
	}
	raw.Close()
	if err := os.Remove(ignore); err != nil {
		t.Fatal(err)
	}
	if r := runCmd(t, home, "", "--db", db, "pause", "--list"); !strings.Contains(r.stdout, "no project is kept out of the ledger") {
		t.Errorf("pause --list after the file is gone: %q", r.stdout)
	}
}
