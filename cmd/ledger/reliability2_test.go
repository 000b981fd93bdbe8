//go:build unix

package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/store/storetest"
	"github.com/agentledger/ledger/transcript"
)

// The second round of reliability tests (issue 19): what an attacker or an
// unlucky user meets. Like the first, they run the real binary where the
// behaviour is a process's: its memory, signals, pipes, locks held by
// another process, the bytes left on disk.

// watchPeak follows a running process's peak resident memory (VmHWM, on
// Linux): getrusage's figure for a child also counts the memory of the
// parent it was forked from (Go starts a child sharing the parent's
// memory until it execs), which a test holding big inputs, or the race
// detector's, would dominate: a hook that ended in 10 ms was reported at
// 774 MB, the test process's size. It returns a function that waits for
// the process and gives the peak in bytes: the highest VmHWM read while
// it ran, 0 for a process that ended before the first read (a few
// milliseconds: too short to touch the tens of MB the checks bound,
// thousands of page faults), getrusage's where there is no /proc.
func watchPeak(t *testing.T, p *proc) func() int64 {
	t.Helper()
	var peak atomic.Int64
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		status := fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid)
		for !p.exited() {
			if b, err := os.ReadFile(status); err == nil {
				for _, l := range strings.Split(string(b), "\n") {
					if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
						var kb int64
						fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb)
						peak.Store(max(peak.Load(), kb<<10))
					}
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	return func() int64 {
		p.wait(t)
		<-stopped
		if peak.Load() > 0 {
			return peak.Load()
		}
		if _, err := os.Stat("/proc/self/status"); err == nil {
			t.Logf("%s ended after %v, before its memory was read", p.name, p.ended.Sub(p.started))
			return 0
		}
		if ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			if runtime.GOOS == "darwin" {
				return ru.Maxrss // bytes there, kilobytes on Linux
			}
			return ru.Maxrss << 10
		}
		return 0
	}
}

// TestLongLineBoundedMemory ingests a transcript whose one line is 50 MB
// (a tool output and Claude Code's toolUseResult copy of it, as a `cat`
// of a big log writes): the process stays under the README's 150 MB peak,
// and the message keeps the output's start and end around a marker that
// gives its size.
func TestLongLineBoundedMemory(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	const session = "4a4a4a4a-0000-4000-8000-000000000050"
	// Written piece by piece: this process stays small.
	path := filepath.Join(home, session+".jsonl")
	appendFile(t, path, []byte(`{"type":"user","uuid":"first","sessionId":"`+session+`","message":{"role":"user","content":"cat the log"}}`+"\n"))
	logLine, _ := json.Marshal("2026-03-02T09:00:00Z INFO request served in 3ms path=/api/v1/items\n")
	out := bytes.Repeat(logLine[1:len(logLine)-1], 25<<20/len(logLine))
	out = append(out, "FATAL: disk full at the very end"...)
	appendFile(t, path, []byte(`{"type":"user","uuid":"big","sessionId":"`+session+`","cwd":"/tmp/big","timestamp":"2026-03-02T09:00:00Z","toolUseResult":{"stdout":"`))
	appendFile(t, path, out)
	appendFile(t, path, []byte(`","stderr":""},"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"`))
	appendFile(t, path, out)
	appendFile(t, path, []byte(`"}]}}`+"\n"))
	out = nil

	p := startBin(t, home, "", "--db", db, "ingest", "--json", path)
	peak := watchPeak(t, p)()
	p.wantClean(t)
	var sum ingestJSON
	decodeJSON(t, p.out.String(), &sum)
	if sum.Messages != 2 {
		t.Errorf("ingest = %+v, want 2 messages", sum)
	}
	if peak > 150<<20 || peak == 0 {
		t.Errorf("ingesting a 50 MB line peaked at %d MB, want at most 150 MB", peak>>20)
	} else {
		t.Logf("peak RSS %d MB", peak>>20)
	}
	r := runBin(t, home, "", "--db", db, "search", "--json", "disk full")
	if r.code != 0 || !strings.Contains(r.stdout, session) {
		t.Errorf("the end of the long output is not searchable: %d %.200s %s", r.code, r.stdout, r.stderr)
	}
	r = runBin(t, home, "", "--db", db, "search", "--json", "bytes cut from this text")
	if !strings.Contains(r.stdout, session) {
		t.Errorf("no marker of the cut: %.300s", r.stdout)
	}
	if fi, err := os.Stat(db); err != nil || fi.Size() > 20<<20 {
		t.Errorf("database of %v bytes (%v) for one cut message", fi.Size(), err)
	}
}

