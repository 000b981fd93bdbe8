package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/store/secrets/secretstest"
	"github.com/agentledger/ledger/store/storetest"
)

// seededSession is the session of testdata/redact/seeded.jsonl.
const seededSession = secretstest.SeededSession

// seeded is one secret planted in the seeded transcript, with the kind of
// rule expected to find it.
type seeded struct {
	kind, value string
}

// seededTranscript writes the seeded Claude Code transcript, secrets
// joined, into dir and returns the distinct secrets it holds (see
// secretstest.JoinSeeded).
func seededTranscript(t *testing.T, dir string) []seeded {
	t.Helper()
	out, seeds := secretstest.JoinSeeded(t, filepath.Join("..", ".."))
	var secrets []seeded
	for _, s := range seeds {
		secrets = append(secrets, seeded{s.Kind, s.Value})
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, seededSession+".jsonl"), []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	return secrets
}

var alnumRun = regexp.MustCompile(`[A-Za-z0-9]{10,}`)

// chunks are the distinctive parts of a secret, lower case (the full-text
// index folds case): its runs of 10 or more letters and digits, else the
// whole secret. None of them may appear anywhere once it is redacted.
func (s seeded) chunks() []string {
	runs := alnumRun.FindAllString(s.value, -1)
	if len(runs) == 0 {
		runs = []string{s.value}
	}
	for i := range runs {
		runs[i] = strings.ToLower(runs[i])
	}
	return runs
}

