package main

import (
	"testing"
	"time"
)

// TestFaultCost: the probe maps, touches and unmaps its pages, and a
// fault costs something, and less than a millisecond on any machine the
// figures could mean anything on.
func TestFaultCost(t *testing.T) {
	d, err := faultCost()
	if err != nil {
		t.Fatal(err)
	}
	if d <= 0 || d > time.Millisecond {
		t.Fatalf("a page fault: %v", d)
	}
	t.Logf("a page fault: %v", d)
}
