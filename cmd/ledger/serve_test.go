package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentledger/ledger/store/storetest"
)

func TestLoopbackAddr(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"127.0.0.1:7788": true, "localhost:7788": true, "[::1]:7788": true, "127.0.0.2:80": true,
		":7788": false, "0.0.0.0:7788": false, "192.168.1.9:7788": false, "example.com:80": false,
	} {
		if got, err := loopbackAddr(addr); err != nil || got != want {
			t.Errorf("loopbackAddr(%q) = %v, %v; want %v", addr, got, err, want)
		}
	}
	if _, err := loopbackAddr("7788"); err == nil {
		t.Error("loopbackAddr(7788) accepted an address without a host part")
	}
}

// TestServeRefusals: a non-loopback address needs --allow-remote (usage
// error), and a ledger that does not exist is an error, not a new file.
func TestServeRefusals(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := filepath.Join(home, "ledger.db")
	if r := runCmd(t, home, "", "--db", db, "serve", "--addr", "0.0.0.0:0"); r.code != 2 || !strings.Contains(r.stderr, "--allow-remote") {
		t.Errorf("serve on 0.0.0.0: exit %d, %q; want 2 naming --allow-remote", r.code, r.stderr)
	}
	if r := runCmd(t, home, "", "--db", db, "serve", "--addr", "nonsense"); r.code != 2 {
		t.Errorf("serve --addr nonsense: exit %d, want 2", r.code)
	}
	if r := runCmd(t, home, "", "--db", db, "serve", "--addr", "127.0.0.1:0"); r.code != 1 || !strings.Contains(r.stderr, db) {
		t.Errorf("serve a missing ledger: exit %d, %q; want 1 naming it", r.code, r.stderr)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("serve created the database (%v)", err)
	}
}

// TestServeBinary: the real binary serves the ledger, warns when told to
// serve beyond loopback, and stops cleanly on Ctrl-C, its database
// untouched.
func TestServeBinary(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	if r := runCmd(t, home, "", "--db", db, "ingest", sampleDir(t)); r.code != 0 {
		t.Fatalf("ingest: %d %s", r.code, r.stderr)
	}
	before, _ := os.ReadFile(db)
	for _, tc := range []struct {
		args []string
		warn bool
	}{
		{[]string{"--addr", "127.0.0.1:0"}, false},
		{[]string{"--addr", "0.0.0.0:0", "--allow-remote"}, true},
	} {
		cmd := exec.Command(ledgerBin, append([]string{"--db", db, "serve"}, tc.args...)...)
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
		stdout, _ := cmd.StdoutPipe()
		var stderr lockedBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			cmd.Process.Kill()
			t.Fatalf("no first line: %v (stderr %s)", err, stderr.String())
		}
		m := regexp.MustCompile(`http://[^/]+/`).FindString(line)
		if m == "" {
			cmd.Process.Kill()
			t.Fatalf("no address in %q", line)
		}
		m = strings.Replace(m, "0.0.0.0", "127.0.0.1", 1)
		m = strings.Replace(m, "[::]", "127.0.0.1", 1)
		resp, err := http.Get(m + "sessions/7c1d")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(body), "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57") {
				t.Errorf("%s: %d", m, resp.StatusCode)
			}
		} else {
			t.Errorf("GET %s: %v", m, err)
		}
		cmd.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("exit after Ctrl-C: %v (stderr %s)", err, stderr.String())
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Fatal("serve did not stop on Ctrl-C")
		}
		if got := strings.Contains(stderr.String(), "warning: serving"); got != tc.warn {
			t.Errorf("%v: warning printed %v, want %v (%q)", tc.args, got, tc.warn, stderr.String())
		}
	}
	after, _ := os.ReadFile(db)
	if string(before) != string(after) {
		t.Error("serving changed the database file")
	}
}
