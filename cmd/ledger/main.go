package main

import (
	"context"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
)

// memoryLimit is the soft limit on the Go heap of a ledger process.
const memoryLimit = 100 << 20

// main runs one command line. The first Ctrl-C (SIGINT) or SIGTERM cancels
// the command's context: it stops between transactions, each file's lines
// and cursor committed together or not at all, and exits 1. A second one
// ends the process at once, wherever it is (SQLite's transactions make that
// as safe as a kill).
func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		// A soft limit: the collector works harder as the heap nears it
		// (a heap that needs more still gets it). ledger compact of a
		// 50k-message session peaked at 155 MB of RSS, 132 MB with it, in
		// the same time; ingest is unchanged. The user's GOMEMLIMIT wins.
		debug.SetMemoryLimit(memoryLimit)
	}
	if os.Getenv("GOMAXPROCS") == "" && oneCore(os.Args[1:]) {
		runtime.GOMAXPROCS(1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		cancel()
		s := <-sigs
		code := 130
		if s == syscall.SIGTERM {
			code = 143
		}
		os.Exit(code)
	}()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	cancel()
	os.Exit(code)
}

// oneCoreCommands read a little, one statement after another, and exit:
// the start of the process is most of their time (a search of 100k
// messages 7 ms, ledger version 4.5 of them). Run on one processor
// (GOMAXPROCS 1), the Go scheduler does not wake a second thread to look
// for work each time the main goroutine waits on a read, nor keep one
// spinning. Medians of 200-400 runs alternated with the binary before,
// on the 100k ledger: a rare identifier's search 9.2 ms to 8.2, resume
// 11.0 to 9.8, version 5.3 to 4.9 (each with the measuring script's own
// start of a process). ingest, sync, serve, mcp, compact and the hooks
// keep every processor: their readers, writers and extractors run side
// by side. A GOMAXPROCS in the environment wins.
var oneCoreCommands = map[string]bool{"search": true, "resume": true, "version": true, "statusline": true, "sessions": true}

// oneCore tells whether args run one of oneCoreCommands: the first
// argument that is not a flag of the root command (--db PATH,
// --cpuprofile FILE, --no-redact) names the command. Anything else (a
// flag it does not know, help) keeps every processor.
func oneCore(args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--db" || a == "--cpuprofile":
			i++ // its value
		case strings.HasPrefix(a, "--db=") || strings.HasPrefix(a, "--cpuprofile=") || a == "--no-redact":
		case strings.HasPrefix(a, "-"):
			return false
		default:
			return oneCoreCommands[a]
		}
	}
	return false
}
