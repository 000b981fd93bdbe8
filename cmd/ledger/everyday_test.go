package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/agentledger/ledger/store/pgtest"
	"github.com/agentledger/ledger/store/storetest"
)

// The first day of a new user, on the real corpus laid out as the agents
// lay it out under a fake HOME (issue 29): ~/.claude/projects/<cwd as
// dashes>/<session>.jsonl with each subagent's file in
// <session>/subagents/, and ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl.

// layOutCorpus links the corpus's transcripts into home as Claude Code and
// Codex keep them (links, not copies: the corpus stays where it is), with a
// Claude Code prompt history beside them as a real ~/.claude has.
func layOutCorpus(t testing.TB, home string) {
	t.Helper()
	corpus := corpusDirTB(t)
	nonWord := regexp.MustCompile(`[^A-Za-z0-9]`)
	claude, _ := filepath.Glob(filepath.Join(corpus, "claude", "*.jsonl"))
	for _, f := range claude {
		cwd, session := firstFields(t, f)
		dir := filepath.Join(home, ".claude", "projects", nonWord.ReplaceAllString(cwd, "-"))
		dst := filepath.Join(dir, session+".jsonl")
		if _, agent, ok := strings.Cut(filepath.Base(f), ".subagents."); ok {
			dst = filepath.Join(dir, session, "subagents", agent)
		}
		link(t, f, dst)
	}
	codex, _ := filepath.Glob(filepath.Join(corpus, "codex", "*.jsonl"))
	for _, f := range codex {
		name := filepath.Base(f)
		name = name[strings.Index(name, "rollout-"):]
		// rollout-2026-02-23T12-40-23-<id>.jsonl goes in sessions/2026/02/23
		link(t, f, filepath.Join(home, ".codex", "sessions", name[8:12], name[13:15], name[16:18], name))
	}
	history := `{"display":"fix the flaky test","pastedContents":{},"timestamp":1760000000000,"project":"/home/marco/projects/spotter"}` + "\n"
	if err := os.WriteFile(filepath.Join(home, ".claude", "history.jsonl"), []byte(history), 0o600); err != nil {
		t.Fatal(err)
	}
}

func link(t testing.TB, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(src, dst); err != nil {
		t.Fatal(err)
	}
}

