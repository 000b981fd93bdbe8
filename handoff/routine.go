package handoff

import (
	"sort"
	"strings"
	"sync"
)

// A session that finishes each piece of work the same way (compile with
// warnings as errors, run the tests and the linter, close the tracker item,
// commit, push) has established a routine. When the work in progress has
// not been through it yet, the handoff says which steps are left, so that
// the next session finishes it the way the others were.
//
// A piece of work is a tracker item from the moment it went in progress to
// the next item's start, or, without a tracker, the stretch between two
// commits. Its finishing steps are the commands that succeeded after its
// last file change. A step is part of the routine when the last pieces of
// work (two of the last three) all ended with it.

// shellRun is a command that succeeded.
type shellRun struct {
	seq     int
	key     string
	display string
}

// notRoutine are commands that are part of every piece of work without
// finishing it: staging, and reading or claiming tracker items.
var notRoutine = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"git add": true, "bd update": true, "bd show": true, "bd list": true,
		"bd ready": true, "bd create": true, "bd sync": true, "bd prime": true, "gh issue": true}
})

// window is one piece of work: (start, end] in message indexes.
type window struct{ start, end int }

// routineSteps lists the routine's steps the current work has not run
// since its last change, in the order the routine runs them.
func (x *extractor) routineSteps() []string {
	windows, current := x.workWindows()
	if len(windows) < 2 {
		return nil
	}
	if len(windows) > 3 {
		windows = windows[len(windows)-3:]
	}
	counts := map[string]int{}
	order := map[string]int{}
	display := map[string]string{}
	for _, w := range windows {
		seen := map[string]bool{}
		for i, r := range x.finishing(w) {
			if seen[r.key] {
				continue
			}
			seen[r.key] = true
			counts[r.key]++
			order[r.key] = i // the latest window's order wins
			display[r.key] = r.display
		}
	}
	need := len(windows)
	if need == 3 {
		need = 2
	}
	var missing []string
	done := map[string]bool{}
	for _, r := range x.finishing(current) {
		done[r.key] = true
	}
	for k, n := range counts {
		if n >= need && !done[k] {
			missing = append(missing, k)
		}
	}
	sort.Slice(missing, func(i, j int) bool { return order[missing[i]] < order[missing[j]] })
	out := make([]string, len(missing))
	for i, k := range missing {
		out[i] = display[k]
	}
	return out
}

// workWindows returns the finished pieces of work, oldest first, and the
// current one (which may have no end yet).
func (x *extractor) workWindows() ([]window, window) {
	type span struct{ start, done int }
	var spans []span
	var starts []int
	for _, it := range x.tracker.tasks() {
		if it.started >= 0 {
			starts = append(starts, it.started)
			if it.done > it.started {
				spans = append(spans, span{it.started, it.done})
			}
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].done < spans[j].done })
	sort.Ints(starts)
	var windows []window
	current := window{start: 0, end: x.seq + 1}
	if len(spans) > 0 {
		for _, s := range spans {
			// A piece of work ends where the next one starts, or an hour of
			// messages after it closed.
			end := s.done + 60
			for _, st := range starts {
				if st > s.done && st <= end {
					end = st - 1
					break
				}
			}
			windows = append(windows, window{s.start, end})
		}
		// The current piece of work is the latest one started, done or not:
		// a closed item may still lack its commit.
		current.start = starts[len(starts)-1]
		if last := windows[len(windows)-1]; last.start == current.start {
			windows = windows[:len(windows)-1]
		}
		return windows, current
	}
	// No tracker: the stretches between commits.
	prev := 0
	for _, c := range x.hist.commits {
		windows = append(windows, window{prev, c + 10})
		prev = c
	}
	current.start = prev
	return windows, current
}

// finishing lists the steps that succeeded in w after its last file
// change, in order.
func (x *extractor) finishing(w window) []shellRun {
	last := w.start
	for _, c := range x.hist.changes {
		if c > w.start && c <= w.end && c > last {
			last = c
		}
	}
	var out []shellRun
	for _, r := range x.hist.runs {
		if r.seq > last && r.seq <= w.end {
			out = append(out, r)
		}
	}
	return out
}

// stepDisplay shows a step without what changes from one run to the next
// (ids, messages, paths): its command, subcommand and long flags.
func stepDisplay(w []string, sc scope) string {
	parts := []string{sc.key}
	seen := map[string]bool{}
	for i, a := range w[1:] {
		if !strings.HasPrefix(a, "-") || a == "--" || strings.Contains(a, "=") || seen[a] {
			continue
		}
		seen[a] = true
		// a flag followed by its value (-m "msg") is not shown
		if !strings.HasPrefix(a, "--") && len(a) == 2 && i+2 < len(w) && !strings.HasPrefix(w[i+2], "-") {
			continue
		}
		if len(a) == 2 {
			continue
		}
		parts = append(parts, a)
	}
	return "`" + strings.Join(parts, " ") + "`"
}
