package main

import (
	"database/sql"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/store/storetest"
)

// pluginPayload is a payload ledger's plugin for an agent sent in a real
// run (testdata/agents/<agent>/hooks, see its README), with fields set.
func pluginPayload(t *testing.T, agentDir, name string, set map[string]any) string {
	t.Helper()
	b, err := os.ReadFile(pluginFixture(agentDir, "hooks", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for k, v := range set {
		m[k] = v
	}
	return hookJSON(t, m)
}

// startContext is the context a SessionStart run printed ("" for none).
func startContext(t *testing.T, r result) string {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if strings.TrimSpace(r.stdout) == "" {
		return ""
	}
	var out engine.SessionStartOutput
	decodeJSON(t, r.stdout, &out)
	return out.HookSpecificOutput.AdditionalContext
}

// latestReceipt is the detail of the latest hook receipt.
func latestReceipt(t *testing.T, home, db string) (event, outcome, detail string) {
	t.Helper()
	r := execLedger(t, home, "", "", nil, "--db", db, "hooks", "log", "--json")
	var rs []struct{ Event, Outcome, Detail string }
	decodeJSON(t, r.stdout, &rs)
	if len(rs) == 0 {
		t.Fatal("no hook receipt")
	}
	return rs[0].Event, rs[0].Outcome, rs[0].Detail
}

// agentDBWriter opens an agent's database as the agent does.
func agentDBWriter(t *testing.T, path string) *sql.DB {
	t.Helper()
	u := url.URL{Scheme: "file", Opaque: (&url.URL{Path: path}).EscapedPath()}
	db, err := sql.Open("sqlite", u.String()+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestPluginHookOpenCode replays the payloads ledger's OpenCode and Kilo
// plugins sent in real runs on a home where OpenCode has kept a session:
// the start of a continued session gets its resume context; a compaction
// OpenCode stores before its compacting event gets the handoff (one
// record, not two); after it the start context comes again; a new Kilo
// session in the same project is offered the OpenCode session's handoff.
func TestPluginHookOpenCode(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	ocdb := copyTo(t, pluginFixture("opencode-1.18.33", "opencode.db"), filepath.Join(home, ".local", "share", "opencode", "opencode.db"))
	const project = "/work/agents-cache/proj-oc"
	set := map[string]any{"session_id": opencodeSession, "cwd": project}
	hook := func(agent, name string, set map[string]any) result {
		dir := map[string]string{"opencode": "opencode-1.18.33", "kilo": "kilo-7.7.7"}[agent]
		return runHookEnv(t, home, pluginPayload(t, dir, name, set), nil, "--agent", agent, "--db", db)
	}

	ctx := startContext(t, hook("opencode", "session-start", set))
	if !strings.Contains(ctx, "# Resume") || !strings.Contains(ctx, opencodeSession) || !strings.Contains(ctx, "notes-") {
		t.Fatalf("resume context:\n%s", ctx)
	}
	if ev, _, detail := latestReceipt(t, home, db); ev != "SessionStart" || !strings.Contains(detail, "taken as resume") {
		t.Errorf("receipt %s %s", ev, detail)
	}

	// OpenCode compacts: the compaction part first, then the hook.
	w := agentDBWriter(t, ocdb)
	now := time.Now().UnixMilli()
	for _, q := range []string{
		`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_zc', '` + opencodeSession + `', ?, ?, '{"role":"user","time":{"created":1}}')`,
		`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_zc', 'msg_zc', '` + opencodeSession + `', ?, ?, '{"type":"compaction","auto":true}')`,
		`UPDATE event_sequence SET seq = seq + ? - ? + 1 WHERE aggregate_id = '` + opencodeSession + `'`,
	} {
		if _, err := w.Exec(q, now, now); err != nil {
			t.Fatal(err)
		}
	}
	if r := hook("opencode", "pre-compact", set); r.code != 0 || r.stdout != "" {
		t.Fatalf("PreCompact: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	rows := auditRows(t, home, db)
	if len(rows) != 2 || rows[1].Source != "hook" || rows[1].HandoffID == nil || rows[0].Source != "transcript" {
		t.Fatalf("audit after PreCompact %+v", rows)
	}
	if r := hook("opencode", "post-compact", set); r.code != 0 {
		t.Fatalf("PostCompact: %s", r.stderr)
	}
	if rows := auditRows(t, home, db); len(rows) != 2 {
		t.Errorf("audit after PostCompact %+v", rows)
	}
	if ctx := startContext(t, hook("opencode", "session-start-compact", set)); !strings.Contains(ctx, "# Resume") {
		t.Errorf("context after the compaction:\n%s", ctx)
	}
	if r := hook("opencode", "stop", set); r.code != 0 {
		t.Fatalf("Stop: %s", r.stderr)
	}
	if ev, outcome, detail := latestReceipt(t, home, db); ev != "Stop" || outcome == "failed" || !strings.HasPrefix(detail, "opencode: ") {
		t.Errorf("Stop receipt %s %s %s", ev, outcome, detail)
	}

	// Kilo starts a new session in the same project (its first prompt in
	// its database, no reply yet).
	kdb := copyTo(t, pluginFixture("kilo-7.7.7", "kilo.db"), filepath.Join(home, ".local", "share", "kilo", "kilo.db"))
	const kiloSession = "ses_de900e632ffeJQvUNHcMPuTWUI"
	kw := agentDBWriter(t, kdb)
	for _, q := range []string{
		`INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) SELECT '` + kiloSession + `', project_id, 'new', '` + project + `', 'New session - 2026-11-26T08:35:00.000Z', version, ?, ? FROM session LIMIT 1`,
		`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_k1', '` + kiloSession + `', ?, ?, '{"role":"user","time":{"created":1}}')`,
		`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_k1', 'msg_k1', '` + kiloSession + `', ?, ?, '{"type":"text","text":"Carry on with the notes"}')`,
	} {
		if _, err := kw.Exec(q, now, now); err != nil {
			t.Fatal(err)
		}
	}
	ctx = startContext(t, hook("kilo", "session-start", map[string]any{"cwd": project}))
	for _, want := range []string{"latest work is a OpenCode session (ses_de94", "ledger resume --for kilo ses_de94", "handoff written"} {
		if !strings.Contains(ctx, want) {
			t.Errorf("Kilo's offer lacks %q: %s", want, ctx)
		}
	}
}

// TestPluginHookPi replays the payloads ledger's Pi extension sent in real
// runs on a home where Pi has kept a session: a brand-new session gets
// nothing; a resumed one its context; PreCompact writes the handoff and a
// record; Stop and SessionEnd read on; and a brand-new Pi session in a
// project whose latest work is OpenCode's is offered it.
func TestPluginHookPi(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	file := copyTo(t, pluginFixture("pi-0.73.1", piFixtureName), filepath.Join(home, ".pi", "agent", "sessions", "--work-agents-cache-proj-pi--", piFixtureName))
	const session = "01a216c2-8921-7397-bbc1-38fa2acd5419"
	set := map[string]any{"session_id": session, "transcript_path": file, "cwd": "/work/agents-cache/proj-pi"}
	hook := func(name string, set map[string]any) result {
		return runHookEnv(t, home, pluginPayload(t, "pi-0.73.1", name, set), nil, "--agent", "pi", "--db", db)
	}
	if ctx := startContext(t, hook("session-start-startup", map[string]any{"session_id": "01a216ff-0000-7000-8000-000000000000",
		"transcript_path": filepath.Join(filepath.Dir(file), "not-written-yet.jsonl"), "cwd": "/elsewhere"})); ctx != "" {
		t.Errorf("a brand-new session got %q", ctx)
	}
	ctx := startContext(t, hook("session-start-resume", set))
	if !strings.Contains(ctx, "# Resume") || !strings.Contains(ctx, session) || !strings.Contains(ctx, "notes-") {
		t.Fatalf("resume context:\n%s", ctx)
	}
	if r := hook("pre-compact", set); r.code != 0 {
		t.Fatalf("PreCompact: %s", r.stderr)
	}
	rows := auditRows(t, home, db)
	if len(rows) != 2 || rows[0].Source != "transcript" || rows[1].Source != "hook" || rows[1].HandoffID == nil {
		t.Fatalf("audit %+v", rows)
	}
	for _, name := range []string{"stop", "session-end"} {
		if r := hook(name, set); r.code != 0 || r.stderr != "" {
			t.Fatalf("%s: exit %d %s", name, r.code, r.stderr)
		}
	}
	if ev, outcome, detail := latestReceipt(t, home, db); ev != "SessionEnd" || outcome == "failed" || !strings.HasPrefix(detail, "pi: ") {
		t.Errorf("SessionEnd receipt %s %s %s", ev, outcome, detail)
	}

	// OpenCode's session is the latest work of its project: a new Pi
	// session there is offered it.
	copyTo(t, pluginFixture("opencode-1.18.33", "opencode.db"), filepath.Join(home, "oc", "opencode.db"))
	if r := execLedger(t, home, "", "", nil, "--db", db, "ingest", filepath.Join(home, "oc", "opencode.db")); r.code != 0 {
		t.Fatalf("ingest: %s", r.stderr)
	}
	ctx = startContext(t, hook("session-start-startup", map[string]any{"session_id": "01a216ff-0000-7000-8000-000000000001",
		"transcript_path": filepath.Join(filepath.Dir(file), "new.jsonl"), "cwd": "/work/agents-cache/proj-oc"}))
	if !strings.Contains(ctx, "latest work is a OpenCode session") || !strings.Contains(ctx, "ledger resume --for pi ses_de94") {
		t.Errorf("Pi's offer: %s", ctx)
	}
}

// piTwiceSession is the session of testdata/agents/pi-0.73.1/compacted-twice:
// a real run in which Pi 0.73.1 compacted one point twice (the check at a
// prompt's end and the one before the next prompt raced), the second
// compaction entry under the first.
const piTwiceSession = "01a21809-5657-77d2-bdcf-e11ec1624023"

// piCompactedTwice puts that session in home's Pi folder as it was when Pi
// prepared both compactions (up to its first compaction entry), and
// returns its path and the lines of the two entries, to append as Pi did.
func piCompactedTwice(t *testing.T, home string) (file, first, second string) {
	t.Helper()
	const name = "2026-11-26T13-26-34-842Z_" + piTwiceSession + ".jsonl"
	real, err := os.ReadFile(pluginFixture("pi-0.73.1", "compacted-twice", name))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(real), "\n")
	at := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, `{"type":"compaction"`) })
	if at < 0 || !strings.HasPrefix(lines[at+1], `{"type":"compaction"`) {
		t.Fatal("the fixture lacks its two compactions in a row")
	}
	file = filepath.Join(home, ".pi", "agent", "sessions", "--home-dev-src-tidepool--", name)
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(strings.Join(lines[:at], "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return file, lines[at], lines[at+1]
}

// appendLine appends a line to file, as the agent appends an entry.
func appendLine(t *testing.T, file, line string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestPluginHookPiCompactedTwice replays what Pi 0.73.1 sends ledger when
// it compacts one point twice, through an extension that passes on every
// event (one installed before ledger's passed on only the first): PreCompact;
// the first compaction entry; PreCompact again, for the same branch;
// the second entry, under the first; PostCompact twice. One point is one
// compaction: one handoff, one record, with Pi's summary.
func TestPluginHookPiCompactedTwice(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	file, first, second := piCompactedTwice(t, home)
	set := map[string]any{"session_id": piTwiceSession, "transcript_path": file, "cwd": "/home/dev/src/tidepool"}
	hook := func(name string, set map[string]any) result {
		t.Helper()
		r := runHookEnv(t, home, pluginPayload(t, "pi-0.73.1", name, set), nil, "--agent", "pi", "--db", db)
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", name, r.code, r.stderr)
		}
		return r
	}
	post := map[string]any{"hook_event_name": "PostCompact"}
	for k, v := range set {
		post[k] = v
	}
	hook("pre-compact", set)
	appendLine(t, file, first)
	hook("pre-compact", set)
	if _, outcome, detail := latestReceipt(t, home, db); outcome != "nothing" || !strings.Contains(detail, "handoff 1 was written for this compaction already") {
		t.Errorf("the second PreCompact: %s %s", outcome, detail)
	}
	appendLine(t, file, second)
	hook("stop", post)
	hook("stop", post)
	rows := auditRows(t, home, db)
	if len(rows) != 1 || rows[0].Source != "hook" || rows[0].HandoffID == nil || *rows[0].HandoffID != 1 || rows[0].Summary == 0 {
		t.Errorf("audit %+v, want one compaction: the hook's, with handoff 1 and Pi's summary", rows)
	}
	r := runCmd(t, home, "", "--db", db, "handoff", "list", "--json")
	if r.code != 0 {
		t.Fatalf("handoff list: %s", r.stderr)
	}
	var hs []struct{ ID int64 }
	decodeJSON(t, r.stdout, &hs)
	if len(hs) != 1 {
		t.Errorf("handoffs %+v, want one", hs)
	}
}

// TestPluginHookBadInput: a plugin payload that names no session, or a
// session that is nowhere, or an agent's database that is not one, fails
// open: exit 0, nothing printed, one warning at most.
func TestPluginHookBadInput(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	bad := filepath.Join(home, ".local", "share", "opencode", "opencode.db")
	if err := os.MkdirAll(filepath.Dir(bad), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("this is not SQLite, whatever its name says"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{
		pluginPayload(t, "opencode-1.18.33", "stop", map[string]any{"session_id": ""}),
		pluginPayload(t, "opencode-1.18.33", "stop", map[string]any{"session_id": "ses_nowhere"}),
		pluginPayload(t, "opencode-1.18.33", "pre-compact", map[string]any{"session_id": "ses_nowhere"}),
		pluginPayload(t, "opencode-1.18.33", "session-start", map[string]any{"session_id": "../../../etc/x"}),
	} {
		r := runHookEnv(t, home, in, nil, "--agent", "opencode", "--db", db)
		if r.code != 0 || r.stdout != "" || strings.Count(r.stderr, "\n") > 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", in, r.code, r.stdout, r.stderr)
		}
	}
	if r := runHookEnv(t, home, `{"hook_event_name":"Stop"}`, nil, "--agent", "opencode", "--mode", "clear", "--db", db); r.code != 2 {
		t.Errorf("--mode clear for a plugin agent: exit %d", r.code)
	}
}