// readOnlyWays are the ways a ledger is read-only that this machine can
// make: a file and folder of another user (run as nobody when the tests
// run as root; else the test's own files made read-only, which root would
// ignore), and a read-only mount (root only: a bind mount in a mount
// namespace of its own, where unshare allows one).
func readOnlyWays(t *testing.T, dir string) map[string]func(args ...string) *exec.Cmd {
	t.Helper()
	ways := map[string]func(args ...string) *exec.Cmd{}
	if os.Geteuid() != 0 {
		for _, p := range []string{dir, filepath.Join(dir, "ledger.db")} {
			mode := os.FileMode(0o444)
			if p == dir {
				mode = 0o555
			}
			if err := os.Chmod(p, mode); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() { os.Chmod(dir, 0o700) })
		ways["read-only file and folder"] = func(args ...string) *exec.Cmd { return exec.Command(ledgerBin, args...) }
		return ways
	}
	// nobody must reach the binary and the ledger, and only read them.
	for p := dir; p != "/" && p != "."; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o005 != 0o005 {
			os.Chmod(p, fi.Mode().Perm()|0o055)
		}
	}
	os.Chmod(filepath.Dir(ledgerBin), 0o755)
	os.Chmod(filepath.Join(dir, "ledger.db"), 0o644)
	ways["another user's ledger"] = func(args ...string) *exec.Cmd {
		c := exec.Command(ledgerBin, args...)
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		return c
	}
	mount := func(args ...string) *exec.Cmd {
		return exec.Command("unshare", append([]string{"-m", "sh", "-c", `mount --bind -o ro "$0" "$0" && exec "$@"`, dir, ledgerBin}, args...)...)
	}
	// The probe names the ledger and gives an environment, as every
	// command a test runs must: a bare `version` opened the default
	// ledger of the HOME the tests inherited (issue 29.14).
	probe := mount("--db", filepath.Join(dir, "ledger.db"), "version")
	probe.Env = binEnv(t.TempDir())
	if err := probe.Run(); err == nil {
		ways["read-only mount"] = mount
	} else {
		t.Logf("no read-only mount here (unshare: %v)", err)
	}
	return ways
}

