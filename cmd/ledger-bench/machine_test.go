package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestFaultCostApart: the probe maps, touches and unmaps its pages in a
// child process (this test binary, run again), a fault costs something
// and less than a millisecond on any machine the figures could mean
// anything on, and the 64 MB it touched did not raise this process's
// peak RSS, the floor of every child's.
func TestFaultCostApart(t *testing.T) {
	before := vmHWM(t)
	d, err := faultCostApart()
	if err != nil {
		t.Fatal(err)
	}
	if d <= 0 || d > time.Millisecond {
		t.Fatalf("a page fault: %v", d)
	}
	if after := vmHWM(t); after-before > 16<<20 {
		t.Errorf("peak RSS went from %d to %d MB: the probe ran in this process", before>>20, after>>20)
	}
	t.Logf("a page fault: %v", d)
}

func vmHWM(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb); err == nil {
				return kb << 10
			}
		}
	}
	t.Skip("no VmHWM")
	return 0
}
