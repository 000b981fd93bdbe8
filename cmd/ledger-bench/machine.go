package main

import (
	"fmt"
	"slices"
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

// faultCostNote is faultCost for the report's header.
func faultCostNote() string {
	d, err := faultCost()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return fmt.Sprintf("%.1f µs", float64(d.Nanoseconds())/1000)
}
