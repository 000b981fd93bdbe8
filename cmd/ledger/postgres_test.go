package main

import (
	"bufio"
	"bytes"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unicode"

	"github.com/agentledger/ledger/store/pgtest"
	"github.com/agentledger/ledger/store/storetest"
)

// TestDBURLIsNeverAFile: a postgres:// --db or $LEDGER_DB is a server;
// one that cannot be reached is a one-line error, and no SQLite file (or
// folder called postgres:) appears.
func TestDBURLIsNeverAFile(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	for _, url := range []string{"postgres://nobody@127.0.0.1:1/team", "postgresql://nobody@127.0.0.1:1/team"} {
		r := runBinIn(t, home, dir, "", "--db", url, "sessions")
		if r.code != exitFailure || !strings.HasPrefix(r.stderr, "ledger: open database "+url) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("--db %s: exit %d, stderr %q", url, r.code, r.stderr)
		}
	}
	r := runApp(t, map[string]string{"HOME": home, "LEDGER_DB": "postgres://nobody@127.0.0.1:1/team"}, "ingest", dir)
	if r.code != exitFailure || !strings.Contains(r.stderr, "127.0.0.1:1") {
		t.Errorf("$LEDGER_DB: exit %d, stderr %q", r.code, r.stderr)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) > 0 {
		t.Errorf("files made in the working folder: %v", entries)
	}
	if _, err := os.Stat("postgres:"); err == nil {
		t.Errorf("a folder called postgres: was made")
	}
}

// ledgerEnv runs a command line in-process with a clean environment and
// these extra variables.
func ledgerEnv(t *testing.T, home string, env []string, args ...string) result {
	t.Helper()
	return newCmd(home, "", env...).run(args...)
}

// ingestCorpus ingests the corpus into db with the built binary: the
// ledger these tests compare or push is their setup, several times faster
// outside the race detector (TestIngestCorpus ingests it in-process).
func ingestCorpus(t *testing.T, home, db, corpus string) result {
	t.Helper()
	return execLedger(t, home, "", "", nil, "--db", db, "ingest", corpus)
}

// corpusFile writes at db a SQLite ledger that has ingested the corpus
// folder, as ingestCorpus leaves it, for the tests whose starting point it
// is (what they compare, push or serve). The ingest runs once per test
// binary, by the built binary; each caller gets a copy.
func corpusFile(t *testing.T, db string) string {
	t.Helper()
	corpus := corpusDir(t)
	corpusIngested.copyTo(t, db, func(dir string) (string, result) {
		db := filepath.Join(dir, "ledger.db")
		return db, ingestCorpus(t, dir, db, corpus)
	})
	return db
}

// corpusIngested is corpusFile's ledger.
var corpusIngested onceLedger

// corpusPG returns a new database on the test server holding the corpus
// folder as ingestCorpus leaves it: a copy of a template database the
// built binary ingested it into once per test binary.
func corpusPG(t *testing.T) string {
	t.Helper()
	corpus := corpusDir(t)
	return pgtest.Migrated(t, "corpus", func(url string) error {
		if r := ingestCorpus(t, t.TempDir(), url, corpus); r.code != 0 {
			return fmt.Errorf("ingest the corpus: exit %d: %s", r.code, r.stderr)
		}
		return nil
	})
}

