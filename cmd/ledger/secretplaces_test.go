package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentledger/ledger/store/pgtest"
	"github.com/agentledger/ledger/store/storetest"
)

// placed is a secret put in one placement of the fixtures in
// testdata/redact/places: text replaces the placement's {{marker}}, secret
// is what must never be stored (its chunks, see seeded).
type placed struct {
	marker, text string
	seeded
}

// placements generates a secret for every placement of the fixtures, and
// for what a hook or a command adds (PreCompact's instructions, a note, a
// compact --task). The values are random, seeded: no live secret sits in
// the source, and the fixtures hold only the markers.
func placements() []placed {
	rnd := rand.New(rand.NewPCG(26, 3))
	const (
		alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
		lower  = "abcdefghijklmnopqrstuvwxyz0123456789"
		base32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
		b64    = alnum + "+/"
	)
	r := func(alphabet string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rnd.IntN(len(alphabet))]
		}
		return string(b)
	}
	digits := func(n int) string { return r("0123456789", n) }
	p := func(marker, kind, secret, text string) placed {
		return placed{marker, strings.ReplaceAll(text, "%s", secret), seeded{kind, secret}}
	}
	var pem []string
	body := r(b64, 6*64)
	for i := 0; i < len(body); i += 64 {
		pem = append(pem, body[i:i+64])
	}
	return []placed{
		// Claude Code.
		p("session", "gitlab-pat", "glpat-"+r(alnum, 20), "7c0ffee0-%s"),
		p("title", "cli-password", r(alnum, 14), "Deploy with sshpass -p '%s' ssh deploy@10.0.0.7"),
		p("cwd", "aws-access-token", "AKIA"+r(base32, 16), "/home/dev/src/shop-%s"),
		p("branch", "github-pat", "ghp_"+r(alnum, 36), "fix/%s"),
		p("user", "stripe-access-token", "sk_live_"+r(alnum, 24), "The registry token is %s, deploy with it."),
		p("model", "npm-access-token", "npm_"+r(lower, 36), "claude-opus-%s"),
		p("thinking", "url-credentials", r(alnum, 16), "First: redis-cli -u redis://:%s@cache.internal:6379/0 ping"),
		p("assistant", "password", r(alnum, 18), "The old config had password: DB_PASSWORD=%s in it."),
		p("toolname", "github-pat", "ghp_"+r(alnum, 36), "deploy-%s"),
		p("toolinput", "cli-password", r(alnum, 16), "docker login -u deploy -p %s registry.example.com"),
		p("tooloutput", "private-key-truncated", body[:200], "-----BEGIN OPENSSH PRIVATE KEY-----\n"+strings.Join(pem, "\n")+"\n[output truncated: 2.1 KB more]"),
		p("queued", "password", r(alnum, 16), "also run mysql -uroot -p%s shop < fix.sql"),
		p("attachment", "curl-auth-user", r(alnum, 16), "and check curl -u deploy:%s https://api.example.com/v1/ping"),
		p("summary", "url-credentials", r(alnum, 12), "Work so far: moved the db to postgres://app:p@ss/w0rd%s@db.internal:5432/shop"),
		// Codex.
		p("codex-session", "aws-access-token", "AKIA"+r(base32, 16), "019e5a10-7c2b-7d41-9a8e-%s"),
		p("codex-cwd", "gitlab-pat", "glpat-"+r(alnum, 20), "/home/dev/src/cart-%s"),
		p("codex-branch", "github-oauth", "gho_"+r(alnum, 36), "fix/%s"),
		p("codex-model", "digitalocean-pat", "dop_v1_"+r("0123456789abcdef", 64), "gpt-5.5-%s"),
		p("codex-user", "stripe-access-token", "rk_live_"+r(alnum, 24), "Use the key %s for refunds."),
		p("codex-toolname", "github-pat", "ghp_"+r(alnum, 36), "shell-%s"),
		p("codex-toolinput", "cli-password", r(alnum, 16), "sshpass -p %s ssh deploy@10.0.0.9 uptime"),
		p("codex-tooloutput", "url-credentials", r(alnum, 16), "REDIS_URL=redis://:%s@cache:6379"),
		p("codex-assistant", "generic-api-key", r(alnum, 24), "I moved token: GITLAB_TOKEN=%s out of the repo."),
		p("codex-summary", "cli-password", r(alnum, 16), "Summary: logged in with docker login --password %s ghcr.io; next, refunds."),
		// What hooks and commands add.
		p("precompact", "gcp-api-key", "AIza"+r(alnum, 35), "keep the gcp key %s"),
		p("note", "cli-token", r(alnum, 24), "rotate with kubectl --token %s"),
		p("task", "slack-bot-token", "xoxb-"+digits(11)+"-"+digits(12)+"-"+r(alnum, 24), "rotate %s"),
	}
}

