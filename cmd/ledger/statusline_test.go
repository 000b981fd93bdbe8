package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/store/storetest"
)

func statusFixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "statusline", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runStatus runs `ledger statusline` in-process with extra environment
// variables.
func runStatus(t testing.TB, home, stdin string, env []string, args ...string) result {
	t.Helper()
	return newCmd(home, stdin, env...).run(append([]string{"statusline"}, args...)...)
}

// TestStatuslineOnClaudeInput runs the status line on Claude Code's
// status-line JSON of today, of a session's start and of an old version,
// with the auto-compaction settings, and on input it cannot read.
func TestStatuslineOnClaudeInput(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	for _, c := range []struct {
		name, input string
		env         []string
		want        string
	}{
		{"current", statusFixture(t, "current.json"), nil, "ctx 70% 141k/200k · 25k to compact · no handoff · ⚑ handoff due"},
		{"pct override", statusFixture(t, "current.json"), []string{"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=50"}, "ctx 70% 141k/200k · 0 to compact · no handoff · ⚑ handoff due"},
		{"pct above the default", statusFixture(t, "current.json"), []string{"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=99"}, "ctx 70% 141k/200k · 25k to compact · no handoff · ⚑ handoff due"},
		{"auto-compact off", statusFixture(t, "current.json"), []string{"DISABLE_AUTO_COMPACT=1"}, "ctx 70% 141k/200k · auto-compact off · no handoff"},
		{"session start", statusFixture(t, "session-start.json"), nil, "ctx ?/1.0M · no handoff"},
		{"old version", statusFixture(t, "old-1.0.80.json"), nil, "ctx ?/200k · no handoff"},
		{"garbage", "not json", nil, "ledger: ctx ?"},
		{"empty", "", nil, "ledger: ctx ?"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runStatus(t, home, c.input, c.env)
			if r.code != 0 || strings.TrimSuffix(r.stdout, "\n") != c.want {
				t.Errorf("exit %d, line %q, want %q (stderr %q)", r.code, r.stdout, c.want, r.stderr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(home, ".ledger")); err == nil {
		t.Error("the status line created a ledger")
	}
	r := runStatus(t, home, statusFixture(t, "current.json"), nil, "--chain", "cat >/dev/null; echo 'my line'")
	if !strings.HasPrefix(r.stdout, "my line │ ctx 70%") {
		t.Errorf("chained: %q", r.stdout)
	}
	r = runStatus(t, home, statusFixture(t, "current.json"), nil, "--chain", "exit 3")
	if !strings.HasPrefix(r.stdout, "ctx 70%") {
		t.Errorf("a failing chained command: %q", r.stdout)
	}
}

// TestStatuslineHandoffAge: once the session has a handoff, the line
// shows its age and the handoff is no longer due.
func TestStatuslineHandoffAge(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	src := filepath.Join("..", "..", "testdata", "transcript", "claude-session", "transcript.jsonl")
	const session = "7d1c2a90-5b7e-4c11-9a3e-2f6b8d0c4e15"
	if r := runCmd(t, home, "", "--db", db, "ingest", src); r.code != 0 {
		t.Fatalf("ingest: %s", r.stderr)
	}
	input := strings.Replace(statusFixture(t, "current.json"), "00893aaf-19fa-41d2-8238-13269b9b3ca0", session, 1)
	if r := runStatus(t, home, input, []string{"LEDGER_DB=" + db}); !strings.Contains(r.stdout, "no handoff · ⚑ handoff due") {
		t.Fatalf("before the handoff: %q", r.stdout)
	}
	if r := runCmd(t, home, "", "--db", db, "compact", session); r.code != 0 {
		t.Fatalf("compact: %s", r.stderr)
	}
	r := runStatus(t, home, input, []string{"LEDGER_DB=" + db})
	if !strings.Contains(r.stdout, "· handoff ") || !strings.HasSuffix(r.stdout, "s ago\n") {
		t.Errorf("after the handoff: %q, want its age and no due mark", r.stdout)
	}
}

// TestHooksInstallStatusline sets ledger's status line beside the hooks,
// chaining the one the user had, and uninstall gives settings.json back
// byte for byte.
func TestHooksInstallStatusline(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	path := filepath.Join(home, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(path), 0o700)
	const orig = `{
  "model": "opus",
  "statusLine": {"type": "command", "command": "cat >/dev/null; echo 'git:main'", "padding": 1}
}
`
	os.WriteFile(path, []byte(orig), 0o600)
	if r := runCmd(t, home, "", "hooks", "install", "--statusline"); r.code != 0 {
		t.Fatalf("install: %s", r.stderr)
	}
	s := readSettings(t, path)
	sl := s["statusLine"].(map[string]any)
	cmd := sl["command"].(string)
	if !strings.Contains(cmd, " statusline --chain ") || sl["padding"] != float64(1) {
		t.Fatalf("statusLine = %v, want ledger's chaining the old one, padding kept", sl)
	}
	if len(hookCommands(s, "PreCompact")) != 1 {
		t.Error("--statusline did not install the hooks too")
	}
	// The installed command, run as Claude Code runs it.
	sh := exec.Command("sh", "-c", cmd)
	sh.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	sh.Stdin = strings.NewReader(statusFixture(t, "current.json"))
	out, err := sh.Output()
	if err != nil || !strings.HasPrefix(string(out), "git:main │ ctx 70%") {
		t.Errorf("installed status line prints %q (%v)", out, err)
	}
	before, _ := os.ReadFile(path)
	runCmd(t, home, "", "hooks", "install", "--statusline")
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Errorf("second install changed the file (chained ledger in ledger?):\n%s", after)
	}
	if r := runCmd(t, home, "", "hooks", "uninstall"); r.code != 0 {
		t.Fatalf("uninstall: %s", r.stderr)
	}
	if got, _ := os.ReadFile(path); string(got) != orig {
		t.Errorf("uninstall did not give settings.json back:\n%s", got)
	}
	// No status line before: uninstall removes ledger's.
	os.WriteFile(path, []byte("{\n  \"model\": \"opus\"\n}\n"), 0o600)
	runCmd(t, home, "", "hooks", "install", "--statusline")
	runCmd(t, home, "", "hooks", "uninstall")
	if got, _ := os.ReadFile(path); string(got) != "{\n  \"model\": \"opus\"\n}\n" {
		t.Errorf("uninstall left:\n%s", got)
	}
	if r := runCmd(t, home, "", "hooks", "install", "--statusline", "--agent", "codex"); r.code != 2 {
		t.Errorf("--statusline --agent codex: exit %d, want 2", r.code)
	}
}

// BenchmarkStatusline is the whole `ledger statusline` process, as Claude
// Code runs it after each message, on a ledger that holds the session and
// its handoff (the handoff's age is read).
func BenchmarkStatusline(b *testing.B) {
	home := b.TempDir()
	db := filepath.Join(home, "ledger.db")
	src := filepath.Join("..", "..", "testdata", "transcript", "claude-session", "transcript.jsonl")
	const session = "7d1c2a90-5b7e-4c11-9a3e-2f6b8d0c4e15"
	for _, args := range [][]string{{"ingest", src}, {"compact", session}} {
		cmd := exec.Command(ledgerBin, append([]string{"--db", db}, args...)...)
		cmd.Env = []string{"HOME=" + home}
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	input := strings.Replace(statusFixture(b, "current.json"), "00893aaf-19fa-41d2-8238-13269b9b3ca0", session, 1)
	for b.Loop() {
		r := execLedger(b, home, "", input, []string{"LEDGER_DB=" + db}, "statusline")
		if !strings.Contains(r.stdout, "handoff ") || strings.Contains(r.stdout, "no handoff") {
			b.Fatalf("line %q", r.stdout)
		}
	}
}

// TestStatuslineLearnsTheWindow: the status line installed with --db runs
// on that ledger, and records the window Claude Code states in its input
// (context_window.context_window_size) for the session, which the meter
// then counts against as the agent's own figure.
func TestStatuslineLearnsTheWindow(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	src := filepath.Join("..", "..", "testdata", "transcript", "claude-session", "transcript.jsonl")
	const session = "7d1c2a90-5b7e-4c11-9a3e-2f6b8d0c4e15"
	if r := runBin(t, home, "", "--db", db, "ingest", src); r.code != 0 {
		t.Fatalf("ingest: %s", r.stderr)
	}
	meter := func() engine.Meter {
		t.Helper()
		r := runBin(t, home, "", "--db", db, "meter", session, "--json")
		var m engine.Meter
		decodeJSON(t, r.stdout, &m)
		return m
	}
	if m := meter(); m.LimitFromAgent {
		t.Fatalf("before the status line: %+v, want a window not from the agent", m)
	}
	if r := runBin(t, home, "", "--db", db, "hooks", "install", "--statusline"); r.code != 0 {
		t.Fatalf("install: %s", r.stderr)
	}
	cmd := readSettings(t, filepath.Join(home, ".claude", "settings.json"))["statusLine"].(map[string]any)["command"].(string)
	if !strings.Contains(cmd, " statusline --db "+db) {
		t.Fatalf("status line command %q does not name the ledger it was installed for", cmd)
	}
	input := strings.Replace(statusFixture(t, "current.json"), "00893aaf-19fa-41d2-8238-13269b9b3ca0", session, 1)
	input = strings.Replace(input, `"context_window_size": 200000`, `"context_window_size": 1000000`, 1)
	if !strings.Contains(input, `"context_window_size": 1000000`) {
		t.Fatalf("the fixture's window was not replaced: %s", input)
	}
	sh := exec.Command("sh", "-c", cmd)
	sh.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	sh.Stdin = strings.NewReader(input)
	if out, err := sh.Output(); err != nil || !strings.Contains(string(out), "/1.0M") {
		t.Fatalf("status line prints %q (%v)", out, err)
	}
	if m := meter(); !m.LimitFromAgent || m.LimitTokens != 1_000_000 {
		t.Errorf("after the status line: %d tokens, from agent %v (%s); want the 1,000,000 it stated", m.LimitTokens, m.LimitFromAgent, m.LimitSource)
	}
}
