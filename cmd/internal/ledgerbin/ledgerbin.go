// Package ledgerbin builds the ledger binary that tests run as a process
// (signals, kill -9, exit codes, hooks as an agent runs them). Only tests
// import it.
//
// The binary is built as the Makefile builds a release (CGO_ENABLED=0,
// -trimpath): the tests run the static binary users get, it starts
// without the dynamic loader, and its compiled packages are the ones
// TestReleaseBuild finds in the build cache. Builds are serialised across
// processes: go test runs cmd/ledger's and the agents' test binaries at
// once, and two builds of the same packages on an empty build cache would
// each compile all of them (~170 CPU-seconds) rather than the second
// finding the first's work cached.
package ledgerbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Package is the import path of the ledger command.
const Package = "github.com/agentledger/ledger/cmd/ledger"

// Build builds the ledger command into out. go's output goes to the
// test process's stderr, where a compile error is read.
func Build(out string) error {
	// Without the lock (another user's lock file, say) the build only
	// risks repeating another's work.
	if unlock, err := lock(filepath.Join(os.TempDir(), "ledger-test-build.lock")); err == nil {
		defer unlock()
	}
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, Package)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("ledgerbin: go build %s: %w", Package, err)
	}
	return nil
}
