package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/store/storetest"
	"github.com/agentledger/ledger/transcript"
)

const sampleSession = "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57"

// sampleInProject writes the sample Claude session into a projects folder
// under home, with its cwd moved to project and its session id to id.
func sampleInProject(t *testing.T, home, project, id string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sampleDir(t), "claude", "-home-dev-src-payments", sampleSession+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.ReplaceAll(b, []byte("/home/dev/src/payments"), []byte(project))
	b = bytes.ReplaceAll(b, []byte(sampleSession), []byte(id))
	path := filepath.Join(home, "projects", strings.ReplaceAll(project, "/", "-"), id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// gitRepo makes a repository at dir on branch fix-session-expiry with the
// sample session's files committed.
func gitRepo(t *testing.T, dir string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	os.MkdirAll(filepath.Join(dir, "pkg", "auth"), 0o755)
	for _, f := range []string{"session_store.go", "clock.go", "session_store_test.go", "refresh_test.go"} {
		os.WriteFile(filepath.Join(dir, "pkg", "auth", f), []byte("package auth\n"), 0o644)
	}
	git(t, dir, "init", "-q", "-b", "fix-session-expiry")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "start")
}

func TestResumeBudgetEverySize(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	// Setup, by the binary (faster than under the race detector): the
	// resumes below run in-process.
	ingestBin(t, home, db, filepath.Join(sampleDir(t), "claude"),
		filepath.Join(corpusDir(t), "claude", "spotter-258c7280-ae70-4798-800f-63464d01a85d.jsonl"))
	// One session with a written handoff, one resumed from an extraction.
	if r := runCmd(t, home, "", "--db", db, "compact", "258c7280", "--budget", "4000"); r.code != 0 {
		t.Fatalf("compact: %s", r.stderr)
	}
	e, err := engine.Open(engine.Config{DB: db, Mode: engine.Read})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	count := compact.DefaultEstimator().Tokens
	for _, id := range []string{"258c7280-ae70-4798-800f-63464d01a85d", sampleSession} {
		full, err := e.Resume(ctx, engine.ResumeRequest{Session: id, Budget: 100_000})
		if err != nil {
			t.Fatal(err)
		}
		var task, next string
		for _, sec := range strings.Split(full.Markdown, "\n## ") {
			if rest, ok := strings.CutPrefix(sec, "Task\n"); ok {
				task = strings.SplitN(rest, "\n", 2)[0]
			}
			if rest, ok := strings.CutPrefix(sec, "Next steps\n"); ok {
				next = strings.SplitN(rest, "\n", 2)[0]
			}
		}
		if task == "" || next == "" {
			t.Fatalf("%s: no task or next steps in the unbudgeted resume:\n%s", id, full.Markdown)
		}
		for budget := 200; budget <= 4000; budget += 25 {
			r, err := e.Resume(ctx, engine.ResumeRequest{Session: id, Budget: budget})
			if err != nil {
				t.Fatal(err)
			}
			if got := count(r.Markdown); got > budget || got != r.Tokens {
				t.Fatalf("%s budget %d: %d tokens (reported %d)", engine.ShortID(id), budget, got, r.Tokens)
			}
			// The task and the first next step survive, if shortened (a task
			// is shortened in the middle: its first words stay).
			if !strings.Contains(r.Markdown, "## Task\n"+firstWords(task, 2)) || !strings.Contains(r.Markdown, "## Next steps\n"+firstWords(next, 3)) {
				t.Fatalf("%s budget %d: task or next steps lost:\n%s", engine.ShortID(id), budget, r.Markdown)
			}
		}
	}
}

// firstWords is the first n words of s, as they start a line.
func firstWords(s string, n int) string {
	w := strings.Fields(s)
	return strings.Join(w[:min(n, len(w))], " ")
}

func TestResumeHookFormatStaysUnder10000Chars(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	ingestBin(t, home, db, filepath.Join(corpusDir(t), "claude")) // setup: compact and resume run in-process
	runCmd(t, home, "", "--db", db, "compact", "ae4a77f8", "--budget", "20000")
	r := runCmd(t, home, "", "--db", db, "resume", "ae4a77f8", "--format", "hook", "--budget", "20000")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var out engine.SessionStartOutput
	decodeJSON(t, r.stdout, &out)
	ctxText := out.HookSpecificOutput.AdditionalContext
	if out.HookSpecificOutput.HookEventName != "SessionStart" || ctxText == "" {
		t.Fatalf("hook output = %s", r.stdout)
	}
	if n := len([]rune(ctxText)); n > engine.MaxHookContext {
		t.Errorf("additionalContext has %d characters, want at most %d", n, engine.MaxHookContext)
	}
	// The same budget in markdown is longer: the cap did the work.
	md := runCmd(t, home, "", "--db", db, "resume", "ae4a77f8", "--budget", "20000")
	if len([]rune(md.stdout)) <= engine.MaxHookContext {
		t.Logf("markdown at budget 20000 is only %d chars: the cap was not exercised", len([]rune(md.stdout)))
	}
}

func TestResumeClearSessionAndStaleness(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	repo := filepath.Join(home, "src", "payments")
	gitRepo(t, repo)
	wt := filepath.Join(home, "src", "payments-wt")
	git(t, repo, "worktree", "add", "-q", "-b", "other", wt)
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))

	// The old session ran in the main checkout; a handoff was written
	// there an hour ago, after the files were last written.
	old := "11111111-2222-4333-8444-555555555555"
	ingest(t, home, db, sampleInProject(t, home, repo, old))
	at := time.Now().Add(-time.Hour)
	for _, f := range []string{"session_store.go", "clock.go", "session_store_test.go", "refresh_test.go"} {
		if err := os.Chtimes(filepath.Join(repo, "pkg", "auth", f), at.Add(-time.Hour), at.Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	compact := newCmd(home, "")
	compact.app.Now = func() time.Time { return at }
	if r := compact.run("--db", db, "compact", old); r.code != 0 {
		t.Fatalf("compact: %s", r.stderr)
	}

	// After /clear the new session has a new id; from the worktree of the
	// same repository, resume without SESSION finds the old one.
	for _, dir := range []string{repo, wt, filepath.Join(repo, "pkg", "auth")} {
		r := runCmdIn(t, home, dir, "", "--db", db, "resume", "--format", "json")
		if r.code != 0 {
			t.Fatalf("resume from %s: exit %d: %s", dir, r.code, r.stderr)
		}
		var got engine.ResumeDoc
		decodeJSON(t, r.stdout, &got)
		if got.Session != old || got.HandoffID == nil {
			t.Errorf("resume from %s: session %s handoff %v, want %s with its handoff", dir, got.Session, got.HandoffID, old)
		}
		if strings.Contains(got.Markdown, "## Since the handoff") {
			t.Errorf("nothing moved yet, but resume says:\n%s", got.Markdown)
		}
	}
	// A folder of no session: not found.
	if r := runCmdIn(t, home, t.TempDir(), "", "--db", db, "resume"); r.code != 3 {
		t.Errorf("resume in a folder without sessions: exit %d, want 3", r.code)
	}

	// Now things move: a file changes on disk, a commit, another branch.
	os.WriteFile(filepath.Join(repo, "pkg", "auth", "clock.go"), []byte("package auth // changed\n"), 0o644)
	git(t, repo, "checkout", "-q", "-b", "next")
	git(t, repo, "commit", "-q", "-am", "change")
	r := runCmd(t, home, "", "--db", db, "resume", old)
	for _, want := range []string{"## Since the handoff", "the branch is now next (the handoff was written on fix-session-expiry)",
		"HEAD moved from", "changed on disk since: pkg/auth/clock.go"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("resume lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "session_store.go, ") || strings.Contains(r.stdout, "changed on disk since: pkg/auth/clock.go, ") {
		t.Errorf("unchanged files reported as changed:\n%s", r.stdout)
	}
}

func TestResumeUsageAndNotFound(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	ingest(t, home, db, sampleDir(t))
	tests := []struct {
		args []string
		code int
	}{
		{[]string{"resume", "ffffffff"}, 3},
		{[]string{"resume", "7c1d", "--budget", "199"}, 2},
		{[]string{"resume", "7c1d", "--format", "yaml"}, 2},
		{[]string{"resume", "7c1d", "--format", "json"}, 0},
	}
	for _, tc := range tests {
		r := runCmd(t, home, "", append([]string{"--db", db}, tc.args...)...)
		if r.code != tc.code {
			t.Errorf("%v: exit %d, want %d (%s)", tc.args, r.code, tc.code, r.stderr)
		}
	}
	var got map[string]any
	r := runCmd(t, home, "", "--db", db, "resume", "0199", "--format", "json")
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"session", "handoff_id", "tokens", "markdown"} {
		if _, ok := got[k]; !ok {
			t.Errorf("resume json lacks %q", k)
		}
	}
	if got["handoff_id"] != nil || !strings.Contains(got["markdown"].(string), "extracted now") {
		t.Errorf("a session without handoff: %v", got)
	}
}

// TestResumeStoresAnOlderSessionsState: an ingest stores the resume states
// of a folder's latest session (and of those active when it began) only; `ledger resume` of an older one
// extracts it from the read-only ledger it opens, then stores it where it
// can write, so that the next resume reads it and says the same.
func TestResumeStoresAnOlderSessionsState(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	dir := filepath.Join(home, "transcripts", "-home-dev-src-shop")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ids := []string{"11111111-2222-4333-8444-000000000001", "11111111-2222-4333-8444-000000000002", "11111111-2222-4333-8444-000000000003"}
	for i, id := range ids {
		var buf bytes.Buffer
		// Later seeds start later: the first session is the oldest.
		if err := transcript.Generate(&buf, transcript.GenOptions{Seed: uint64(i + 1), SessionID: id, Project: "/home/dev/src/shop",
			Messages: 120, Shape: transcript.GenReal}); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ingest(t, home, db, dir)
	ctx := context.Background()
	current := func() bool {
		t.Helper()
		st, err := store.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		sess, err := st.Session(ctx, ids[0])
		if err != nil {
			t.Fatal(err)
		}
		key, err := st.ResumeKey(ctx, sess)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := st.LoadResumeState(ctx, ids[0])
		return err == nil && rs.Key == key
	}
	if current() {
		t.Fatal("the ingest stored the resume state of a session newer ones superseded")
	}
	first := runCmd(t, home, "", "--db", db, "resume", ids[0])
	if first.code != 0 || first.stdout == "" {
		t.Fatalf("resume: exit %d: %s%s", first.code, first.stdout, first.stderr)
	}
	if !current() {
		t.Fatal("the first resume did not store the state it extracted")
	}
	if again := runCmd(t, home, "", "--db", db, "resume", ids[0]); again.code != 0 || again.stdout != first.stdout {
		t.Fatalf("resume from the stored state:\n%s\nextracted:\n%s", again.stdout, first.stdout)
	}
}