// leaked returns the secrets some chunk of which is in data.
func leaked(data []byte, secrets []seeded) []seeded {
	low := bytes.ToLower(data)
	var out []seeded
	for _, s := range secrets {
		for _, c := range s.chunks() {
			if bytes.Contains(low, []byte(c)) {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

func assertNoLeak(t *testing.T, where string, data []byte, secrets []seeded) {
	t.Helper()
	for _, s := range leaked(data, secrets) {
		t.Errorf("%s holds the seeded %s %.24s...", where, s.kind, s.value)
	}
}

// dbBytes reads the database file and its WAL (absent when no process has
// the database open).
func dbBytes(t *testing.T, db string) []byte {
	t.Helper()
	var all []byte
	for _, p := range []string{db, db + "-wal"} {
		b, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return all
}

// ftsTerms lists every term of the full-text indexes: FTS5 stores terms
// prefix-compressed, so a secret's bytes may hide from a grep of the file.
func ftsTerms(t *testing.T, s *store.Store) []byte {
	t.Helper()
	ctx := context.Background()
	conn, err := rawDB(t, s.Path()).Connx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var all []byte
	for _, tbl := range []string{"messages_fts", "handoffs_fts", "compactions_fts"} {
		v := "temp.vocab_" + tbl
		if _, err := conn.ExecContext(ctx, `CREATE VIRTUAL TABLE IF NOT EXISTS `+v+` USING fts5vocab(main, '`+tbl+`', 'row')`); err != nil {
			t.Fatal(err)
		}
		var terms []string
		if err := conn.SelectContext(ctx, &terms, `SELECT term FROM `+v); err != nil {
			t.Fatal(err)
		}
		all = append(all, strings.Join(terms, "\n")...)
	}
	return all
}

// holdOpen opens the database in this process for the length of the test,
// so that the WAL outlives the ledger processes and its bytes are checked
// too (the last connection to close checkpoints and removes it).
func holdOpen(t *testing.T, db string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func hasCommand(t *testing.T, home, name string) bool {
	t.Helper()
	return runCmd(t, home, "", name, "--help").code == 0
}

// TestSeededSecretsNeverStored is the acceptance check: no seeded
// secret appears in the database file, its WAL, the full-text index, a
// handoff (output and file), a search result, resume output or a listing.
func TestSeededSecretsNeverStored(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	dir := filepath.Join(home, "projects", "-home-dev-src-shop")
	secrets := seededTranscript(t, dir)
	holder := holdOpen(t, db)

	sum := ingest(t, home, db, dir)
	if sum.Messages == 0 || sum.Redacted < len(secrets) {
		t.Errorf("ingest = %+v, want messages and at least %d secrets redacted", sum, len(secrets))
	}

	outputs := map[string][]string{
		"compact":         {"compact", seededSession[:8], "--json", "--task", "rotate " + secrets[0].value},
		"handoff show":    {"handoff", "show", seededSession[:8], "--json"},
		"sessions":        {"sessions", "--json"},
		"search REDACTED": {"search", "--json", "REDACTED"},
	}
	if hasCommand(t, home, "resume") {
		outputs["resume md"] = []string{"resume", seededSession[:8]}
		outputs["resume json"] = []string{"resume", seededSession[:8], "--format", "json"}
		outputs["resume hook"] = []string{"resume", seededSession[:8], "--format", "hook"}
	} else {
		t.Log("ledger resume is not registered yet: its output is not checked")
	}
	names := make([]string, 0, len(outputs))
	for name := range outputs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		r := runCmd(t, home, "", append([]string{"--db", db}, outputs[name]...)...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", name, r.code, r.stderr)
		}
		assertNoLeak(t, name+" output", []byte(r.stdout+r.stderr), secrets)
		if name == "search REDACTED" && !strings.Contains(r.stdout, "REDACTED") {
			t.Errorf("search REDACTED found nothing: %s", r.stdout)
		}
	}
	// Search for each secret's distinctive parts finds nothing.
	for _, s := range secrets {
		for _, c := range s.chunks() {
			if hits, _ := search(t, home, db, c); len(hits) > 0 {
				t.Errorf("search %q (part of the seeded %s) found %d hits", c, s.kind, len(hits))
			}
		}
	}
	// The handoff file compact wrote.
	files, _ := filepath.Glob(filepath.Join(home, "handoffs", "*", "*", "*.md"))
	if len(files) == 0 {
		t.Error("compact wrote no handoff file")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		assertNoLeak(t, "handoff file", b, secrets)
	}

	raw := dbBytes(t, db)
	if _, err := os.Stat(db + "-wal"); err != nil {
		t.Errorf("no WAL while the database is held open: %v", err)
	}
	assertNoLeak(t, "database file and WAL", raw, secrets)
	assertNoLeak(t, "full-text index", ftsTerms(t, holder), secrets)

	// Recall per kind, and the kinds the replacements name.
	found := map[string][2]int{}
	for _, s := range secrets {
		f := found[s.kind]
		f[1]++
		if len(leaked(raw, []seeded{s})) == 0 {
			f[0]++
		}
		found[s.kind] = f
	}
	kinds := make([]string, 0, len(found))
	for k := range found {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		labelled := bytes.Contains(raw, []byte("[REDACTED:"+k+"]"))
		t.Logf("recall %-26s %d/%d  labelled [REDACTED:%s]: %v", k, found[k][0], found[k][1], k, labelled)
		if !labelled {
			t.Errorf("no [REDACTED:%s] in the database", k)
		}
	}

	// Once every process has closed it, the WAL is folded into the file.
	holder.Close()
	assertNoLeak(t, "database file after checkpoint", dbBytes(t, db), secrets)
}

// TestNoRedactThenRescan proves --no-redact stores secrets as they come, and
// that redact --rescan then removes them from the rows, the index, the file
// and the WAL.
func TestNoRedactThenRescan(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	dir := filepath.Join(home, "projects", "-home-dev-src-shop")
	secrets := seededTranscript(t, dir)
	holder := holdOpen(t, db)

	if r := runCmd(t, home, "", "--db", db, "--no-redact", "ingest", dir); r.code != 0 {
		t.Fatalf("ingest --no-redact: exit %d: %s", r.code, r.stderr)
	}
	if got := leaked(dbBytes(t, db), secrets); len(got) != len(secrets) {
		t.Fatalf("--no-redact stored %d of %d seeded secrets as they came, want all", len(got), len(secrets))
	}
	var aws seeded
	for _, s := range secrets {
		if s.kind == "aws-access-token" {
			aws = s
		}
	}
	if hits, _ := search(t, home, db, aws.value); len(hits) == 0 {
		t.Fatalf("search %s found nothing after --no-redact", aws.value)
	}

	rescan := func() int64 {
		t.Helper()
		r := runCmd(t, home, "", "--db", db, "redact", "--rescan", "--json")
		if r.code != 0 {
			t.Fatalf("redact --rescan: exit %d: %s", r.code, r.stderr)
		}
		var got struct {
			RowsChanged *int64 `json:"rows_changed"`
		}
		decodeJSON(t, r.stdout, &got)
		if got.RowsChanged == nil {
			t.Fatalf("redact --rescan --json lacks rows_changed: %s", r.stdout)
		}
		return *got.RowsChanged
	}
	if n := rescan(); n <= 0 {
		t.Errorf("first rescan: rows_changed = %d, want > 0", n)
	}
	if _, err := os.Stat(db + "-wal"); err != nil {
		t.Errorf("no WAL while the database is held open: %v", err)
	}
	assertNoLeak(t, "database file and WAL after rescan", dbBytes(t, db), secrets)
	assertNoLeak(t, "full-text index after rescan", ftsTerms(t, holder), secrets)
	for _, s := range secrets {
		for _, c := range s.chunks() {
			if hits, _ := search(t, home, db, c); len(hits) > 0 {
				t.Errorf("after rescan, search %q (part of the seeded %s) found %d hits", c, s.kind, len(hits))
			}
		}
	}
	if hits, _ := search(t, home, db, "REDACTED"); len(hits) == 0 {
		t.Error("after rescan, search REDACTED finds nothing")
	}
	if n := rescan(); n != 0 {
		t.Errorf("second rescan: rows_changed = %d, want 0", n)
	}
}

// TestRedactCorpus ingests the real corpus with the binary and counts the
// replacements per kind: its authors removed their secrets, so each is a
// false positive unless inspection says otherwise (store's
// TestRedactCorpusFalsePositives logs them with their context).
func TestRedactCorpus(t *testing.T) {
	t.Parallel()
	corpus := corpusDir(t)
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	// The built binary ingests: the rules are the same code, and matching
	// every rule on 8 MB runs several times slower under the race detector.
	sum := ingestBin(t, home, db, corpus)
	var stored []string
	if err := rawDB(t, db).Select(&stored, `SELECT text || coalesce(blocks, '') FROM messages
		UNION ALL SELECT summary FROM compactions UNION ALL SELECT title FROM sessions`); err != nil {
		t.Fatal(err)
	}
	byKind := map[string]int{}
	for _, m := range regexp.MustCompile(`\[REDACTED:([a-z0-9-]+)\]`).FindAllStringSubmatch(strings.Join(stored, "\n"), -1) {
		byKind[m[1]]++
	}
	t.Logf("corpus: %d messages, %d secrets redacted, replacements by kind %v", sum.Messages, sum.Redacted, byKind)
	if sum.Redacted > 0 || len(byKind) > 0 {
		t.Errorf("%d redactions in the sanitized corpus, want none (README: 0 false positives on the real corpus)", sum.Redacted)
	}
}

func TestRedactUsage(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	for _, args := range [][]string{{"redact"}, {"redact", "--json"}, {"--no-redact", "redact", "--rescan"}} {
		r := runCmd(t, home, "", append([]string{"--db", db}, args...)...)
		if r.code != 2 || !strings.HasPrefix(r.stderr, "ledger: ") || !strings.Contains(r.stderr, "rescan") {
			t.Errorf("%v: exit %d, stderr %q; want a usage error (2) that explains --rescan", args, r.code, r.stderr)
		}
	}
	r := runCmd(t, home, "", "--help")
	if !strings.Contains(r.stdout, "--no-redact") || !strings.Contains(r.stdout, "RISK") {
		t.Errorf("--help does not document --no-redact and its risk:\n%s", r.stdout)
	}
}

// TestReadCommandsDoNotLoadSecretRules runs commands that start with every
// agent session (version, resume, search, sessions) in a fresh process and
// checks that none compiled the secret rules (~30 ms); ingest does.
func TestReadCommandsDoNotLoadSecretRules(t *testing.T) {
	t.Parallel()
	if os.Getenv("LEDGER_TEST_LAZY_RULES") != "" {
		lazyRulesHelper(t)
		return
	}
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	ingest(t, home, db, sampleDir(t))
	cmd := exec.Command(os.Args[0], "-test.run=^TestReadCommandsDoNotLoadSecretRules$")
	// The helper's TestMain takes this run's binary rather than building
	// one.
	cmd.Env = append(os.Environ(), "LEDGER_TEST_LAZY_RULES="+db, "LEDGER_TEST_BIN="+ledgerBin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "lazy rules ok") {
		t.Fatalf("helper did not run its checks:\n%s", out)
	}
}

// lazyRulesHelper is the fresh process of TestReadCommandsDoNotLoadSecretRules.
func lazyRulesHelper(t *testing.T) {
	db := os.Getenv("LEDGER_TEST_LAZY_RULES")
	home := filepath.Dir(db)
	env := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	// runLoaded runs a command and tells whether its store compiled the rules.
	runLoaded := func(args ...string) bool {
		var out, errb bytes.Buffer
		app := &App{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: env, Getwd: os.Getwd}
		defer app.close()
		if code := app.run(context.Background(), append([]string{"--db", db}, args...)); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		s := app.Engine().Opened()
		return s != nil && s.SecretRulesLoaded()
	}
	for _, args := range [][]string{{"version"}, {"sessions"}, {"search", "SessionStore"}, {"resume", "7c1d"}, {"handoff", "list"}} {
		if runLoaded(args...) {
			t.Fatalf("%v compiled the secret rules", args)
		}
	}
	if !runLoaded("ingest", filepath.Join("..", "..", "testdata", "redact")) {
		t.Fatal("ingest did not compile the secret rules: the check above proves nothing")
	}
	fmt.Println("lazy rules ok")
}

// claudeLine is m as a Claude Code transcript line.
func claudeLine(t *testing.T, session, uuid string, m compact.Message) []byte {
	t.Helper()
	var content []map[string]any
	for _, b := range m.Blocks {
		switch b.Kind {
		case compact.BlockText:
			content = append(content, map[string]any{"type": "text", "text": b.Text})
		case compact.BlockThinking:
			content = append(content, map[string]any{"type": "thinking", "thinking": b.Text})
		case compact.BlockToolUse:
			content = append(content, map[string]any{"type": "tool_use", "id": b.ToolID, "name": b.ToolName, "input": json.RawMessage(b.Input)})
		case compact.BlockToolResult:
			content = append(content, map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": b.Text})
		}
	}
	line, err := json.Marshal(map[string]any{"type": string(m.Role), "uuid": uuid, "sessionId": session, "cwd": "/home/dev/src/shop",
		"timestamp": "2026-03-02T09:00:00Z", "message": map[string]any{"role": string(m.Role), "content": content}})
	if err != nil {
		t.Fatal(err)
	}
	return append(line, '\n')
}

// TestSecretsInEveryPlacementNeverStored ingests a transcript holding
// each of 28 kinds of live-shaped secret in each of 21 placements (prose,
// paths and URLs typed by the user, tool input paths, shell commands, file
// content, tool output, thinking), and the credentials that are no
// provider's token (an Azure connection string in a shell command, a
// password in prose): none of them is in the database file, its WAL or the
// full-text index afterwards.
func TestSecretsInEveryPlacementNeverStored(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	const session = "5eed7a1e-0c0d-4e5a-9b1f-2d3c4b5a6f71"
	var buf bytes.Buffer
	var secrets []seeded
	n := 0
	for _, k := range secretstest.Kinds() {
		secrets = append(secrets, seeded{k.Kind, k.Value})
		for _, p := range secretstest.Placements() {
			n++
			buf.Write(claudeLine(t, session, fmt.Sprintf("u-%d", n), p.Message(k.Value)))
		}
	}
	for _, c := range secretstest.Credentials() {
		secrets = append(secrets, seeded{c.Kind, c.Value})
		for _, p := range secretstest.TextPlacements() {
			n++
			buf.Write(claudeLine(t, session, fmt.Sprintf("u-%d", n), p.Message(c.Text)))
		}
	}
	dir := filepath.Join(home, "projects")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, session+".jsonl"), buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	holder := holdOpen(t, db)
	if sum := ingest(t, home, db, dir); sum.Messages != n {
		t.Fatalf("ingest = %+v, want %d messages", sum, n)
	}
	assertNoLeak(t, "database file and WAL", dbBytes(t, db), secrets)
	assertNoLeak(t, "full-text index", ftsTerms(t, holder), secrets)
}
