package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentledger/ledger/cmd/internal/ledgerbin"
)

// ledgerBin is the real binary, built once for the tests that exercise the
// command as a user runs it (exit codes, stdout/stderr, files), or
// $LEDGER_TEST_BIN (a test's helper process is given its parent's).
var ledgerBin string

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "ledger-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if ledgerBin = os.Getenv("LEDGER_TEST_BIN"); ledgerBin == "" {
		ledgerBin = filepath.Join(dir, "ledger")
		if err := ledgerbin.Build(ledgerBin); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	trap, err := trapHome(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "trap home:", err)
		return 1
	}
	code := m.Run()
	for _, f := range cleanups {
		f()
	}
	if left := homeWrites(trap); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: the tests wrote in the HOME they inherited (without this guard, the developer's own): %s\n", strings.Join(left, ", "))
		code = 1
	}
	return code
}

// trapHome gives this test process, and every process it starts with its
// environment, a HOME and XDG folders of its own under dir, so that a test
// that forgets to give a command a HOME, a --db or an environment can never
// reach the developer's ledger, hook log or agents' settings; homeWrites
// then tells that it did. Go's own folders stay where they are (a build in
// a test must not start from an empty cache).
func trapHome(dir string) (string, error) {
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH", "GOENV").Output()
	if err != nil {
		return "", fmt.Errorf("go env: %w", err)
	}
	vals := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOENV"} {
		if i < len(vals) && vals[i] != "" {
			os.Setenv(k, vals[i])
		}
	}
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		return "", err
	}
	env := map[string]string{"HOME": home, "XDG_DATA_HOME": filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME": filepath.Join(home, ".local", "state"), "XDG_CONFIG_HOME": filepath.Join(home, ".config")}
	for k, v := range env {
		os.Setenv(k, v)
	}
	for _, k := range []string{"LEDGER_DB", "LEDGER_HOST", "CODEX_HOME", "CLAUDE_CONFIG_DIR"} {
		os.Unsetenv(k)
	}
	return home, nil
}

// homeWrites lists the files written under the trap HOME, but Go's
// telemetry counters ($XDG_CONFIG_HOME/go) and caches.
func homeWrites(home string) []string {
	var left []string
	filepath.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(home, path)
		switch {
		case err != nil:
			return nil
		case rel == filepath.Join(".config", "go") || rel == ".cache":
			return filepath.SkipDir
		case !d.IsDir():
			left = append(left, rel)
		}
		return nil
	})
	return left
}

type result struct {
	stdout, stderr string
	code           int
}

// runBin runs the built binary with a clean environment rooted in a temp
// HOME, so no test touches the user's real ledger.
func runBin(t *testing.T, home string, stdin string, args ...string) result {
	t.Helper()
	return runBinIn(t, home, "", stdin, args...)
}

// runBinIn runs the binary with dir as its working folder ("" for the
// test's).
func runBinIn(t *testing.T, home, dir, stdin string, args ...string) result {
	t.Helper()
	return execLedger(t, home, dir, stdin, []string{"XDG_STATE_HOME=" + filepath.Join(home, ".state")}, args...)
}

// execLedger runs the built binary in dir with stdin, an environment of
// HOME, PATH and env, and returns what it printed and its exit code.
func execLedger(t testing.TB, home, dir, stdin string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(ledgerBin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run ledger: %v", err)
	}
	return result{out.String(), errb.String(), code}
}

// runApp runs the command tree in-process with buffers and the given
// environment.
func runApp(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errb, func(k string) string { return env[k] })
	return result{out.String(), errb.String(), code}
}

// runCmd runs one command line in-process, with the clean environment
// runBin gives the binary: most command tests need no separate process,
// and run faster and count towards coverage without one.
func runCmd(t *testing.T, home string, stdin string, args ...string) result {
	t.Helper()
	return runCmdIn(t, home, "", stdin, args...)
}

// runCmdIn runs a command line in-process with dir as its working folder
// ("" for the test's).
func runCmdIn(t *testing.T, home, dir, stdin string, args ...string) result {
	t.Helper()
	c := newCmd(home, stdin)
	if dir != "" {
		c.app.Getwd = func() (string, error) { return dir, nil }
	}
	return c.run(args...)
}

// cmdRun is a command line to run in-process, as runCmd does: its App,
// whose clock, working folder or terminals a test may set first, its
// environment, and what it printed.
type cmdRun struct {
	app       *App
	env       map[string]string
	out, errb bytes.Buffer
}

