package procs

import (
	"strings"
	"testing"
	"unsafe"
)

// TestOneCore: the commands that run on one processor are found past the
// root's flags and their values; every other command line keeps them all.
func TestOneCore(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args string
		want bool
	}{
		{"search withRetry", true},
		{"--db /tmp/l.db search x", true},
		{"--db=/tmp/l.db resume 7c1d --format hook", true},
		{"--no-redact --cpuprofile cpu.out version", true},
		{"statusline", true},
		{"sessions --limit 5", true},
		{"--db search ingest DIR", false}, // a database named search
		{"ingest DIR", false},
		{"hook", false},
		{"serve", false},
		{"sync --to URL", false},
		{"--verbose search x", false}, // a flag the root does not have
		{"", false},
		{"help search", false},
	} {
		if got := OneCore(strings.Fields(c.args)); got != c.want {
			t.Errorf("OneCore(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}

// TestGrowStack: after growStack a goroutine's stack holds nearly
// stackFrame more bytes where it is; without it the same calls move it (a
// goroutine's stack moves when the runtime grows it, and the address of a
// variable on it with it).
func TestGrowStack(t *testing.T) {
	t.Parallel()
	for _, grown := range []bool{true, false} {
		moved := make(chan bool)
		go func() {
			if grown {
				growStack()
			}
			var here byte
			at := uintptr(unsafe.Pointer(&here))
			descend(stackFrame - 4<<10)
			moved <- uintptr(unsafe.Pointer(&here)) != at
		}()
		if got := <-moved; got == grown {
			t.Errorf("grown first %v: the stack moved %v, want %v", grown, got, !grown)
		}
	}
}

// descend takes n bytes of stack in frames of 1 KB.
//
//go:noinline
func descend(n int) byte {
	var frame [1 << 10]byte
	frame[index] = byte(n)
	if n > len(frame) {
		frame[1] = descend(n - len(frame))
	}
	return frame[len(frame)-1-index]
}