// firstFields is the first cwd and sessionId a Claude Code transcript names.
func firstFields(t testing.TB, path string) (cwd, session string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() && (cwd == "" || session == "") {
		var l struct{ Cwd, SessionID string }
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		cwd, session = cmpOr(cwd, l.Cwd), cmpOr(session, l.SessionID)
	}
	if cwd == "" || session == "" {
		t.Fatalf("%s names no cwd or session", path)
	}
	return cwd, session
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// corpusDirTB is corpusDir for a testing.TB.
func corpusDirTB(t testing.TB) string {
	t.Helper()
	if tt, ok := t.(*testing.T); ok {
		return corpusDir(tt)
	}
	dir := os.Getenv("LEDGER_CORPUS")
	if dir == "" {
		t.Skip("set LEDGER_CORPUS")
	}
	return dir
}

// corpusLedger is a fresh HOME with the corpus laid out in it and a ledger
// (its default place) that has ingested it all, as a new user's first
// `ledger ingest ~/.claude/projects ~/.codex/sessions` leaves it. The
// ingest runs once per test binary; each caller gets a copy of its ledger.
func corpusLedger(t *testing.T) (home, db string) {
	t.Helper()
	corpusDir(t) // skip without the corpus
	home = t.TempDir()
	layOutCorpus(t, home)
	db = filepath.Join(home, ".local", "share", "ledger", "ledger.db")
	if err := os.MkdirAll(filepath.Dir(db), 0o700); err != nil {
		t.Fatal(err)
	}
	laidOut.copyTo(t, db, func(dir string) (string, result) {
		layOutCorpus(t, dir)
		db := filepath.Join(dir, "ledger.db")
		// By the binary: several times faster than in-process under the
		// race detector (TestIngestCorpus ingests the corpus in-process).
		return db, runBin(t, dir, "", "--db", db, "ingest", filepath.Join(dir, ".claude", "projects"), filepath.Join(dir, ".codex", "sessions"))
	})
	return home, db
}

// laidOut is corpusLedger's ledger.
var laidOut onceLedger

// onceLedger is a SQLite ledger made once per test binary, which tests
// start from copies of.
type onceLedger struct {
	once    sync.Once
	db, err string
}

// copyTo writes at db a copy of the ledger, which make (given a folder of
// its own, removed when the test binary ends) makes the first time and
// returns with the result of the command that made it.
func (o *onceLedger) copyTo(t *testing.T, db string, make func(dir string) (string, result)) {
	t.Helper()
	o.once.Do(func() {
		dir, err := os.MkdirTemp("", "ledger-corpus-")
		if err != nil {
			o.err = err.Error()
			return
		}
		cleanups = append(cleanups, func() { os.RemoveAll(dir) })
		var r result
		if o.db, r = make(dir); r.code != 0 {
			o.err = r.stderr
		}
		// The ledger closed, its WAL is checkpointed into the file: a copy
		// of the file is the whole ledger.
		if fi, err := os.Stat(o.db + "-wal"); err == nil && fi.Size() > 0 {
			o.err = "a WAL is left beside the ingested ledger"
		}
	})
	if o.err != "" {
		t.Fatalf("ingest the corpus: %s", o.err)
	}
	data, err := os.ReadFile(o.db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// cleanups run when the test binary ends (TestMain).
var cleanups []func()

// searchHits runs `ledger search ARGS --json` and returns its hits.
func searchHits(t *testing.T, home, db string, args ...string) []map[string]any {
	t.Helper()
	r := runCmd(t, home, "", append([]string{"--db", db, "search", "--json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("search %q: exit %d: %s", args, r.code, r.stderr)
	}
	var hits []map[string]any
	decodeJSON(t, r.stdout, &hits)
	return hits
}

// TestSearchFlagLikeWord: `ledger search -- --strict`, the form search's
// help and its error message give for a word that looks like a flag,
// finds what mentions --strict, as the quoted '"--strict"' does. It found
// nothing: the query's own "-" read as "leave out -strict".
func TestSearchFlagLikeWord(t *testing.T) {
	t.Parallel()
	home, db := corpusLedger(t)
	quoted := searchHits(t, home, db, "--limit", "100", `"--strict"`)
	if len(quoted) == 0 {
		t.Fatal(`'"--strict"' finds nothing on the corpus`)
	}
	got := searchHits(t, home, db, "--limit", "100", "--", "--strict")
	if len(got) != len(quoted) {
		t.Errorf("search -- --strict: %d hits, want the %d of '\"--strict\"'", len(got), len(quoted))
	}
	// A single dash still leaves a word out.
	if n := len(searchHits(t, home, db, "--limit", "100", "--", "strict", "-mix")); n >= len(quoted) {
		t.Errorf("search strict -mix: %d hits, want fewer than %d", n, len(quoted))
	}
}

// TestFlagValueErrors: a flag given a value of the wrong kind is a usage
// error (exit 2) in one line that says what the flag wants, without Go's
// parser internals ("strconv.ParseInt: parsing ...").
func TestFlagValueErrors(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := filepath.Join(home, "ledger.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sessions", "--limit", "abc"}, `--limit "abc": want a whole number`},
		{[]string{"search", "x", "--limit=1.5"}, `--limit "1.5": want a whole number`},
		{[]string{"hooks", "log", "--since", "abc"}, `--since "abc": want a duration such as 36h or 90m`},
		{[]string{"search", "x", "--json=maybe"}, `--json "maybe": want true or false`},
	} {
		r := runCmd(t, home, "", append([]string{"--db", db}, tc.args...)...)
		if r.code != 2 || r.stderr != "ledger: "+tc.want+"\n" {
			t.Errorf("%q: exit %d, %q; want exit 2 and %q", tc.args, r.code, r.stderr, "ledger: "+tc.want)
		}
	}
}

// TestJSONSessionKey: every JSON document names a session under the
// contract's key, "session": hooks log (and doctor's last receipts) said
// "session_id", unlike search, note, audit, meter, resume and forget.
func TestJSONSessionKey(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	payload := `{"hook_event_name":"SessionStart","session_id":"11111111-2222-3333-4444-555555555555","source":"startup","cwd":"` + home + `"}`
	if r := runCmd(t, home, payload, "--db", db, "hook"); r.code != 0 {
		t.Fatalf("hook: exit %d: %s", r.code, r.stderr)
	}
	r := runCmd(t, home, "", "--db", db, "hooks", "log", "--json")
	var log []map[string]any
	decodeJSON(t, r.stdout, &log)
	if len(log) != 1 || log[0]["session"] != "11111111-2222-3333-4444-555555555555" || log[0]["session_id"] != nil {
		t.Errorf("hooks log --json = %s, want one receipt with its \"session\" (and no \"session_id\")", r.stdout)
	}
	r = runCmd(t, home, "", "--db", db, "doctor", "--json")
	var doc struct {
		Receipts []map[string]any `json:"last_hook_receipts"`
	}
	decodeJSON(t, r.stdout, &doc)
	if len(doc.Receipts) != 1 || doc.Receipts[0]["session"] == nil {
		t.Errorf("doctor --json last_hook_receipts = %v, want the receipt's \"session\"", doc.Receipts)
	}
}

// TestDoctorPostgresSegments: on a team ledger (PostgreSQL), whose GIN
// indexes have no segments, doctor prints no "full-text segments:" line
// (it printed one with nothing after it).
func TestDoctorPostgresSegments(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	home := t.TempDir()
	if r := runCmd(t, home, "", "--db", url, "init"); r.code != 0 {
		t.Fatalf("init: exit %d: %s", r.code, r.stderr)
	}
	r := runCmd(t, home, "", "--db", url, "doctor")
	if r.code != 0 {
		t.Fatalf("doctor: exit %d: %s", r.code, r.stderr)
	}
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasSuffix(strings.TrimSpace(line), ":") {
			t.Errorf("doctor prints a line with nothing after it: %q\n%s", line, r.stdout)
		}
	}
}

// TestHandoffEmphasisBalanced: no handoff of the corpus's sessions has an
// item with a broken bold marker. "**Key fix in this session:** Resolved
// ..." became the decision "Key fix in this session:** Resolved ...": the
// opening marker was stripped, the closing one kept.
func TestHandoffEmphasisBalanced(t *testing.T) {
	t.Parallel()
	home, db := corpusLedger(t)
	r := runCmd(t, home, "", "--db", db, "sessions", "--json")
	var list []struct{ ID string }
	decodeJSON(t, r.stdout, &list)
	for _, s := range list {
		r := runCmd(t, home, "", "--db", db, "compact", s.ID, "--json", "--out", filepath.Join(home, s.ID+".md"))
		if r.code != 0 {
			t.Fatalf("compact %s: exit %d: %s", s.ID, r.code, r.stderr)
		}
		var h struct {
			Decisions []string `json:"decisions"`
			NextSteps []string `json:"next_steps"`
			Blockers  []string `json:"blockers"`
			Errors    []string `json:"errors"`
		}
		decodeJSON(t, r.stdout, &h)
		for _, item := range append(append(append(h.Decisions, h.NextSteps...), h.Blockers...), h.Errors...) {
			if strings.Count(item, "**")%2 != 0 {
				t.Errorf("session %s: item with a broken bold marker: %q", s.ID[:8], item)
			}
		}
	}
}

// TestIngestAgentFolderQuietly: ingesting the agent's whole folder
// (~/.claude, as a user tries first) warns about nothing on each run: the
// prompt history Claude Code keeps beside the transcripts
// (~/.claude/history.jsonl; Codex keeps one in ~/.codex) is not a
// transcript, and was warned about at every ingest.
func TestIngestAgentFolderQuietly(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	layOutCorpus(t, home)
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	// The built binary, as a user runs it: the warnings are what it prints.
	for i := range 2 {
		r := runBin(t, home, "", "--db", db, "ingest", filepath.Join(home, ".claude"))
		if r.code != 0 || r.stderr != "" {
			t.Errorf("ingest ~/.claude, run %d: exit %d, stderr %q; want no warning", i+1, r.code, r.stderr)
		}
	}
	// Named on the command line, it is still no transcript: an error.
	r := runCmd(t, home, "", "--db", db, "ingest", filepath.Join(home, ".claude", "history.jsonl"))
	if r.code == 0 || !strings.Contains(r.stderr, "history.jsonl") {
		t.Errorf("ingest history.jsonl: exit %d, %q; want an error naming it", r.code, r.stderr)
	}
}

// TestUnpause: the command that records a paused project again is named
// for what it does, `ledger unpause` (resume-recording read like resume's
// kin); the old name still works; pause --list and the help say unpause.
func TestUnpause(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	project := filepath.Join(home, "client")
	os.MkdirAll(project, 0o700)
	if r := runCmd(t, home, "", "--db", db, "pause", "--project", project); r.code != 0 || !strings.Contains(r.stdout, "ledger unpause") {
		t.Errorf("pause: exit %d, %q; want it to say how to undo it (ledger unpause)", r.code, r.stdout)
	}
	if r := runCmd(t, home, "", "--db", db, "pause", "--list"); !strings.Contains(r.stdout, "ledger unpause --project "+project) {
		t.Errorf("pause --list = %q, want the unpause command", r.stdout)
	}
	if r := runCmd(t, home, "", "--db", db, "unpause", "--project", project); r.code != 0 || r.stdout != "recording resumed for "+project+"\n" {
		t.Errorf("unpause: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	runCmd(t, home, "", "--db", db, "pause", "--project", project)
	if r := runCmd(t, home, "", "--db", db, "resume-recording", "--project", project); r.code != 0 || r.stdout != "recording resumed for "+project+"\n" {
		t.Errorf("resume-recording (the old name): exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	help := runCmd(t, home, "", "--help").stdout
	if !strings.Contains(help, "unpause") || strings.Contains(help, "resume-recording") {
		t.Errorf("ledger --help lists %q; want unpause, not resume-recording", help)
	}
}

// sessionProjects maps each session id to its project, as sessions --json
// says.
func sessionProjects(t *testing.T, home, db string) map[string]string {
	t.Helper()
	r := runCmd(t, home, "", "--db", db, "sessions", "--json")
	var list []struct{ ID, Project string }
	decodeJSON(t, r.stdout, &list)
	projects := map[string]string{}
	for _, s := range list {
		projects[s.ID] = s.Project
	}
	return projects
}

// sessionProject is the project of session id in projects.
func sessionProject(t *testing.T, projects map[string]string, id string) string {
	t.Helper()
	p, ok := projects[id]
	if !ok {
		t.Fatalf("no session %s", id)
	}
	return p
}

// TestSearchLimitAfterPause: pausing one project leaves its hits out of
// search, not the other projects' hits: --limit counts the hits shown. It
// was applied before the paused project's hits were dropped, so that
// `search spotter --limit 3` found fewer than 3 (none when the top 3 were
// the paused project's) though other projects hold many.
func TestSearchLimitAfterPause(t *testing.T) {
	t.Parallel()
	home, db := corpusLedger(t)
	top := searchHits(t, home, db, "spotter", "--limit", "3")
	if len(top) != 3 {
		t.Fatalf("search spotter --limit 3: %d hits before any pause", len(top))
	}
	// Pausing changes no session's project: one listing serves every hit.
	projects := sessionProjects(t, home, db)
	paused := sessionProject(t, projects, top[0]["session"].(string))
	if r := runCmd(t, home, "", "--db", db, "pause", "--project", paused); r.code != 0 {
		t.Fatalf("pause: %s", r.stderr)
	}
	var others int
	for _, h := range searchHits(t, home, db, "spotter", "--limit", "1000") {
		if sessionProject(t, projects, h["session"].(string)) == paused {
			t.Errorf("a hit of the paused project %s: %v", paused, h)
		}
		others++
	}
	got := searchHits(t, home, db, "spotter", "--limit", "3")
	if want := min(others, 3); len(got) != want {
		t.Errorf("after pausing %s, search spotter --limit 3: %d hits; want %d (of %d in other projects)", paused, len(got), want, others)
	}
}

// TestSearchLimitAfterLedgerignore: a project with a .ledgerignore is left
// out of search as a paused one is, the limit counting the hits shown.
func TestSearchLimitAfterLedgerignore(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	kept, ignored := filepath.Join(home, "src", "kept"), filepath.Join(home, "src", "ignored")
	os.MkdirAll(kept, 0o700)
	os.MkdirAll(ignored, 0o700)
	// The ignored project's session is ingested last: its hits come first.
	ingest(t, home, db, sampleInProject(t, home, kept, "eeeeeeee-1111-4222-8333-444444444401"))
	ingest(t, home, db, sampleInProject(t, home, ignored, "eeeeeeee-1111-4222-8333-444444444402"))
	if hits := searchHits(t, home, db, "SessionStore", "--limit", "2"); len(hits) != 2 || hits[0]["session"] != "eeeeeeee-1111-4222-8333-444444444402" {
		t.Fatalf("before the .ledgerignore: %v", hits)
	}
	if err := os.WriteFile(filepath.Join(ignored, ".ledgerignore"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	hits := searchHits(t, home, db, "SessionStore", "--limit", "2")
	if len(hits) != 2 {
		t.Errorf("search --limit 2 after a .ledgerignore in the other project: %d hits, want 2", len(hits))
	}
	for _, h := range hits {
		if h["session"] != "eeeeeeee-1111-4222-8333-444444444401" {
			t.Errorf("a hit of the ignored project: %v", h)
		}
	}
}

// sessionSources maps each session id to its agent.
func sessionSources(t *testing.T, home, db string) map[string]string {
	t.Helper()
	r := runCmd(t, home, "", "--db", db, "sessions", "--json")
	var list []struct{ ID, Source string }
	decodeJSON(t, r.stdout, &list)
	out := map[string]string{}
	for _, s := range list {
		out[s.ID] = s.Source
	}
	return out
}

// TestSearchRoleTool: --role tool finds tool output of every agent, and
// --role user only what users typed. Claude Code keeps tool results in
// user lines, which the ledger stores with role user: --role tool missed
// all of Claude's tool output and --role user returned it.
func TestSearchRoleTool(t *testing.T) {
	t.Parallel()
	home, db := corpusLedger(t)
	sources := sessionSources(t, home, db)
	// Claude Code's Edit tool answers "The file ... has been updated successfully."
	tool := searchHits(t, home, db, "--role", "tool", "--limit", "50", `"has been updated successfully"`)
	agents := map[string]int{}
	for _, h := range tool {
		agents[sources[h["session"].(string)]]++
		if h["role"] != "tool" {
			t.Errorf("a --role tool hit says role %v", h["role"])
		}
	}
	if agents["claude"] == 0 {
		t.Errorf("--role tool finds no Claude tool output: %v", agents)
	}
	if user := searchHits(t, home, db, "--role", "user", "--limit", "50", `"has been updated successfully"`); len(user) != 0 {
		t.Errorf("--role user finds %d tool results, e.g. %v", len(user), user[0])
	}
	// Codex's tool output (its authors redacted it) is role tool too; and
	// what users typed is user.
	if codex := searchHits(t, home, db, "--role", "tool", "--limit", "200", "REDACTED_OUTPUT"); !hasSource(codex, sources, "codex") {
		t.Errorf("--role tool finds no Codex tool output")
	}
	for _, h := range searchHits(t, home, db, "--role", "user", "--limit", "50", "spotter") {
		if h["role"] != "user" {
			t.Errorf("a --role user hit says role %v", h["role"])
		}
	}
	// Without --role, a Claude tool result's hit says tool.
	for _, h := range searchHits(t, home, db, "--limit", "5", `"has been updated successfully"`) {
		if h["kind"] == "message" && h["role"] != "tool" {
			t.Errorf("a tool result's hit says role %v", h["role"])
		}
	}
}

func hasSource(hits []map[string]any, sources map[string]string, source string) bool {
	for _, h := range hits {
		if sources[h["session"].(string)] == source {
			return true
		}
	}
	return false
}

// TestProjectIsItsOwnFolder: the project of a folder is that folder (or
// its git checkout), never a folder below it. `ledger note` run in /tmp
// recorded the note on the corpus's session of
// /tmp/agent-history-real-agent/claude/workspace, and `ledger resume` in
// a folder above a project resumed that project.
func TestProjectIsItsOwnFolder(t *testing.T) {
	t.Parallel()
	home, db := corpusLedger(t)
	const project = "/tmp/agent-history-real-agent/claude/workspace"
	for _, above := range []string{"/tmp", "/tmp/agent-history-real-agent"} {
		r := runCmdIn(t, home, above, "", "--db", db, "note", "--decision", "keep three retries")
		if r.code != exitNotFound || !strings.Contains(r.stderr, "no session of project "+above) {
			t.Errorf("note in %s: exit %d, %q %q; want exit 3, no session of that project", above, r.code, r.stdout, r.stderr)
		}
		if r := runCmdIn(t, home, above, "", "--db", db, "resume"); r.code != exitNotFound || r.stdout != "" {
			t.Errorf("resume in %s: exit %d, %q; want exit 3 and nothing", above, r.code, r.stdout)
		}
		if r := runCmd(t, home, "", "--db", db, "resume", "--project", above); r.code != exitNotFound {
			t.Errorf("resume --project %s: exit %d; want 3", above, r.code)
		}
	}
	// In the project's own folder both work.
	r := runCmdIn(t, home, project, "", "--db", db, "note", "--decision", "keep three retries", "--json")
	var n struct{ Session string }
	decodeJSON(t, r.stdout, &n)
	if r.code != 0 || n.Session != "06090cb1-3e64-433a-bc7e-a621c0f596d2" {
		t.Errorf("note in %s: exit %d, %q %q", project, r.code, r.stdout, r.stderr)
	}
	if r := runCmd(t, home, "", "--db", db, "resume", "--project", project); r.code != 0 || !strings.Contains(r.stdout, "06090cb1") {
		t.Errorf("resume --project %s: exit %d, %q", project, r.code, r.stderr)
	}
}

// TestReadCommandsCreateNoLedger: a command that only reads never creates
// a ledger: where there is none it says so in one line, naming the path
// and what creates one, and exits 1, creating no file and no folder.
// `ledger --db /nonexistent/dir/x.db sessions` created the folder and an
// empty ledger and exited 0. Commands that write create it as before.
func TestReadCommandsCreateNoLedger(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	missing := filepath.Join(home, "nonexistent", "dir", "x.db")
	reads := [][]string{{"sessions"}, {"search", "x"}, {"audit"}, {"audit", "--loss"}, {"resume", "--project", home},
		{"handoff", "list"}, {"meter", "abc"}, {"hooks", "log"}, {"sessions", "--json"}}
	for _, args := range reads {
		r := runBin(t, home, "", append([]string{"--db", missing}, args...)...)
		want := "ledger: no ledger at " + missing + " yet: 'ledger ingest' (or 'ledger init') creates it\n"
		if r.code != exitFailure || r.stderr != want || r.stdout != "" {
			t.Errorf("%q: exit %d, %q %q; want exit 1 and %q", args, r.code, r.stdout, r.stderr, want)
		}
	}
	// The default ledger of a fresh HOME, likewise.
	def := filepath.Join(home, ".local", "share", "ledger", "ledger.db")
	if r := runBin(t, home, "", "sessions"); r.code != exitFailure || !strings.Contains(r.stderr, "no ledger at "+def+" yet") {
		t.Errorf("sessions in a fresh HOME: exit %d, %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(home, "nonexistent")); err == nil {
		t.Errorf("a read command created %s", filepath.Join(home, "nonexistent"))
	}
	if _, err := os.Stat(filepath.Join(home, ".local")); err == nil {
		t.Errorf("a read command created %s", filepath.Join(home, ".local"))
	}
	// doctor checks the set-up all the same (a new user's first check),
	// and says there is no ledger yet.
	if r := runBin(t, home, "", "--db", missing, "doctor"); r.code != 0 || !strings.HasPrefix(r.stdout, "no ledger at "+missing+" yet") ||
		!strings.Contains(r.stdout, "hooks (claude): none in") {
		t.Errorf("doctor: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if r := runBin(t, home, "", "--db", missing, "doctor", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"no_ledger": "`+missing+`"`) {
		t.Errorf("doctor --json: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	// version still says what it is, and that there is no ledger.
	if r := runBin(t, home, "", "--db", missing, "version"); r.code != 0 || !strings.HasPrefix(r.stdout, "ledger ") || !strings.Contains(r.stdout, "no ledger at "+missing) {
		t.Errorf("version: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	// A command that writes creates it.
	if r := runBin(t, home, "", "--db", missing, "init"); r.code != 0 {
		t.Fatalf("init: exit %d, %q", r.code, r.stderr)
	}
	if r := runBin(t, home, "", "--db", missing, "sessions"); r.code != 0 {
		t.Errorf("sessions once the ledger exists: exit %d, %q", r.code, r.stderr)
	}
}

// TestDoctorRunsFTSCheck: on a ledger this user can write, doctor runs
// FTS5's own integrity-check (which compares each index with its text),
// not SQLite's integrity_check alone: an index entry of no message is
// found, doctor exits 1 and names the index, and
// --rebuild mends it. Doctor opened every ledger read-only, and passed it.
func TestDoctorRunsFTSCheck(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	ingest(t, home, db, sampleDir(t))
	if r := runCmd(t, home, "", "--db", db, "doctor"); r.code != 0 || !strings.Contains(r.stdout, "full-text index: ok") || strings.Contains(r.stdout, "read-only") {
		t.Fatalf("doctor on a sound ledger: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
	raw := rawDB(t, db)
	// An index entry for a message that is not there: SQLite's own
	// integrity_check does not compare an index with its text.
	if _, err := raw.Exec(`INSERT INTO messages_fts (rowid, text) VALUES (999999, 'words no message holds')`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	r := runBin(t, home, "", "--db", db, "doctor")
	if r.code != exitFailure || !strings.Contains(r.stdout, "full-text index: messages_fts:") || !strings.Contains(r.stderr, "ledger doctor --rebuild") {
		t.Errorf("doctor on a damaged index: exit %d, %s %s; want exit 1 naming messages_fts", r.code, r.stdout, r.stderr)
	}
	if r := runBin(t, home, "", "--db", db, "doctor", "--rebuild"); r.code != 0 || !strings.Contains(r.stdout, "full-text index: ok") {
		t.Errorf("doctor --rebuild: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
}

// TestSessionTitles: every session `ledger ingest` reads has a title: the
// agent's own where it gives one (Claude Code's summary, ai-title and the
// user's custom-title, which its later ai-titles leave), else the first
// request the user typed, on one line and shortened; a session of
// subagent messages only is named by what its subagent was asked. 13 of
// the corpus's 14 sessions had none.
func TestSessionTitles(t *testing.T) {
	t.Parallel()
	home := pluginAgentsHome(t) // Pi, OpenCode and Kilo CLI
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	layOutCorpus(t, home)
	for _, f := range agentFixtures {
		f.place(t, home, -1)
	}
	named := filepath.Join(home, ".claude", "projects", "-home-dev-named", "9d2f4c1e-0000-4000-8000-000000000001.jsonl")
	line := func(typ, extra string) string {
		return `{"type":"` + typ + `","sessionId":"9d2f4c1e-0000-4000-8000-000000000001"` + extra + "}\n"
	}
	os.MkdirAll(filepath.Dir(named), 0o700)
	os.WriteFile(named, []byte(
		line("user", `,"uuid":"u1","cwd":"/home/dev/named","timestamp":"2026-11-20T10:00:00Z","message":{"role":"user","content":"add a dark mode toggle to the settings page"}`)+
			line("ai-title", `,"aiTitle":"Dark mode toggle"`)+
			line("custom-title", `,"customTitle":"theme work"`)+
			line("ai-title", `,"aiTitle":"Dark mode toggle in settings"`)), 0o600)
	// The built binary ingests the corpus (TestIngestCorpus ingests it
	// in-process): the titles are what it stored.
	if r := runBin(t, home, "", "--db", db, "ingest"); r.code != 0 {
		t.Fatalf("ingest: exit %d: %s", r.code, r.stderr)
	}
	var list []struct{ ID, Source, Title string }
	decodeJSON(t, runCmd(t, home, "", "--db", db, "sessions", "--json", "--limit", "100").stdout, &list)
	want := map[string]string{
		"9d2f4c1e-0000-4000-8000-000000000001": "theme work",                                                // the user's name beats Claude Code's
		"fe5e1c67-53e7-4862-81ae-d0e013e3270b": "Empty Repo Setup: CLAUDE.md Foundation Created",            // a summary line
		"55604662":                             "mix phx.server doesnt seem to start",                       // the first request
		"1af7fc5e":                             "/init",                                                     // a slash command the user ran
		"fa812bfe":                             "Explore the codebase to understand the current structure…", // subagent messages only
	}
	seen := map[string]bool{}
	for _, s := range list {
		if s.Title == "" || strings.ContainsAny(s.Title, "\n\r") || len([]rune(s.Title)) > 80 {
			t.Errorf("%s session %s: title %q, want one line of at most 80 characters", s.Source, s.ID, s.Title)
		}
		for id, w := range want {
			if strings.HasPrefix(s.ID, id) {
				seen[id] = true
				if !strings.HasPrefix(s.Title, strings.TrimSuffix(w, "…")) {
					t.Errorf("session %s: title %q, want %q", s.ID, s.Title, w)
				}
			}
		}
		seen[s.Source] = true
	}
	for _, k := range []string{"claude", "codex", "gemini", "qwen", "copilot", "pi", "opencode", "kilo"} {
		if !seen[k] {
			t.Errorf("no %s session listed: %+v", k, list)
		}
	}
	for id := range want {
		if !seen[id] {
			t.Errorf("session %s not listed", id)
		}
	}
}

// TestHooksInstallAsANewUser: on a fresh HOME install says nothing of a
// backup it did not make (it said "previous file kept as
// settings.json.bak" and wrote none), and uninstall removes the
// settings.json it created rather than leave "{}" behind; a user's own
// settings file is backed up and kept. --scope project writes hooks that
// run 'ledger' from each user's PATH (not this user's absolute path into a
// file every clone shares), says so, and the command it wrote runs.
func TestHooksInstallAsANewUser(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	settings := filepath.Join(home, ".claude", "settings.json")
	r := runBin(t, home, "", "hooks", "install")
	if r.code != 0 || strings.Contains(r.stdout, ".bak") {
		t.Errorf("install on a fresh HOME: exit %d, %q", r.code, r.stdout)
	}
	if _, err := os.Stat(settings + ".bak"); err == nil {
		t.Errorf("install on a fresh HOME wrote %s.bak", settings)
	}
	r = runBin(t, home, "", "hooks", "uninstall")
	if r.code != 0 || !strings.Contains(r.stdout, "and the file, which held nothing else") || strings.Contains(r.stdout, ".bak") {
		t.Errorf("uninstall: exit %d, %q", r.code, r.stdout)
	}
	for _, p := range []string{settings, settings + ".bak"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("uninstall left %s", p)
		}
	}

	// A user's own settings: backed up, and kept at uninstall.
	own := "{\n  \"model\": \"opus\"\n}\n"
	os.WriteFile(settings, []byte(own), 0o600)
	if r := runBin(t, home, "", "hooks", "install"); r.code != 0 || !strings.Contains(r.stdout, "previous file kept as settings.json.bak") {
		t.Errorf("install over the user's settings: exit %d, %q", r.code, r.stdout)
	}
	if b, _ := os.ReadFile(settings + ".bak"); string(b) != own {
		t.Errorf("settings.json.bak = %q, want the user's file", b)
	}
	if r := runBin(t, home, "", "hooks", "uninstall"); r.code != 0 || !strings.Contains(r.stdout, "previous file kept as settings.json.bak") {
		t.Errorf("uninstall: exit %d, %q", r.code, r.stdout)
	}
	if b, _ := os.ReadFile(settings); string(b) != own {
		t.Errorf("settings.json after uninstall = %q, want the user's file as it was", b)
	}

	// A project's shared settings.
	project := filepath.Join(home, "src", "app")
	os.MkdirAll(project, 0o700)
	r = runBinIn(t, home, project, "", "hooks", "install", "--scope", "project", "--statusline")
	if r.code != 0 || !strings.Contains(r.stdout, "run 'ledger' from each user's PATH") {
		t.Errorf("install --scope project: exit %d, %q", r.code, r.stdout)
	}
	b, err := os.ReadFile(filepath.Join(project, ".claude", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), home) || strings.Contains(string(b), ledgerBin) {
		t.Errorf("the project's settings name this user's paths:\n%s", b)
	}
	var s map[string]any
	decodeJSON(t, string(b), &s)
	cmds := hookCommands(s, "SessionStart")
	if len(cmds) != 1 || cmds[0] != "ledger hook" {
		t.Fatalf("SessionStart hooks: %q, want \"ledger hook\"", cmds)
	}
	if sl, _ := s["statusLine"].(map[string]any); sl["command"] != "ledger statusline" {
		t.Errorf("statusLine: %v", s["statusLine"])
	}
	// Another user's clone, ledger on their PATH: the command runs as the
	// agent runs it (sh -c), and records the session.
	other := t.TempDir()
	sh := exec.Command("sh", "-c", cmds[0])
	sh.Dir = project
	sh.Env = []string{"HOME=" + other, "PATH=" + filepath.Dir(ledgerBin) + ":/usr/bin:/bin"}
	sh.Stdin = strings.NewReader(`{"hook_event_name":"SessionStart","session_id":"11111111-2222-3333-4444-000000000013","source":"startup","cwd":"` + project + `"}`)
	if out, err := sh.CombinedOutput(); err != nil {
		t.Errorf("the project's hook command in another clone: %v, %s", err, out)
	}
	if r := runBin(t, other, "", "hooks", "log", "--json"); r.code != 0 || !strings.Contains(r.stdout, "11111111-2222-3333-4444-000000000013") {
		t.Errorf("the other user's ledger did not record the hook: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
}

// TestClearIsNotACompaction: `ledger compact` writes a handoff for a
// /clear; it is no compaction of the agent's, and sessions, audit and
// resume keep the two apart (it was counted as one everywhere).
func TestClearIsNotACompaction(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	project := filepath.Join(home, "src", "payments")
	os.MkdirAll(project, 0o755)
	const id = "aaaaaaaa-1111-4222-8333-444444444429"
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	ingest(t, home, db, sampleInProject(t, home, project, id))
	type row struct {
		ID                  string
		Compactions, Clears int
	}
	list := func() row {
		var rows []row
		decodeJSON(t, runCmd(t, home, "", "--db", db, "sessions", "--json").stdout, &rows)
		for _, r := range rows {
			if r.ID == id {
				return r
			}
		}
		t.Fatalf("session %s not listed", id)
		return row{}
	}
	before := list()
	if before.Compactions == 0 || before.Clears != 0 {
		t.Fatalf("before ledger compact: %+v, want the transcript's compactions and no clear", before)
	}
	resumeBefore := runCmd(t, home, "", "--db", db, "resume", id[:8])
	if r := runCmd(t, home, "", "--db", db, "compact", id[:8]); r.code != 0 {
		t.Fatalf("compact: exit %d: %s", r.code, r.stderr)
	}
	after := list()
	if after.Compactions != before.Compactions || after.Clears != 1 {
		t.Errorf("after ledger compact: %+v, want %d compactions and 1 clear", after, before.Compactions)
	}
	r := runCmd(t, home, "", "--db", db, "sessions")
	if !strings.Contains(r.stdout, "CLEAR") {
		t.Errorf("sessions has no CLEAR column:\n%s", r.stdout)
	}
	r = runCmd(t, home, "", "--db", db, "audit", id[:8])
	if !strings.Contains(r.stdout, fmt.Sprintf("\n%d compactions (and 1 by ledger compact, a clear)", before.Compactions)) || !strings.Contains(r.stdout, " clear ") {
		t.Errorf("audit:\n%s", r.stdout)
	}
	// resume counts the agent's compactions as before the clear.
	want := regexp.MustCompile(`## Compactions\n\d+ so far`).FindString(resumeBefore.stdout)
	if got := runCmd(t, home, "", "--db", db, "resume", id[:8]); want == "" || !strings.Contains(got.stdout, want) {
		t.Errorf("resume after the clear: want %q in\n%s", want, got.stdout)
	}
}

// TestMeterSubagentOnlySession: a session the ledger holds only subagent
// messages of (the corpus's fa812bfe: a subagent's transcript, its main
// one not kept) is metered on them, exactly from their last usage, with
// their model's window; it metered 0 with no model.
func TestMeterSubagentOnlySession(t *testing.T) {
	t.Parallel()
	home, db := corpusLedger(t)
	r := runCmd(t, home, "", "--db", db, "meter", "fa812bfe", "--json")
	var m struct {
		Model      string `json:"model"`
		UsedTokens int64  `json:"used_tokens"`
		Exact      bool   `json:"exact"`
	}
	decodeJSON(t, r.stdout, &m)
	if r.code != 0 || m.UsedTokens == 0 || !m.Exact || m.Model == "" {
		t.Errorf("meter of a session of subagent messages only: exit %d, %+v %s", r.code, m, r.stderr)
	}
}