// newCmd is an App with buffers for its streams and the clean environment
// runBin gives the binary, plus env ("KEY=value"). The binary it names in
// what it writes for agents (hooks, commands) is the built one.
func newCmd(home, stdin string, env ...string) *cmdRun {
	c := &cmdRun{env: map[string]string{"HOME": home, "PATH": os.Getenv("PATH"), "XDG_STATE_HOME": filepath.Join(home, ".state")}}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		c.env[k] = v
	}
	c.app = &App{Stdin: strings.NewReader(stdin), Stdout: &c.out, Stderr: &c.errb, Getenv: func(k string) string { return c.env[k] },
		Getwd: os.Getwd, Executable: func() (string, error) { return ledgerBin, nil },
		// In-process, a hook or the status line runs under the race
		// detector and beside the other tests on a loaded machine, many
		// times slower than the built binary a user runs: its budgets
		// and waits are ten times the promised ones, so that what a
		// test proves is what it does. The budgets themselves are the binary's tests
		// (TestHookBudgetsWhileLocked, TestNonRegularFilesNeverHang...).
		hookTimeScale: 10}
	return c
}

// run runs the command line, once.
func (c *cmdRun) run(args ...string) result {
	code := c.app.run(context.Background(), args)
	c.app.close()
	return result{c.out.String(), c.errb.String(), code}
}

func decodeJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("output is not one JSON document: %v\n%s", err, s)
	}
}

func TestInitJSON(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := filepath.Join(home, "x", "ledger.db")
	r := runCmd(t, home, "", "--db", db, "init", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var got struct {
		DB            string `json:"db"`
		SchemaVersion int64  `json:"schema_version"`
	}
	decodeJSON(t, r.stdout, &got)
	if got.DB != db || got.SchemaVersion < 1 {
		t.Errorf("init = %+v, want db %s and a schema version", got, db)
	}
	fi, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("db mode = %v, want 0600", fi.Mode().Perm())
	}
	// A second init is a no-op with the same answer.
	r2 := runCmd(t, home, "", "--db", db, "init", "--json")
	if r2.code != 0 || r2.stdout != r.stdout {
		t.Errorf("second init: exit %d, stdout %q; want the same as the first %q", r2.code, r2.stdout, r.stdout)
	}
}

func TestDatabasePathResolution(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"flag wins", map[string]string{"HOME": home, "LEDGER_DB": filepath.Join(home, "e", "env.db")}, []string{"--db", filepath.Join(home, "f", "flag.db")}, filepath.Join(home, "f", "flag.db")},
		{"env", map[string]string{"HOME": home, "LEDGER_DB": filepath.Join(home, "e", "env.db")}, nil, filepath.Join(home, "e", "env.db")},
		{"xdg", map[string]string{"HOME": home, "XDG_DATA_HOME": filepath.Join(home, "data")}, nil, filepath.Join(home, "data", "ledger", "ledger.db")},
		{"home", map[string]string{"HOME": home}, nil, filepath.Join(home, ".local", "share", "ledger", "ledger.db")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runApp(t, tc.env, append(tc.args, "init", "--json")...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			var got struct{ DB string }
			decodeJSON(t, r.stdout, &got)
			if got.DB != tc.want {
				t.Errorf("db = %s, want %s", got.DB, tc.want)
			}
			fi, err := os.Stat(filepath.Dir(tc.want))
			if err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("folder of %s: %v, want mode 0700", tc.want, err)
			}
		})
	}
}

func TestVersionJSON(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	r := runCmd(t, home, "", "--db", filepath.Join(home, "l.db"), "version", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var got map[string]any
	decodeJSON(t, r.stdout, &got)
	for _, k := range []string{"version", "schema_version", "sqlite_version"} {
		if _, ok := got[k]; !ok {
			t.Errorf("version --json lacks %q: %s", k, r.stdout)
		}
	}
	if v, _ := got["sqlite_version"].(string); !strings.HasPrefix(v, "3.") {
		t.Errorf("sqlite_version = %v, want 3.x", got["sqlite_version"])
	}
}

func TestExitCodesAndErrors(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	notDir := filepath.Join(home, "file")
	if err := os.WriteFile(notDir, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"unknown flag", []string{"--no-such-flag"}, 2},
		{"unknown command", []string{"nosuch"}, 2},
		{"extra argument", []string{"--db", filepath.Join(home, "l.db"), "init", "extra"}, 2},
		{"runtime error", []string{"--db", filepath.Join(notDir, "ledger.db"), "init"}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(t, home, "", tc.args...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", r.code, tc.code, r.stderr)
			}
			lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "ledger: ") {
				t.Errorf("stderr = %q, want one line starting with \"ledger: \"", r.stderr)
			}
			if strings.Contains(r.stderr, "goroutine") || strings.Contains(r.stdout, "Usage:") {
				t.Errorf("stack trace or usage dump in output: %q %q", r.stdout, r.stderr)
			}
		})
	}
}

func TestHelpTouchesNothing(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	r := runCmd(t, home, "", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "clear, don't compact") {
		t.Fatalf("--help: exit %d, %q", r.code, r.stdout)
	}
	if _, err := os.Stat(filepath.Join(home, ".local")); !os.IsNotExist(err) {
		t.Errorf("--help created files under HOME (%v)", err)
	}
	r = runCmd(t, home, "", "completion", "bash")
	if r.code != 0 || !strings.Contains(r.stdout, "bash completion") {
		t.Errorf("completion bash: exit %d, %.80q", r.code, r.stdout)
	}
}