// pendingSearch files the pending lists of the team ledger's GIN indexes
// and says how many pages they held: an ingest and a sync leave none
// (store.SettleSearch).
func pendingSearch(t *testing.T, url string) int64 {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.QueryRow(`SELECT sum(gin_clean_pending_list(i::regclass))
		FROM unnest(ARRAY['messages_tsv', 'handoffs_tsv', 'compactions_tsv', 'notes_tsv']) AS i`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

type ledgerCounts struct {
	Sessions    int64 `json:"sessions"`
	Messages    int64 `json:"messages"`
	Handoffs    int64 `json:"handoffs"`
	Compactions int64 `json:"compactions"`
}

// counts is what doctor counts in the ledger at db. The built binary
// counts: doctor's integrity checks of a corpus's ledger, which come with
// the counts, cost seconds under the race detector.
func counts(t *testing.T, home, db string) ledgerCounts {
	t.Helper()
	r := execLedger(t, home, "", "", nil, "--db", db, "doctor", "--json")
	if r.code != 0 {
		t.Fatalf("doctor: %d %s", r.code, r.stderr)
	}
	var c ledgerCounts
	decodeJSON(t, r.stdout, &c)
	return c
}

// TestTeamLedgerConcurrentIngest: eight machines ingest the same sessions
// (a part of the corpus: every machine writes every one of them) into one
// server at once; the server holds exactly what one SQLite ingest of them
// holds, and each session once.
func TestTeamLedgerConcurrentIngest(t *testing.T) {
	t.Parallel()
	corpus := corpusPart(t)
	url := storetest.MigratedPG(t)
	home := t.TempDir()
	local := filepath.Join(home, "local.db")
	if r := execLedger(t, home, "", "", nil, append([]string{"--db", local, "ingest"}, corpus...)...); r.code != 0 {
		t.Fatalf("sqlite ingest: %s", r.stderr)
	}
	want := counts(t, home, local)
	if r := ledgerEnv(t, home, nil, "--db", url, "init"); r.code != 0 {
		t.Fatalf("init: %s", r.stderr)
	}
	var wg sync.WaitGroup
	results := make([]result, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Processes, as eight machines are.
			results[i] = execLedger(t, home, "", "", []string{"LEDGER_HOST=machine-" + string(rune('a'+i))}, append([]string{"--db", url, "ingest"}, corpus...)...)
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 {
			t.Errorf("ingest %d: exit %d: %s", i, r.code, r.stderr)
		}
	}
	if got := counts(t, home, url); got != want {
		t.Errorf("server holds %+v; one SQLite ingest holds %+v", got, want)
	}
	if n := pendingSearch(t, url); n != 0 {
		t.Errorf("%d pages left pending in the GIN indexes: every search reads them", n)
	}
	// Each machine keeps its own cursors: a second run on one of them reads nothing new.
	r := ledgerEnv(t, home, []string{"LEDGER_HOST=machine-a"}, append([]string{"--db", url, "ingest", "--json"}, corpus...)...)
	var again struct{ Messages int }
	decodeJSON(t, r.stdout, &again)
	if r.code != 0 || again.Messages != 0 {
		t.Errorf("second ingest on machine-a: %d messages, %s", again.Messages, r.stderr)
	}
	var sessions []struct{ Host string }
	decodeJSON(t, ledgerEnv(t, home, nil, "--db", url, "sessions", "--json").stdout, &sessions)
	for _, s := range sessions {
		if !strings.HasPrefix(s.Host, "machine-") {
			t.Errorf("session host %q, want one of the machines", s.Host)
		}
	}
}

// parityQueries are searches the corpus answers in many ways: words,
// phrases, prefixes, paths, exclusions, OR, filters.
var parityQueries = [][]string{
	{"error"}, {"test"}, {"migration"}, {"timeout"}, {`"go test"`}, {"config*"}, {"session_store.go"},
	{"README.md"}, {"git commit"}, {"error -test"}, {"docker OR kubernetes"}, {"func main"}, {"install*"},
	{"permission denied"}, {"TODO"}, {"npm"}, {"error", "--role", "assistant"}, {"test", "--kind", "compaction"},
	{"fix", "--role", "user"}, {"api key"},
}

// TestSearchParity: the same queries find the same sessions on SQLite and
// on PostgreSQL holding the same corpus.
func TestSearchParity(t *testing.T) {
	t.Parallel()
	url := corpusPG(t)
	home := t.TempDir()
	local := corpusFile(t, filepath.Join(home, "local.db"))
	found := 0
	for _, q := range parityQueries {
		var sets [2][]string
		for i, db := range []string{local, url} {
			r := ledgerEnv(t, home, nil, append([]string{"--db", db, "search", "--json", "--limit", "1000"}, q...)...)
			if r.code != 0 {
				t.Fatalf("search %q on %s: %s", q, db, r.stderr)
			}
			var hits []struct{ Session string }
			decodeJSON(t, r.stdout, &hits)
			for _, h := range hits {
				if !slices.Contains(sets[i], h.Session) {
					sets[i] = append(sets[i], h.Session)
				}
			}
			slices.Sort(sets[i])
		}
		if !slices.Equal(sets[0], sets[1]) {
			t.Errorf("search %q: SQLite finds %v, PostgreSQL %v", q, sets[0], sets[1])
		}
		if len(sets[0]) > 0 {
			found++
		}
	}
	if found < len(parityQueries)*3/4 {
		t.Errorf("only %d of %d queries found anything: the parity says little", found, len(parityQueries))
	}
}

// TestRareWordsParity: the corpus's messages reach the team ledger with
// the tsvector the server would have made of each (the client makes it,
// store/pgtsv.go), and a word only one message holds, made of letters and
// digits (an id, a hash, a version: what people search a ledger for, and
// where the server's parser splits words its own way: 81e0c76 is 81e0 and
// c76), finds that message's session on SQLite and on PostgreSQL.
func TestRareWordsParity(t *testing.T) {
	t.Parallel()
	url := corpusPG(t)
	home := t.TempDir()
	local := corpusFile(t, filepath.Join(home, "local.db"))
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var all, differ int
	if err := db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE tsv IS DISTINCT FROM ledger_text_tsv(text)) FROM messages`).Scan(&all, &differ); err != nil {
		t.Fatal(err)
	}
	if all < 1000 || differ != 0 {
		t.Errorf("%d of the corpus's %d messages have a tsvector the server would not have made", differ, all)
	}
	rows, err := db.Query(`SELECT session_id, text FROM messages ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	held, session := map[string]int{}, map[string]string{}
	for rows.Next() {
		var sid, text string
		if err := rows.Scan(&sid, &text); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if len(w) >= 6 && !seen[w] && strings.ContainsAny(w, "0123456789") && strings.ContainsAny(w, "abcdefghijklmnopqrstuvwxyz") &&
				strings.Trim(w, "0123456789abcdefghijklmnopqrstuvwxyz") == "" {
				seen[w] = true
				held[w]++
				session[w] = sid
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	var rare []string
	for w, n := range held {
		if n == 1 {
			rare = append(rare, w)
		}
	}
	slices.Sort(rare)
	if len(rare) < 40 {
		t.Fatalf("the corpus has %d rare words of letters and digits, want 40 or more", len(rare))
	}
	step := len(rare) / 40
	for i := 0; i < len(rare); i += step {
		w := rare[i]
		for _, ledgerDB := range []string{local, url} {
			r := ledgerEnv(t, home, nil, "--db", ledgerDB, "search", "--json", "--limit", "50", w)
			if r.code != 0 {
				t.Fatalf("search %q on %s: %s", w, ledgerDB, r.stderr)
			}
			var hits []struct{ Session string }
			decodeJSON(t, r.stdout, &hits)
			if !slices.ContainsFunc(hits, func(h struct{ Session string }) bool { return h.Session == session[w] }) {
				t.Errorf("search %q on %s: %d hits, none in session %s, whose message holds it", w, ledgerDB, len(hits), session[w])
			}
		}
	}
}

// TestSyncTwice: sync pushes a local ledger to a server; a second sync
// sends nothing, and the server then holds what the local ledger holds.
func TestSyncTwice(t *testing.T) {
	t.Parallel()
	url := storetest.MigratedPG(t)
	home := t.TempDir()
	local := corpusFile(t, filepath.Join(home, "local.db"))
	var sessions []struct{ ID string }
	decodeJSON(t, ledgerEnv(t, home, nil, "--db", local, "sessions", "--json").stdout, &sessions)
	if r := ledgerEnv(t, home, nil, "--db", local, "note", sessions[0].ID, "--decision", "pin the toolchain"); r.code != 0 {
		t.Fatalf("note: %s", r.stderr)
	}
	want := counts(t, home, local)
	type pushed struct{ Sessions, Messages, Compactions, Notes int64 }
	var first, second pushed
	r := ledgerEnv(t, home, []string{"LEDGER_HOST=alice"}, "--db", local, "sync", "--to", url, "--json")
	if r.code != 0 {
		t.Fatalf("sync: %s", r.stderr)
	}
	decodeJSON(t, r.stdout, &first)
	if first.Sessions != want.Sessions || first.Messages != want.Messages || first.Compactions != want.Compactions || first.Notes != 1 {
		t.Errorf("first sync pushed %+v; the ledger holds %+v and 1 note", first, want)
	}
	if n := pendingSearch(t, url); n != 0 {
		t.Errorf("the sync left %d pages pending in the GIN indexes", n)
	}
	r = ledgerEnv(t, home, []string{"LEDGER_HOST=alice"}, "--db", local, "sync", "--to", url, "--json")
	decodeJSON(t, r.stdout, &second)
	if r.code != 0 || second != (pushed{}) {
		t.Errorf("second sync pushed %+v (%s), want nothing", second, r.stderr)
	}
	if got := counts(t, home, url); got != want {
		t.Errorf("server holds %+v, local ledger %+v", got, want)
	}
	if r := ledgerEnv(t, home, nil, "--db", url, "search", "--json", "--kind", "note", "toolchain"); !strings.Contains(r.stdout, sessions[0].ID) {
		t.Errorf("the note did not reach the server: %s %s", r.stdout, r.stderr)
	}
	if r := ledgerEnv(t, home, nil, "--db", url, "sessions", "--host", "alice", "--json"); strings.Count(r.stdout, `"host": "alice"`) != int(want.Sessions) {
		t.Errorf("sessions --host alice: %s", r.stdout)
	}
	if r := ledgerEnv(t, home, nil, "--db", url, "sync", "--to", url); r.code != exitUsage || !strings.Contains(r.stderr, "a server already") {
		t.Errorf("sync from a server: %d %s", r.code, r.stderr)
	}
}

// TestTeamLedgerSameAnswers: the read commands give the same output on
// SQLite and on PostgreSQL holding the same corpus, session by session.
func TestTeamLedgerSameAnswers(t *testing.T) {
	t.Parallel()
	url := corpusPG(t)
	home := t.TempDir()
	local := corpusFile(t, filepath.Join(home, "local.db"))
	var sessions []struct{ ID string }
	decodeJSON(t, ledgerEnv(t, home, nil, "--db", local, "sessions", "--json").stdout, &sessions)
	commands := [][]string{{"sessions", "--json"}, {"audit", "--json"}, {"audit"}}
	for _, s := range sessions {
		commands = append(commands, []string{"resume", s.ID}, []string{"resume", s.ID, "--format", "hook"},
			[]string{"meter", s.ID, "--json"}, []string{"search", "--session", s.ID, "error", "--json"})
	}
	for _, c := range commands {
		a := ledgerEnv(t, home, nil, append([]string{"--db", local}, c...)...)
		b := ledgerEnv(t, home, nil, append([]string{"--db", url}, c...)...)
		if a.code != b.code || a.stdout != b.stdout && c[0] != "search" {
			t.Errorf("ledger %s: SQLite exit %d\n%s\nPostgreSQL exit %d\n%s%s", strings.Join(c, " "), a.code, a.stdout, b.code, b.stdout, b.stderr)
		}
		if c[0] == "search" && strings.Count(a.stdout, `"session"`) != strings.Count(b.stdout, `"session"`) {
			t.Errorf("ledger %s: %d hits on SQLite, %d on PostgreSQL", strings.Join(c, " "), strings.Count(a.stdout, `"session"`), strings.Count(b.stdout, `"session"`))
		}
	}
}

// TestMCPOnPostgres: the MCP server works unchanged on a team ledger: its
// read tools on a read-only session of the server, its note tool writing.
func TestMCPOnPostgres(t *testing.T) {
	t.Parallel()
	url := corpusPG(t)
	home := t.TempDir()
	c := startMCP(t, home, "--db", url, "mcp")
	var sessions struct{ Total int }
	c.ok("sessions", nil, &sessions)
	if sessions.Total != 11 {
		t.Errorf("sessions: %d, want the corpus's 11", sessions.Total)
	}
	var found struct{ Hits []struct{ Session string } }
	c.ok("search", map[string]any{"query": "test", "limit": 5}, &found)
	if len(found.Hits) != 5 {
		t.Errorf("search test: %d hits, want 5", len(found.Hits))
	}
	var r struct{ Session, Markdown string }
	c.ok("resume", nil, &r)
	if r.Session != mcpSession || !strings.Contains(r.Markdown, "# Resume") {
		t.Errorf("resume: %s %.200q", r.Session, r.Markdown)
	}
	var a struct{ Totals struct{ Compactions int } }
	c.ok("audit", nil, &a)
	if a.Totals.Compactions != 3 {
		t.Errorf("audit: %d compactions, want the corpus's 3", a.Totals.Compactions)
	}
	c.ok("note", map[string]any{"kind": "decision", "text": "keep the zeppelin parser"}, nil)
	if r := runBin(t, home, "", "--db", url, "search", "zeppelin", "--kind", "note", "--json"); r.code != 0 || !strings.Contains(r.stdout, mcpSession) {
		t.Errorf("the MCP note is not on the server: %s %s", r.stdout, r.stderr)
	}
}

// TestServeOnPostgres: the web view serves a team ledger: the session
// list, a session, a search.
func TestServeOnPostgres(t *testing.T) {
	t.Parallel()
	url := storetest.MigratedPG(t)
	home := t.TempDir()
	if r := runBin(t, home, "", "--db", url, "ingest", sampleDir(t)); r.code != 0 {
		t.Fatalf("ingest: %d %s", r.code, r.stderr)
	}
	cmd := exec.Command(ledgerBin, "--db", url, "serve", "--addr", "127.0.0.1:0")
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	base := regexp.MustCompile(`http://[^/]+/`).FindString(line)
	if err != nil || base == "" {
		t.Fatalf("no address in %q: %v (stderr %s)", line, err, stderr.String())
	}
	for path, want := range map[string]string{
		"":                 "7c1d9e42",
		"sessions/7c1d":    "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57",
		"search?q=session": "7c1d9e42",
	} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatalf("GET /%s: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("GET /%s: %d, %d bytes without %q", path, resp.StatusCode, len(body), want)
		}
	}
}

// TestHooksOnPostgres: Claude Code's hooks on a team ledger, over a real
// transcript (spotter-258c7280): PreCompact, fired twice, makes one
// compaction record with a handoff; the transcript's boundary completes it
// at SessionEnd; a receipt is left for each run.
func TestHooksOnPostgres(t *testing.T) {
	t.Parallel()
	const session = "258c7280-ae70-4798-800f-63464d01a85d"
	lines := splitLines(t, filepath.Join(corpusDir(t), "claude", "spotter-"+session+".jsonl"))
	boundary := -1
	for i, l := range lines {
		if strings.Contains(string(l), `"subtype":"compact_boundary"`) {
			boundary = i
		}
	}
	url := storetest.MigratedPG(t)
	home := t.TempDir()
	path := filepath.Join(home, ".claude", "projects", "-home-USER-projects-spotter", session+".jsonl")
	os.MkdirAll(filepath.Dir(path), 0o700)
	write := func(ls [][]byte) {
		if err := os.WriteFile(path, bytes.Join(ls, nil), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	in := func(event string, extra map[string]any) string {
		m := map[string]any{"session_id": session, "transcript_path": path, "cwd": "/home/USER/projects/spotter-worktrees/spotter-gqc",
			"hook_event_name": event}
		for k, v := range extra {
			m[k] = v
		}
		return hookJSON(t, m)
	}
	write(lines[:boundary])
	for range 2 {
		if r := runBin(t, home, in("PreCompact", map[string]any{"trigger": "auto"}), "--db", url, "hook"); r.code != 0 || r.stderr != "" {
			t.Fatalf("PreCompact: exit %d, stderr %q", r.code, r.stderr)
		}
	}
	if rows := auditRows(t, home, url); len(rows) != 1 || rows[0].Source != "hook" || rows[0].HandoffID == nil {
		t.Fatalf("after PreCompact: %+v, want one hook record with a handoff", rows)
	}
	write(lines)
	if r := runBin(t, home, in("SessionEnd", map[string]any{"reason": "other"}), "--db", url, "hook"); r.code != 0 || r.stderr != "" {
		t.Fatalf("SessionEnd: exit %d, stderr %q", r.code, r.stderr)
	}
	// A hook reads within its budget and leaves the rest for the next
	// run; an ingest then reads what is left.
	if r := runBin(t, home, "", "--db", url, "ingest", path); r.code != 0 {
		t.Fatalf("ingest: %s", r.stderr)
	}
	rows := auditRows(t, home, url)
	if len(rows) != 1 || rows[0].PreTokens == nil || *rows[0].PreTokens != 167094 || rows[0].Summary < 2000 {
		t.Errorf("after the boundary: %d records, want the one record completed (pre_tokens 167094, the summary)", len(rows))
		for _, r := range rows {
			t.Logf("%+v pre %v", r, *r.PreTokens)
		}
	}
	r := runBin(t, home, "", "--db", url, "resume", session)
	if r.code != 0 || !strings.Contains(r.stdout, "# Resume") {
		t.Errorf("resume: %d %s", r.code, r.stderr)
	}
}

// TestVersionOnPostgres: on a team ledger, version names the server's
// engine as what it is, not as a SQLite version.
func TestVersionOnPostgres(t *testing.T) {
	t.Parallel()
	url, home := pgtest.URL(t), t.TempDir()
	if r := runCmd(t, home, "", "--db", url, "init"); r.code != 0 {
		t.Fatalf("init: exit %d %s", r.code, r.stderr)
	}
	r := runCmd(t, home, "", "--db", url, "version")
	if r.code != 0 || !strings.Contains(r.stdout, ", PostgreSQL ") || strings.Contains(r.stdout, "SQLite") {
		t.Errorf("version on PostgreSQL: exit %d, %q; want the server's PostgreSQL version and no SQLite", r.code, r.stdout)
	}
}
