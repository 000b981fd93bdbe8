package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneCoreBeforeInits: the package that puts the short commands on one
// processor (cmd/internal/procs) initialises before the heavy packages
// the binary links, as its doc says: the Go runtime reports each package's
// init in the order it ran (GODEBUG=inittrace=1). Were it to run after
// them, the change of processors would cost more than it saves.
func TestOneCoreBeforeInits(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(ledgerBin, "--db", filepath.Join(t.TempDir(), "l.db"), "version")
	cmd.Env = []string{"HOME=" + t.TempDir(), "GODEBUG=inittrace=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ledger version: %v\n%s", err, out)
	}
	order := map[string]int{}
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "init" {
			order[f[1]] = n
			n++
		}
	}
	procs, ok := order["github.com/agentledger/ledger/cmd/internal/procs"]
	if !ok {
		t.Fatalf("no init of cmd/internal/procs among the %d inits reported:\n%s", n, out)
	}
	for _, heavy := range []string{
		"modernc.org/libc", "modernc.org/sqlite/lib", "github.com/google/jsonschema-go/jsonschema",
		"github.com/modelcontextprotocol/go-sdk/mcp", "github.com/pressly/goose/v3", "html/template",
		"github.com/agentledger/ledger/handoff", "github.com/agentledger/ledger/store",
	} {
		i, ok := order[heavy]
		if !ok {
			t.Errorf("no init of %s reported (the test's list is out of date)", heavy)
			continue
		}
		if i < procs {
			t.Errorf("%s initialised before cmd/internal/procs (%d < %d)", heavy, i, procs)
		}
	}
	if procs > n/4 {
		t.Errorf("cmd/internal/procs initialised %dth of %d packages: after most of them", procs+1, n)
	}
}
