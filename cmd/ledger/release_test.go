package main

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The Makefile's release build stamps the version, keeps the build
// machine's paths out (-trimpath) and strips symbols (-s -w); release
// writes each platform's binary and SHA256SUMS that verify. One platform
// here: the four take minutes.
func TestReleaseBuild(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds ledger with the Makefile")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dist := t.TempDir()
	cmd := exec.Command("make", "-C", root, "release", "DIST="+dist, "PLATFORMS=linux/amd64", "VERSION=v0.0.0-releasetest")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make release: %v\n%s", err, out)
	}
	bin := filepath.Join(dist, "ledger-v0.0.0-releasetest-linux-amd64")
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(root)) {
		t.Errorf("the binary holds the build folder %s: not built with -trimpath", root)
	}
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil || !strings.Contains(string(sums), "  ledger-v0.0.0-releasetest-linux-amd64\n") {
		t.Fatalf("SHA256SUMS: %q, %v", sums, err)
	}
	check := exec.Command("sha256sum", "-c", "SHA256SUMS")
	check.Dir = dist
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("sha256sum -c: %v %s", err, out)
	}
	if out, err := exec.Command("go", "tool", "nm", bin).CombinedOutput(); err == nil || !strings.Contains(string(out), "no symbols") {
		t.Errorf("symbols left in the binary (not -s -w): %v %.200s", err, out)
	}
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		v := exec.Command(bin, "--db", filepath.Join(t.TempDir(), "l.db"), "version")
		v.Env = []string{"HOME=" + t.TempDir()}
		if out, err := v.CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "ledger v0.0.0-releasetest ") {
			t.Errorf("version: %q, %v", out, err)
		}
	}
}

// TestTestsRunWhatIsReleased: the binary the tests run as a process is
// built as a release is (ledgerbin.Build): static on Linux, no dynamic
// loader, the Makefile's CGO_ENABLED=0.
func TestTestsRunWhatIsReleased(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" || os.Getenv("LEDGER_TEST_BIN") != "" {
		t.Skip("checks the Linux binary TestMain builds")
	}
	f, err := elf.Open(ledgerBin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s is dynamically linked (it names a program interpreter): not built with CGO_ENABLED=0", ledgerBin)
		}
	}
}