// TestReadOnlyLedger: a ledger this process cannot write (another user's,
// a copy on a read-only mount) can be read by every read command, with and
// without a writer's WAL beside it; a command that writes says so in one
// line.
func TestReadOnlyLedger(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := filepath.Join(home, "data")
	db := filepath.Join(dir, "ledger.db")
	project := filepath.Join(home, "src", "payments")
	os.MkdirAll(project, 0o700)
	transcript := sampleInProject(t, home, project, sampleSession)
	if r := runBin(t, home, "", "--db", db, "ingest", transcript, filepath.Join(sampleDir(t), "codex")); r.code != 0 {
		t.Fatalf("ingest: %s", r.stderr)
	}
	if r := runBin(t, home, "", "--db", db, "compact", sampleSession[:8]); r.code != 0 {
		t.Fatalf("compact: %s", r.stderr)
	}
	reads := []struct {
		args []string
		want string
	}{
		{[]string{"sessions", "--json"}, sampleSession},
		{[]string{"search", "--json", "reserve"}, `"kind": "message"`},
		{[]string{"audit", "--json"}, `"trigger": "auto"`},
		{[]string{"handoff", "list", "--json"}, sampleSession},
		{[]string{"handoff", "show", sampleSession[:8], "--json"}, `"markdown"`},
		{[]string{"resume", sampleSession[:8]}, "# Resume"},
		{[]string{"version", "--json"}, `"schema_version"`},
		{[]string{"doctor", "--json"}, `"read_only": true`},
	}
	check := func(t *testing.T, run func(args ...string) *exec.Cmd) {
		t.Helper()
		for _, rd := range reads {
			c := run(append([]string{"--db", db}, rd.args...)...)
			c.Env = binEnv(home)
			var out, errb bytes.Buffer
			c.Stdout, c.Stderr = &out, &errb
			if err := c.Run(); err != nil || errb.Len() > 0 || !strings.Contains(out.String(), rd.want) {
				t.Errorf("%s: %v, stderr %q, stdout %.200q (want %q)", strings.Join(rd.args, " "), err, errb.String(), out.String(), rd.want)
			}
		}
		c := run("--db", db, "ingest", filepath.Join(sampleDir(t), "codex"))
		c.Env = binEnv(home)
		out, err := c.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || strings.Count(string(out), "\n") != 1 ||
			!strings.Contains(string(out), "read-only") {
			t.Errorf("ingest into a read-only ledger: %v, %q; want exit 1 and one line saying it is read-only", err, out)
		}
	}
	ways := readOnlyWays(t, dir)
	for name, run := range ways {
		t.Run(name, func(t *testing.T) { check(t, run) })
	}
	// A writer holds the ledger open (its WAL and shared memory beside it),
	// and has written a session since its last checkpoint: readers see it.
	if run, ok := ways["another user's ledger"]; ok {
		t.Run("another user's ledger being written", func(t *testing.T) {
			s, err := store.Open(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			raw := rawDB(t, db)
			if _, err := raw.Exec(`PRAGMA wal_autocheckpoint = 0`); err != nil {
				t.Fatal(err)
			}
			if _, err := raw.Exec(`INSERT INTO sessions (id, source, last_at) VALUES ('written-since', 'claude', '2026-03-03 00:00:00')`); err != nil {
				t.Fatal(err)
			}
			for _, ext := range []string{"-wal", "-shm"} {
				os.Chmod(db+ext, 0o644)
			}
			check(t, run)
			c := run("--db", db, "sessions", "--json")
			c.Env = binEnv(home)
			if out, err := c.Output(); err != nil || !strings.Contains(string(out), "written-since") {
				t.Errorf("the WAL's session is not seen: %v %.300s", err, out)
			}
		})
	}
}

// forgetMarkers are distinctive words (lower case: the full-text index
// folds case) of the session that TestForgetLeavesNoBytes forgets.
func forgetMarkers(n int) []string {
	rnd := rand.New(rand.NewPCG(uint64(n), 41))
	out := make([]string, n)
	for i := range out {
		b := make([]byte, 18)
		for j := range b {
			b[j] = "abcdefghijklmnopqrstuvwxyz"[rnd.IntN(26)]
		}
		out[i] = "zq" + string(b)
	}
	return out
}

// TestForgetLeavesNoBytes forgets a session whose words went everywhere:
// messages (text, tool inputs and output) ingested in six transactions (so
// the full-text index has merged segments, freeing pages that held them),
// a note, and a handoff with its index rows. Afterwards none of its words
// is anywhere in the database file or its WAL, read as raw bytes; the
// other session is whole, and the ledger is healthy.
func TestForgetLeavesNoBytes(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	const gone, kept = "f0f0f0f0-0000-4000-8000-000000000001", "c0c0c0c0-0000-4000-8000-000000000002"
	markers := forgetMarkers(60)
	keptWord := "keptwordxyzzy"
	line := func(session, uuid, text string) []byte {
		b, _ := json.Marshal(map[string]any{"type": "assistant", "uuid": uuid, "sessionId": session, "cwd": "/home/dev/src/app",
			"timestamp": "2026-03-02T09:00:00Z", "message": map[string]any{"role": "assistant", "content": []any{
				map[string]any{"type": "text", "text": "Working on " + text},
				map[string]any{"type": "tool_use", "id": "t-" + uuid, "name": "Read", "input": map[string]any{"file_path": "/src/" + text + "/main.go"}}}}})
		return append(b, '\n')
	}
	result := func(session, uuid, text string) []byte {
		b, _ := json.Marshal(map[string]any{"type": "user", "uuid": uuid, "sessionId": session, "timestamp": "2026-03-02T09:00:01Z",
			"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t-" + uuid, "content": "package " + text + "\n" + strings.Repeat("filler text of the file ", 40)}}}})
		return append(b, '\n')
	}
	goneFile := filepath.Join(home, "projects", "-app", gone+".jsonl")
	keptFile := filepath.Join(home, "projects", "-app", kept+".jsonl")
	for part := range 6 {
		var g, k []byte
		for i, m := range markers[part*10 : part*10+10] {
			g = append(g, line(gone, fmt.Sprintf("g%d-%d", part, i), m)...)
			g = append(g, result(gone, fmt.Sprintf("g%d-%d-r", part, i), m)...)
			k = append(k, line(kept, fmt.Sprintf("k%d-%d", part, i), keptWord)...)
		}
		appendFile(t, goneFile, g)
		appendFile(t, keptFile, k)
		ingestBin(t, home, db, filepath.Join(home, "projects"))
	}
	if r := runBin(t, home, "", "--db", db, "note", gone[:8], "--decision", "use "+markers[0]+" for the cache"); r.code != 0 {
		t.Fatalf("note: %s", r.stderr)
	}
	if r := runBin(t, home, "", "--db", db, "compact", gone[:8], "--task", "port "+markers[1]); r.code != 0 {
		t.Fatalf("compact: %s", r.stderr)
	}
	if n := len(present(dbBytes(t, db), markers)); n < len(markers) {
		t.Fatalf("only %d of %d words are in the file before forget: the check proves nothing", n, len(markers))
	}

	r := runBin(t, home, "", "--db", db, "forget", gone[:8], "--json")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("forget: exit %d, %s", r.code, r.stderr)
	}
	for _, f := range []string{db, db + "-wal"} {
		raw, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if found := present(raw, markers); len(found) > 0 {
			t.Errorf("%s still holds %d of the forgotten session's %d words (%s, ...)", filepath.Base(f), len(found), len(markers), found[0])
		}
	}
	if hits, _ := search(t, home, db, keptWord); len(hits) == 0 {
		t.Error("the other session is no longer searchable")
	}
	wantHealthy(t, home, db)
}

