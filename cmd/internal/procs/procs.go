// Package procs sets the process up before the packages ledger links
// initialise: the short commands run on one processor, and every command's
// main goroutine starts with the stack SQLite's calls need.
//
// A command that reads a little and exits (OneCoreCommands) spends most of
// its time starting: the Go runtime, then some 150 packages' init
// functions (SQLite's C transpiled to Go, the MCP SDK, pgx, templates),
// then the command's few statements. On one processor (GOMAXPROCS 1) the
// Go scheduler does not wake a second thread to look for work each time
// the main goroutine waits on a read, nor keep one spinning.
//
// The setting is made in this package's init, not in main: the language
// initialises the packages in the order of their import paths, each once
// those it imports are, and this one imports only the runtime and os (not
// even strings, which waits for unicode and, in the order of the paths, a
// crowd of crypto and encoding packages), so it runs before nearly every
// other (TestOneCoreBeforeInits checks it against the heavy ones). Made in
// main, after every init, the change from two processors to one handed
// the second processor's memory spans, cached during the inits, back one
// by one, each to a list the runtime allocated anew (a page fault each:
// 6% of ledger version's CPU, more than the command's own work). Medians of 300-400 runs alternated on this machine
// (2 cores): ledger version 3.8 ms with the setting in main, 3.5 ms with
// it here; a rare identifier's search of 100k messages 6.3 ms and 5.9 ms.
//
// The main goroutine's stack starts at 8 KB and SQLite, C transpiled to
// Go with C's deep calls and wide frames, grows it copy by copy, each
// time twice the size, each copy of a deeper stack whose every frame the
// runtime looks up in the binary's tables (pages read for the first time):
// 4% of a search's CPU samples were runtime.copystack. Grown once here to
// 64 KB, while it is shallow, it is copied once (growStack).
package procs

import (
	"os"
	"runtime"
)

func init() {
	if os.Getenv("GOMAXPROCS") == "" && OneCore(os.Args[1:]) {
		runtime.GOMAXPROCS(1)
	}
	growStack()
}

// stackFrame is the frame growStack takes: the runtime gives the goroutine
// a stack of twice that (64 KB). Medians of 400 runs alternated with a
// build without it: a rare identifier's search of 100k messages 6.13 →
// 5.88 ms and 7.14 → 6.85 ms; ledger version unchanged (3.43, 3.41 ms).
// Larger frames saved no more (48 and 64 KB: 5.89 ms both).
const stackFrame = 32 << 10

// index is an index growStack's frame is read at, which the compiler
// cannot know: the frame is kept, on the stack.
var index int

// growStack grows the calling goroutine's stack to hold stackFrame more
// bytes than it uses, in one copy.
//
//go:noinline
func growStack() byte {
	var frame [stackFrame]byte
	frame[index] = 1
	return frame[len(frame)-1-index]
}

// OneCoreCommands run on one processor: search, resume, version,
// statusline and sessions read a little, one statement after another, and
// exit. ingest, sync, serve, mcp, compact and the hooks keep every
// processor: their readers, writers and extractors run side by side. A
// GOMAXPROCS in the environment wins.
var OneCoreCommands = map[string]bool{"search": true, "resume": true, "version": true, "statusline": true, "sessions": true}

// OneCore tells whether args (a command line without the program's name)
// run one of OneCoreCommands: the first argument that is not a flag of
// the root command (--db PATH, --cpuprofile FILE, --no-redact) names the
// command. Anything else (a flag it does not know, help) keeps every
// processor.
func OneCore(args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--db" || a == "--cpuprofile":
			i++ // its value
		case hasPrefix(a, "--db=") || hasPrefix(a, "--cpuprofile=") || a == "--no-redact":
		case hasPrefix(a, "-"):
			return false
		default:
			return OneCoreCommands[a]
		}
	}
	return false
}

// hasPrefix is strings.HasPrefix, which this package does not import.
func hasPrefix(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }
