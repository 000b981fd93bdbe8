//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
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
