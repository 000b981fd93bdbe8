//go:build unix

package main

import (
	"bytes"
	"context"
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

	"github.com/agentledger/ledger/store"
)

// The second round of reliability tests (issue 19): what an attacker or an
// unlucky user meets. Like the first, they run the real binary where the
// behaviour is a process's: its memory, signals, pipes, locks held by
// another process, the bytes left on disk.

// watchPeak follows a running process's peak resident memory (VmHWM, on
// Linux): getrusage's figure for a child also counts the memory of the
// parent it was forked from, which a test holding big inputs would
// dominate. It returns a function that waits for the process and gives the
// peak in bytes (getrusage's where there is no /proc).
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
	home := t.TempDir()
	db := filepath.Join(home, "ledger.db")
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
	if err := mount("version").Run(); err == nil {
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
	home := t.TempDir()
	db := filepath.Join(home, "ledger.db")
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
	present := func(raw []byte) []string {
		var found []string
		low := bytes.ToLower(raw)
		for _, m := range markers {
			// FTS5 stores a term after the prefix it shares with the one
			// before it: look for the word's end.
			if bytes.Contains(low, []byte(m[len(m)-10:])) {
				found = append(found, m)
			}
		}
		return found
	}
	if n := len(present(dbBytes(t, db))); n < len(markers) {
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
		if found := present(raw); len(found) > 0 {
			t.Errorf("%s still holds %d of the forgotten session's %d words (%s, ...)", filepath.Base(f), len(found), len(markers), found[0])
		}
	}
	if hits, _ := search(t, home, db, keptWord); len(hits) == 0 {
		t.Error("the other session is no longer searchable")
	}
	wantHealthy(t, home, db)
}