// placeIn fills a fixture's markers with the placements' texts, JSON-escaped
// (every marker sits in a JSON string; Codex's tool input in one encoded
// twice).
func placeIn(t *testing.T, fixture string, ps []placed) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "redact", "places", fixture))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, p := range ps {
		v := jsonEscape(p.text)
		if p.marker == "codex-toolinput" {
			v = jsonEscape(v)
		}
		s = strings.ReplaceAll(s, "{{"+p.marker+"}}", v)
	}
	if m := regexp.MustCompile(`\{\{[a-z-]+\}\}`).FindString(s); m != "" {
		t.Fatalf("%s: marker %s has no placement", fixture, m)
	}
	return []byte(s)
}

func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

func placement(ps []placed, marker string) placed {
	for _, p := range ps {
		if p.marker == marker {
			return p
		}
	}
	panic("no placement " + marker)
}

// filesUnder reads every file under root: its path (below root) and bytes.
func filesUnder(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			out[rel+"/"] = nil
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("read %s: %v", p, err)
		}
		out[rel] = b
		return nil
	})
	return out
}

// TestSecretsNeverStoredAnywhere puts a secret in every placement of a
// Claude Code and a Codex transcript (prompt, queued prompt, attachment,
// tool name, input and output, thinking, assistant text, compaction
// summary, title, session id, branch, model, cwd) and in what hooks and
// commands add, and runs the real binary as an agent's hooks and a user
// would: a PostToolUse hook while a queued prompt waits (the cursor keeps
// it), ingest, a PreCompact hook, compact, note, a Codex Stop hook, sync to
// PostgreSQL. Then no byte of any secret is in any file of the ledger's
// folder (the database, its WAL, handoff files, pending drafts; names
// included), the hook log, the full-text index, the output of resume,
// search, export, sessions, handoff and hooks log, or the team ledger.
func TestSecretsNeverStoredAnywhere(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	ledgerDir := filepath.Join(home, "ledger")
	db := filepath.Join(ledgerDir, "ledger.db")
	ps := placements()
	var secrets []seeded
	for _, p := range ps {
		secrets = append(secrets, p.seeded)
	}
	holder := holdOpen(t, db)
	run, outputs := placeScenario(t, home, db, ps, func() {
		assertNoLeak(t, "database and WAL after a hook with a queued prompt waiting", dbBytes(t, db), secrets)
	})
	session := placement(ps, "session").text
	prefix := session[:8]
	codexSession := placement(ps, "codex-session").text

	// Every session is there, and every placement was read: the secrets
	// are redacted, not lost with their messages.
	var sessions []struct {
		ID       string `json:"id"`
		Messages int    `json:"messages"`
	}
	decodeJSON(t, run("", "sessions", "--json"), &sessions)
	if len(sessions) != 2 {
		t.Fatalf("sessions = %+v, want the Claude Code and the Codex one", sessions)
	}
	for _, want := range []string{"[REDACTED:gitlab-pat]", "[REDACTED:aws-access-token]"} {
		found := false
		for _, s := range sessions {
			found = found || strings.Contains(s.ID, want)
		}
		if !found {
			t.Errorf("no session id holds %s: %+v", want, sessions)
		}
	}
	codexPrefix := codexSession[:8]

	// What the commands print.
	for _, args := range [][]string{
		{"sessions", "--json"}, {"sessions"},
		{"resume", prefix}, {"resume", prefix, "--format", "json"}, {"resume", prefix, "--format", "hook"},
		{"resume", session, "--format", "json"}, // the id as the agent knows it
		{"resume", codexPrefix}, {"resume", codexPrefix, "--format", "json"},
		{"export", prefix}, {"export", prefix, "--format", "md"},
		{"export", codexPrefix}, {"export", codexPrefix, "--format", "md"},
		{"handoff", "show", prefix, "--json"}, {"handoff", "list", "--json"},
		{"search", "--json", "REDACTED"}, {"hooks", "log", "--json"}, {"audit", "--json"},
	} {
		out := run("", args...)
		assertNoLeak(t, fmt.Sprint(args), []byte(out), secrets)
		if args[0] == "search" && !strings.Contains(out, "REDACTED") {
			t.Errorf("search REDACTED found nothing")
		}
	}
	// A new session in the same folder (its path holds a secret) after
	// /clear gets the project's latest handoff.
	b, _ := json.Marshal(map[string]any{"session_id": "c1ea2000-0000-4000-8000-000000000001", "transcript_path": filepath.Join(home, "none.jsonl"),
		"cwd": placement(ps, "cwd").text, "hook_event_name": "SessionStart", "source": "clear"})
	if out := run(string(b), "hook"); !strings.Contains(out, "additionalContext") || !strings.Contains(out, "7c0ffee0") {
		t.Errorf("SessionStart after /clear in the project found no handoff: %s", out)
	} else {
		outputs.WriteString(out)
	}
	assertNoLeak(t, "the output of hooks and commands", []byte(outputs.String()), secrets)
	// The prompts queued while the agent worked (the one the cursor kept
	// between two reads among them) and the compaction summary are
	// recorded, their secrets redacted, not lost.
	for _, q := range []string{"mysql", "curl", "Primary Request"} {
		if hits, _ := search(t, home, db, q); len(hits) == 0 {
			t.Errorf("search %q found nothing: the placement was lost", q)
		}
	}
	for _, s := range secrets {
		for _, c := range s.chunks() {
			if hits, _ := search(t, home, db, c); len(hits) > 0 {
				t.Errorf("search %q (part of the %s) found %d hits", c, s.kind, len(hits))
			}
		}
	}

	// The team ledger.
	if os.Getenv(pgtest.Env) != "" {
		url := storetest.MigratedPG(t)
		outputs.WriteString(run("", "sync", "--to", url))
		assertNoLeak(t, "the team ledger's rows", pgRows(t, url), secrets)
	}

	// Every file ledger keeps, and its name; the hook log.
	for _, root := range []string{ledgerDir, filepath.Join(home, ".state")} {
		for name, b := range filesUnder(t, root) {
			assertNoLeak(t, "file "+name, append([]byte(name+"\n"), b...), secrets)
		}
	}
	if md, _ := filepath.Glob(filepath.Join(ledgerDir, "handoffs", "*", "*", "*.md")); len(md) == 0 {
		t.Error("no handoff file: the check proves nothing")
	}
	if _, err := os.Stat(db + "-wal"); err != nil {
		t.Errorf("no WAL while the database is held open: %v", err)
	}
	assertNoLeak(t, "full-text index", ftsTerms(t, holder), secrets)

	// Every placement was read and redacted, under its kind.
	raw := dbBytes(t, db)
	for _, p := range ps {
		if !strings.Contains(string(raw), "[REDACTED:"+p.kind+"]") {
			t.Errorf("%s: no [REDACTED:%s] in the database", p.marker, p.kind)
		}
	}
}

