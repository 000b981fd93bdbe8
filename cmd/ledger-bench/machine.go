package main

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// faultCost is what a page fault costs on this machine now: the median of
// three passes that each map 64 MB of new anonymous memory and write one
// byte to each page. A process start is mostly page faults (the binary's
// pages, the Go heap's, SQLite's cache): on a virtual machine whose
// faults cost 15 µs rather than about 1 µs every whole-process figure is
// several times slower, rg's less than ledger's. The report's header
// gives it before and after the run, so that a run can be judged.
func faultCost() (time.Duration, error) {
	const pages = 16384
	size := pages * syscall.Getpagesize()
	var each []time.Duration
	for range 3 {
		b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			return 0, fmt.Errorf("map %d bytes: %w", size, err)
		}
		start := time.Now()
		for i := 0; i < size; i += syscall.Getpagesize() {
			b[i] = 1
		}
		each = append(each, time.Since(start)/pages)
		if err := syscall.Munmap(b); err != nil {
			return 0, err
		}
	}
	slices.Sort(each)
	return each[1], nil
}

// faultProbeEnv, set to 1, makes this program measure faultCost, print
// it (nanoseconds) and exit, before anything else runs.
const faultProbeEnv = "LEDGER_BENCH_FAULT_PROBE"

func init() {
	if os.Getenv(faultProbeEnv) != "1" {
		return
	}
	d, err := faultCost()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(d.Nanoseconds())
	os.Exit(0)
}

// faultCostNote is faultCost for the report's header.
func faultCostNote() string {
	d, err := faultCostApart()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return fmt.Sprintf("%.1f µs", float64(d.Nanoseconds())/1000)
}

// faultCostApart is faultCost measured in a child process (this program,
// run again): the 64 MB it touches must not raise this process's own
// peak RSS, which is the floor of every peak its children report (they
// start as its copies, and the kernel's rusage keeps the larger).
func faultCostApart() (time.Duration, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), faultProbeEnv+"=1")
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("fault probe: %w", err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("fault probe printed %q", out)
	}
	return time.Duration(ns), nil
}