// endsWithin waits for p to end by itself within d. If it does not, it
// sends SIGTERM and gives it 2 s more, then kills it; either way the test
// fails, saying whether the signal was obeyed.
func endsWithin(t *testing.T, p *proc, d time.Duration) time.Duration {
	t.Helper()
	select {
	case <-p.done:
		p.wait(t)
		return time.Since(p.started)
	case <-time.After(d):
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		t.Errorf("ledger %s was still running after %v; it stopped on SIGTERM", p.name, d)
	case <-time.After(2 * time.Second):
		p.cmd.Process.Kill()
		t.Errorf("ledger %s was still running after %v, and 2 s after SIGTERM: only SIGKILL ended it", p.name, d)
	}
	p.wait(t)
	return time.Since(p.started)
}

// hookInput is a hook's stdin for event with transcript path.
func hookInput(event, session, path, cwd string, extra map[string]any) string {
	m := map[string]any{"hook_event_name": event, "session_id": session, "transcript_path": path, "cwd": cwd}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// hookBudgets are each event's budget (the README's), and the hook input
// extras that make each do its work.
var hookBudgets = []struct {
	event  string
	budget time.Duration
	extra  map[string]any
}{
	{"SessionStart", 2 * time.Second, map[string]any{"source": "compact"}},
	{"PostToolUse", time.Second, map[string]any{"tool_name": "Bash"}},
	{"Stop", time.Second, map[string]any{"stop_hook_active": false}},
	{"SessionEnd", time.Second, map[string]any{"reason": "other"}},
	{"PreCompact", 10 * time.Second, map[string]any{"trigger": "auto", "custom_instructions": "keep the zebra plan"}},
}

// slack is what a test allows past a budget: process start and exit, and
// a loaded machine. Budgets are the hook's own; Claude Code's timeouts
// are longer.
const slack = 3 * time.Second

// TestNonRegularFilesNeverHang: a FIFO named on the command line, or as
// a hook's transcript_path, is skipped at once and said so in one line;
// before, opening it blocked forever and SIGTERM did not help.
func TestNonRegularFilesNeverHang(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	fifo := filepath.Join(home, "pipe.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	p := startBin(t, home, "", "--db", db, "ingest", fifo)
	took := endsWithin(t, p, 3*time.Second)
	if p.exitCode != 1 || strings.Count(p.errb.String(), "\n") != 2 || !strings.Contains(p.errb.String(), "not a regular file") {
		t.Errorf("ingest of a FIFO: exit %d after %v, stderr %q; want exit 1, saying it is not a regular file", p.exitCode, took, p.errb.String())
	}
	for _, h := range hookBudgets {
		t.Run(h.event, func(t *testing.T) {
			p := startBin(t, home, hookInput(h.event, sessionUUID(7, 7), fifo, home, h.extra), "--db", db, "hook")
			took := endsWithin(t, p, h.budget+slack)
			if p.exitCode != 0 || !strings.Contains(p.errb.String(), "not a regular file") {
				t.Errorf("exit %d after %v, stderr %q; want 0 and a warning that it is not a regular file", p.exitCode, took, p.errb.String())
			}
		})
	}
	// In a folder, a FIFO is no transcript: passed over in silence.
	if r := runBin(t, home, "", "--db", db, "ingest", home); r.code != 0 || r.stderr != "" {
		t.Errorf("ingest of a folder with a FIFO: exit %d, %q", r.code, r.stderr)
	}
}

// TestSignalsStopCleanly: SIGTERM (and Ctrl-C's SIGINT) stop a command
// between transactions, also while it waits for another process's write
// lock, and a hook whose stdin never ends; the ledger is left whole.
func TestSignalsStopCleanly(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := filepath.Join(home, "ledger.db")
	if r := runBin(t, home, "", "--db", db, "init"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	lock := holdWriteLock(t, db)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		p := startBin(t, home, "", "--db", db, "ingest", sampleDir(t))
		// Once it has the ledger open it is past its start (its signals
		// handled) and about to wait for the lock, which it then waits
		// for up to 5 s per attempt: a stop well before that is the
		// signal's.
		waitOpen(t, p, db)
		p.cmd.Process.Signal(sig)
		signalled := time.Now()
		endsWithin(t, p, 5*time.Second)
		took := time.Since(signalled)
		if p.exitCode != 1 || !strings.Contains(p.errb.String(), "interrupted") || took > 3*time.Second {
			t.Errorf("%v while waiting for the lock: exit %d %v after the signal, stderr %q; want 1, interrupted, at once", sig, p.exitCode, took, p.errb.String())
		}
	}
	lock.release()
	wantHealthy(t, home, db)
	if got := storedCounts(t, home, db); len(got) != 0 {
		t.Errorf("an interrupted ingest left %v", got)
	}

	// A hook whose stdin is never closed ends within its budget, and at
	// once on SIGTERM.
	for _, signal := range []bool{false, true} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		p := &proc{name: "hook (stdin open)", done: make(chan struct{})}
		p.cmd = exec.Command(ledgerBin, "--db", db, "hook")
		p.cmd.Env = binEnv(home)
		p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = r, &p.out, &p.errb
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r.Close()
		p.started = time.Now()
		go func() { p.err = p.cmd.Wait(); close(p.done) }()
		w.Write([]byte(`{"hook_event_name":"Stop",`))
		if signal {
			time.Sleep(200 * time.Millisecond)
			p.cmd.Process.Signal(syscall.SIGTERM)
		}
		took := endsWithin(t, p, time.Second+slack)
		w.Close()
		// What ended it is in what it says, whatever the machine's load:
		// its budget for the input ("within 1s"), or the signal (handled:
		// "interrupted"; or, sent before the process handled signals,
		// the signal's own default).
		stderr := p.errb.String()
		if !signal && (p.exitCode != 0 || !strings.Contains(stderr, "no complete hook input on stdin within 1s")) {
			t.Errorf("stdin never closed: exit %d after %v, stderr %q; want 0 and a warning", p.exitCode, took, stderr)
		}
		if signal && !p.exitSignal && (p.exitCode != 0 || !strings.Contains(stderr, "interrupted") || strings.Contains(stderr, "within 1s")) {
			t.Errorf("SIGTERM to a hook reading stdin: exit %d after %v, stderr %q; want it to stop on the signal, not at its budget", p.exitCode, took, stderr)
		}
	}
}

// waitOpen waits until p has the file at path open, which says that it is
// past its start (Linux: /proc/PID/fd), or p ends. Where there is no
// /proc it waits 300 ms.
func waitOpen(t *testing.T, p *proc, path string) {
	t.Helper()
	fds := fmt.Sprintf("/proc/%d/fd", p.cmd.Process.Pid)
	if _, err := os.Stat(fds); err != nil {
		time.Sleep(300 * time.Millisecond)
		return
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	for !p.exited() {
		entries, _ := os.ReadDir(fds)
		for _, e := range entries {
			if target, err := os.Readlink(filepath.Join(fds, e.Name())); err == nil && target == path {
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// writeLock is a write lock on a ledger held by this test process: to the
// ledger processes, another process.
type writeLock struct {
	conn *sql.Conn
	db   *sql.DB
}

func holdWriteLock(t *testing.T, db string) *writeLock {
	t.Helper()
	d, err := sql.Open("sqlite", store.DSN(db))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := d.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	l := &writeLock{conn, d}
	t.Cleanup(l.release)
	return l
}

func (l *writeLock) release() {
	if l.conn == nil {
		return
	}
	l.conn.ExecContext(context.Background(), `ROLLBACK`)
	l.conn.Close()
	l.db.Close()
	l.conn = nil
}

// TestHookDeadlineWhateverItReads: every hook returns, exit 0, within
// its budget whatever its transcript_path is: a device that never ends
// (/dev/zero), a 4 GB file of zeros with no newline, a transcript too big
// to read in the budget (read in part, the rest left for the next event).
// Memory stays small.
func TestHookDeadlineWhateverItReads(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	sparse := filepath.Join(home, "zeros.jsonl")
	if err := os.WriteFile(sparse, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(sparse, 4<<30); err != nil {
		t.Skipf("no sparse file here: %v", err)
	}
	for _, path := range []string{"/dev/zero", sparse} {
		for _, h := range hookBudgets {
			t.Run(filepath.Base(path)+" "+h.event, func(t *testing.T) {
				p := startBin(t, home, hookInput(h.event, sessionUUID(8, 8), path, home, h.extra), "--db", db, "hook")
				peak := watchPeak(t, p)
				took := endsWithin(t, p, h.budget+slack)
				if p.exitCode != 0 {
					t.Errorf("exit %d after %v: %s", p.exitCode, took, p.errb.String())
				}
				if m := peak(); m > 100<<20 {
					t.Errorf("peak RSS %d MB", m>>20)
				}
			})
		}
	}

	// A transcript of 64 MB, more than SessionEnd reads in its 1 s budget
	// (a hook reads for 45% of its budget; the 64 MB took three runs on
	// an idle machine, 31 MB in the first):
	// each SessionEnd reads what fits in its budget, commits it, and
	// leaves the rest to the next event, until it is all read. A machine
	// too busy to read anything in a run's budget leaves it all to the
	// next (the cursor stays); the cursor never goes back. Every line is
	// new: lines the ledger holds already cost a fraction of a new one's
	// writing (the 64 MB of one 1,000-message part repeated were read in
	// one run).
	const session = "8b8b8b8b-0000-4000-8000-000000000008"
	var whole bytes.Buffer
	if err := transcript.Generate(&whole, transcript.GenOptions{Seed: 8, SessionID: session, Project: "/home/dev/src/big",
		Messages: 56_000, CompactEvery: 400, Shape: transcript.GenReal}); err != nil {
		t.Fatal(err)
	}
	if whole.Len() < 60<<20 {
		t.Fatalf("generated %d MB, want 64", whole.Len()>>20)
	}
	big := filepath.Join(home, session+".jsonl")
	appendFile(t, big, whole.Bytes())
	fi, err := os.Stat(big)
	if err != nil {
		t.Fatal(err)
	}
	in := hookInput("SessionEnd", session, big, home, map[string]any{"reason": "other"})
	var offsets []int64 // the cursor after each run that read something
	for runs, stalled := 0, 0; stalled < 10 && (len(offsets) == 0 || offsets[len(offsets)-1] < fi.Size()); runs++ {
		p := startBin(t, home, in, "--db", db, "hook")
		// What this test proves is the reading in parts (the cursor
		// below); that the run ends, not when: at a load of 18 a run
		// of this loop took 4 s (1 s of budget) as other processes
		// starved it. The budgets' own bounds are TestHookBudgetsWhileLocked's.
		took := endsWithin(t, p, time.Second+4*slack)
		if p.exitCode != 0 {
			t.Errorf("SessionEnd on 64 MB: exit %d after %v: %s", p.exitCode, took, p.errb.String())
		}
		var off int64
		rawDB(t, db).Get(&off, `SELECT coalesce(max(offset), 0) FROM cursors`)
		last := int64(0)
		if len(offsets) > 0 {
			last = offsets[len(offsets)-1]
		}
		switch {
		case off < last:
			t.Fatalf("cursor after each SessionEnd: %v, then %d: it went back", offsets, off)
		case off == last:
			stalled++
			t.Logf("run %d read nothing in its budget (%v)", runs+1, took)
		default:
			stalled = 0
			offsets = append(offsets, off)
		}
	}
	if len(offsets) < 2 || offsets[len(offsets)-1] != fi.Size() {
		t.Errorf("cursor after each SessionEnd that read: %v; want the 64 MB read in parts, to its end (%d)", offsets, fi.Size())
	}
	t.Logf("64 MB read by %d SessionEnd runs: %v", len(offsets), offsets)
}

// receiptLines are the receipts the hook log holds (those the ledger
// could not take at once).
func receiptLines(t *testing.T, home string) []store.HookReceipt {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(home, ".state", "ledger", "hook.log"))
	var out []store.HookReceipt
	for _, l := range strings.Split(string(b), "\n") {
		if _, js, ok := strings.Cut(l, " receipt "); ok {
			var r store.HookReceipt
			if err := json.Unmarshal([]byte(js), &r); err != nil {
				t.Fatalf("receipt line %q: %v", l, err)
			}
			out = append(out, r)
		}
	}
	return out
}

// TestHookBudgetsWhileLocked: while another process holds the ledger's
// write lock, every hook keeps its budget and exits 0, with a receipt (in
// the hook log, the ledger being locked) saying what it left for later.
// SessionStart injects from a read; PreCompact writes the handoff's
// Markdown file at once, and SessionStart injects that handoff. Once the
// lock is released, the next hook stores what was left: the new lines,
// the handoff's row and compaction record, and its receipt in the ledger.
func TestHookBudgetsWhileLocked(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	project := filepath.Join(home, "src", "payments")
	os.MkdirAll(project, 0o700)
	path := sampleInProject(t, home, project, sampleSession)
	lines := splitLines(t, path)
	os.WriteFile(path, bytes.Join(lines[:20], nil), 0o600)
	ingestBin(t, home, db, path)
	os.WriteFile(path, bytes.Join(lines, nil), 0o600) // lines the ledger has not read

	lock := holdWriteLock(t, db)
	for _, h := range hookBudgets {
		t.Run(h.event, func(t *testing.T) {
			p := startBin(t, home, hookInput(h.event, sampleSession, path, project, h.extra), "--db", db, "hook")
			took := endsWithin(t, p, h.budget+slack)
			if p.exitCode != 0 || p.errb.Len() > 0 {
				t.Errorf("exit %d after %v (budget %v), stderr %q", p.exitCode, took, h.budget, p.errb.String())
			}
			if took > h.budget+slack {
				t.Errorf("took %v, budget %v", took, h.budget)
			}
			rs := receiptLines(t, home)
			if len(rs) == 0 || rs[len(rs)-1].Event != h.event || rs[len(rs)-1].Outcome != store.OutcomeDeferred {
				t.Fatalf("receipts in the hook log: %+v; want the last a deferred %s", rs, h.event)
			}
			r := rs[len(rs)-1]
			t.Logf("%s: %v: %s", h.event, took.Round(time.Millisecond), r.Detail)
			switch h.event {
			case "SessionStart":
				if !strings.Contains(p.out.String(), "Session "+sampleSession) {
					t.Errorf("SessionStart injected %.300q", p.out.String())
				}
			case "PreCompact":
				files, _ := filepath.Glob(filepath.Join(engine.HandoffsDir(db, project), sampleSession, "*.md"))
				if len(files) != 1 {
					t.Fatalf("handoff files %v, want one written at once", files)
				}
				if b, _ := os.ReadFile(files[0]); !strings.Contains(string(b), "keep the zebra plan") || !strings.Contains(r.Detail, files[0]) {
					t.Errorf("the handoff file lacks the compaction's instructions, or the receipt its path: %s", r.Detail)
				}
			}
		})
	}
	// SessionStart after the compaction injects the pending handoff.
	p := startBin(t, home, hookInput("SessionStart", sampleSession, path, project, map[string]any{"source": "compact"}), "--db", db, "hook")
	endsWithin(t, p, 2*time.Second+slack)
	if !strings.Contains(p.out.String(), "keep the zebra plan") {
		t.Errorf("SessionStart after PreCompact does not inject its handoff: %.300q", p.out.String())
	}
	if hs := runBin(t, home, "", "--db", db, "handoff", "list", "--json"); hs.code != 0 || strings.Contains(hs.stdout, sampleSession) {
		t.Errorf("handoff list while locked: exit %d, %.200s; want no row yet", hs.code, hs.stdout)
	}

	lock.release()
	// The next Stop stores it all; on a machine too busy to read the
	// transcript's new lines within Stop's budget, the one after it.
	for runs := 1; ; runs++ {
		p = startBin(t, home, hookInput("Stop", sampleSession, path, project, nil), "--db", db, "hook")
		endsWithin(t, p, time.Second+slack)
		p.wantClean(t)
		got := storedCounts(t, home, db)[sampleSession]
		if got.Messages == 28 {
			break
		}
		if runs == 10 {
			t.Fatalf("after the lock and %d Stop events: %+v, want the 28 messages", runs, got)
		}
	}
	var hs []struct {
		Session string `json:"session"`
	}
	decodeJSON(t, runBin(t, home, "", "--db", db, "handoff", "list", "--json").stdout, &hs)
	rows := auditRows(t, home, db)
	hookRows := 0
	for _, r := range rows {
		if r.Source == "hook" && r.HandoffID != nil {
			hookRows++
		}
	}
	if len(hs) != 1 || hookRows != 1 {
		t.Errorf("after the lock: %d handoffs, %d hook records; want the pending one stored, once", len(hs), hookRows)
	}
	s, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rs, err := s.HookReceipts(context.Background(), store.ReceiptFilter{SessionID: sampleSession})
	// The Stops' receipts: one stored the pending handoff; none failed.
	// (On a busy machine a Stop may leave its reading, or its last step,
	// the session's resume state, to the next event, and says so.)
	stored := 0
	for _, r := range rs {
		if r.Event != "Stop" || r.Outcome != store.OutcomeOK && r.Outcome != store.OutcomeDeferred {
			t.Errorf("receipt %+v, want a Stop's, ok or deferred", r)
		}
		if strings.Contains(r.Detail, "stored 1 handoff") {
			stored++
		}
	}
	if err != nil || len(rs) == 0 || stored != 1 {
		t.Errorf("receipts in the ledger: %+v, %v; want the Stops', one storing the pending handoff", rs, err)
	}
}