// placeScenario writes the fixtures' transcripts with the placements'
// secrets where an agent keeps them under home, and runs the binary on
// them as the agents' hooks and a user would, with the global flags given
// (--no-redact: a ledger written as an older ledger wrote it): a
// PostToolUse hook while a queued prompt waits (then afterHook), ingest, a
// PreCompact hook with instructions, compact --task, note, a Codex Stop
// hook, ingest. It returns how it runs the binary, and what it printed.
func placeScenario(t *testing.T, home, db string, ps []placed, afterHook func(), flags ...string) (func(stdin string, args ...string) string, *strings.Builder) {
	t.Helper()
	run := func(stdin string, args ...string) string {
		t.Helper()
		r := execLedger(t, home, "", stdin, []string{"XDG_STATE_HOME=" + filepath.Join(home, ".state")}, append(append([]string{"--db", db}, flags...), args...)...)
		if r.code != 0 {
			t.Fatalf("ledger %v: exit %d: %s", args, r.code, r.stderr)
		}
		return r.stdout + r.stderr
	}
	hook := func(agent string, payload map[string]any) string {
		t.Helper()
		b, _ := json.Marshal(payload)
		args := []string{"hook"}
		if agent == "codex" {
			args = append(args, "--agent", "codex")
		}
		return run(string(b), args...)
	}
	outputs := &strings.Builder{}

	// Claude Code: the first lines, a queued prompt still waiting.
	session, cwd := placement(ps, "session").text, placement(ps, "cwd").text
	claudeDir := filepath.Join(home, ".claude", "projects", "-home-dev-src-shop")
	if err := os.MkdirAll(claudeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	claude := filepath.Join(claudeDir, session+".jsonl")
	if err := os.WriteFile(claude, placeIn(t, "claude-1.jsonl", ps), 0o600); err != nil {
		t.Fatal(err)
	}
	outputs.WriteString(hook("claude", map[string]any{"session_id": session, "transcript_path": claude, "cwd": cwd,
		"hook_event_name": "PostToolUse", "tool_name": placement(ps, "toolname").text}))
	afterHook()

	// The rest of it, then a PreCompact hook, compact, a note.
	f, err := os.OpenFile(claude, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(placeIn(t, "claude-2.jsonl", ps))
	f.Close()
	outputs.WriteString(run("", "ingest", filepath.Join(home, ".claude", "projects")))
	outputs.WriteString(hook("claude", map[string]any{"session_id": session, "transcript_path": claude, "cwd": cwd,
		"hook_event_name": "PreCompact", "trigger": "manual", "custom_instructions": placement(ps, "precompact").text}))
	prefix := session[:8]
	outputs.WriteString(run("", "compact", prefix, "--task", placement(ps, "task").text))
	outputs.WriteString(run("", "note", prefix, "--decision", placement(ps, "note").text))

	// Codex: a Stop hook reads the rollout, ingest reads it again.
	codexSession := placement(ps, "codex-session").text
	codexDir := filepath.Join(home, ".codex", "sessions", "2026", "06", "02")
	if err := os.MkdirAll(codexDir, 0o700); err != nil {
		t.Fatal(err)
	}
	rollout := filepath.Join(codexDir, "rollout-2026-06-02T10-00-00-"+codexSession+".jsonl")
	if err := os.WriteFile(rollout, placeIn(t, "codex.jsonl", ps), 0o600); err != nil {
		t.Fatal(err)
	}
	outputs.WriteString(hook("codex", map[string]any{"session_id": codexSession, "turn_id": "t1", "transcript_path": rollout,
		"cwd": placement(ps, "codex-cwd").text, "hook_event_name": "Stop", "model": placement(ps, "codex-model").text,
		"stop_hook_active": false}))
	outputs.WriteString(run("", "ingest", filepath.Join(home, ".codex", "sessions")))
	return run, outputs
}

// TestRescanCleansWhatOlderLedgersStored: a ledger written with redaction
// off (what older versions stored, secrets in session ids, cursor states,
// paths and every column), plus a cursor state put in raw by SQLite
// itself, is clean after redact --rescan: no byte of any secret in any
// file of the ledger's folder or its names (the database, the WAL, the
// handoff files, which move when their names held one), or the full-text
// index; and the ledger still works: resume finds the session by the id
// the agent knows, search finds the redacted placements.
func TestRescanCleansWhatOlderLedgersStored(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	ledgerDir := filepath.Join(home, "ledger")
	db := filepath.Join(ledgerDir, "ledger.db")
	ps := placements()
	var secrets []seeded
	for _, p := range ps {
		secrets = append(secrets, p.seeded)
	}
	holder := holdOpen(t, db)
	placeScenario(t, home, db, ps, func() {}, "--no-redact")
	run := func(stdin string, args ...string) string {
		t.Helper()
		r := execLedger(t, home, "", stdin, nil, append([]string{"--db", db}, args...)...)
		if r.code != 0 {
			t.Fatalf("ledger %v: exit %d: %s", args, r.code, r.stderr)
		}
		return r.stdout
	}
	if got := leaked(dbBytes(t, db), secrets); len(got) < len(secrets)-3 {
		t.Fatalf("--no-redact stored %d of %d secrets as they came: the rescan would prove little", len(got), len(secrets))
	}
	// A cursor state as the code before this fix stored it: the queued
	// prompt raw, put in by SQLite itself.
	queued := placement(ps, "queued")
	raw := rawDB(t, db)
	if _, err := raw.Exec(`INSERT INTO cursors (path, session_id, format, size, mod_time, offset, line, head_len, head_hash, state, updated_at)
		VALUES ('/tmp/old.jsonl', 'old-session', 'claude', 1, 1, 1, 1, 1, 'h', ?, '2026-01-01 00:00:00')`,
		`{"Format":"claude","queued":["`+jsonEscape(queued.text)+`"]}`); err != nil {
		t.Fatal(err)
	}

	out := run("", "redact", "--rescan", "--json")
	var res struct {
		RowsChanged int64 `json:"rows_changed"`
		Secrets     int   `json:"secrets"`
	}
	decodeJSON(t, out, &res)
	if res.RowsChanged == 0 || res.Secrets < len(secrets) {
		t.Errorf("rescan = %+v, want rows changed and at least %d secrets", res, len(secrets))
	}
	for name, b := range filesUnder(t, ledgerDir) {
		assertNoLeak(t, "after rescan, file "+name, append([]byte(name+"\n"), b...), secrets)
	}
	if md, _ := filepath.Glob(filepath.Join(ledgerDir, "handoffs", "*", "*", "*.md")); len(md) == 0 {
		t.Error("no handoff file left: the rescan lost them")
	}
	assertNoLeak(t, "after rescan, the full-text index", ftsTerms(t, holder), secrets)
	var state string
	if err := raw.Get(&state, `SELECT state FROM cursors WHERE path = '/tmp/old.jsonl'`); err != nil ||
		!strings.Contains(state, "[REDACTED:") || !json.Valid([]byte(state)) {
		t.Errorf("the old cursor state is %q (%v), want it redacted and JSON", state, err)
	}

	// Still a working ledger.
	session := placement(ps, "session").text
	var resumed map[string]any
	decodeJSON(t, run("", "resume", session, "--format", "json"), &resumed)
	for _, q := range []string{"mysql", "curl", "Primary Request", "REDACTED"} {
		if hits, _ := search(t, home, db, q); len(hits) == 0 {
			t.Errorf("after rescan, search %q found nothing", q)
		}
	}
	if out := run("", "redact", "--rescan", "--json"); !strings.Contains(out, `"rows_changed": 0`) && !strings.Contains(out, `"rows_changed":0`) {
		t.Errorf("a second rescan changed rows: %s", out)
	}
}

// pgRows is every row of every table of the PostgreSQL ledger at url, as
// JSON text.
func pgRows(t *testing.T, url string) []byte {
	t.Helper()
	ctx := context.Background()
	conn, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		rows.Scan(&name)
		tables = append(tables, name)
	}
	rows.Close()
	var all []byte
	for _, tbl := range tables {
		rows, err := conn.QueryContext(ctx, `SELECT row_to_json(t)::text FROM "`+tbl+`" t`)
		if err != nil {
			t.Fatalf("%s: %v", tbl, err)
		}
		for rows.Next() {
			var s string
			rows.Scan(&s)
			all = append(all, s...)
			all = append(all, '\n')
		}
		rows.Close()
	}
	if len(all) == 0 {
		t.Fatal("the team ledger is empty: the check proves nothing")
	}
	return all
}
