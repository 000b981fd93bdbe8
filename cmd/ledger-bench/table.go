package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Goals of the performance issue.
const (
	goalIngestMBps   = 25.0
	goalNoop         = 200 * time.Millisecond
	goalHook         = 300 * time.Millisecond
	goalSearchVsRg   = 1.0 / 3 // at 100k messages
	goalSearch1M     = 10 * time.Millisecond
	goalResume100k   = 30 * time.Millisecond
	goalResumeGrowth = 1.2 // time at 100k (and 1M) over time at 1k
	goalVersion      = 10 * time.Millisecond
	goalRSS          = 150 << 20
)

// verdict is whether a goal is met where it was measured.
type verdict struct {
	checked, failed []string
	info            bool // no goal: a figure for context
}

var info = verdict{info: true}

func (v *verdict) check(ok bool, what string) {
	if ok {
		v.checked = append(v.checked, what)
	} else {
		v.failed = append(v.failed, what)
	}
}

func (v verdict) String() string {
	switch {
	case v.info:
		return ""
	case len(v.failed) > 0:
		return "**no**: " + strings.Join(v.failed, "; ")
	case len(v.checked) == 0:
		return "not measured"
	}
	return "yes"
}

func (b *bench) table() string {
	var sb strings.Builder
	sizes := b.sizes
	col := func(f func(r *sizeResult) string) string {
		cells := make([]string, len(sizes))
		for i, n := range sizes {
			cells[i] = f(b.sized[n])
		}
		return strings.Join(cells, " | ")
	}
	row := func(measure, goal, cells string, v verdict) {
		fmt.Fprintf(&sb, "| %s | %s | %s | %s |\n", measure, goal, cells, v)
	}
	r100k, r1M, r1k := b.sized[100_000], b.sized[1_000_000], b.sized[1000]

	fmt.Fprintf(&sb, "ledger-bench, %s: %d CPUs (%s), %s, GOMAXPROCS %d; %s; %s.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), cpuModel(), runtime.Version(), runtime.GOMAXPROCS(0),
		strings.Join(b.env, ", "), orNot(b.rgVersion, "ripgrep not found"))
	fmt.Fprintf(&sb, "Peak RSS is the kernel's for each child (rusage); it cannot be below this measuring process's own peak, %s.\n",
		selfHWM())
	fmt.Fprintf(&sb, "Whole processes, wall time; the median of %d runs after a warm-up run (ingests: one run into a new database).\n\n", b.runs)
	heads := make([]string, len(sizes))
	seps := make([]string, len(sizes))
	for i, n := range sizes {
		heads[i] = human(n) + " messages"
		seps[i] = "---"
	}
	fmt.Fprintf(&sb, "| measure | goal | %s | met |\n|---|---|%s|---|\n", strings.Join(heads, " | "), strings.Join(seps, "|"))

	row("corpus", "", col(func(r *sizeResult) string {
		return fmt.Sprintf("%d sessions, %s", r.sessions, mb(r.bytes))
	}), info)

	// Throughput is judged where it means something: at 1k messages a new
	// database's creation is most of the time.
	var v verdict
	for _, n := range sizes {
		if n < 100_000 && sizes[len(sizes)-1] >= 100_000 {
			continue
		}
		r := b.sized[n]
		v.check(mbps(r.bytes, r.ingest.wall) >= goalIngestMBps, fmt.Sprintf("%.1f MB/s at %s", mbps(r.bytes, r.ingest.wall), human(n)))
	}
	row("`ledger ingest DIR` (new database, FTS included)", "≥ 25 MB/s (at 100k and 1M)", col(func(r *sizeResult) string {
		return fmt.Sprintf("%s, **%.1f MB/s** (CPU %s)", ms(r.ingest.wall), mbps(r.bytes, r.ingest.wall), ms(r.ingest.cpu))
	}), v)

	row("`ledger ingest DIR` again (nothing new)", "", col(func(r *sizeResult) string {
		return fmt.Sprintf("%s (%d files)", ms(r.reingest.wall), r.sessions)
	}), info)

	v = verdict{}
	for _, n := range sizes {
		v.check(b.sized[n].version.wall <= goalVersion, fmt.Sprintf("%s at %s", ms(b.sized[n].version.wall), human(n)))
	}
	row("`ledger version` (start-up, migrated database)", "≤ 10 ms", col(func(r *sizeResult) string { return ms(r.version.wall) }), v)

	resumeVerdict := func(get func(r *sizeResult) time.Duration) verdict {
		var v verdict
		if r100k != nil {
			v.check(get(r100k) <= goalResume100k, fmt.Sprintf("%s at 100k", ms(get(r100k))))
		}
		if r1k != nil {
			for _, n := range sizes {
				if n > 1000 {
					g := float64(get(b.sized[n])) / float64(get(r1k))
					v.check(g <= goalResumeGrowth, fmt.Sprintf("%.2fx the 1k time at %s", g, human(n)))
				}
			}
		}
		return v
	}
	resumeCell := func(get func(r *sizeResult) time.Duration) func(r *sizeResult) string {
		return func(r *sizeResult) string {
			if r1k != nil && r != r1k {
				return fmt.Sprintf("%s (%.2fx)", ms(get(r)), float64(get(r))/float64(get(r1k)))
			}
			return ms(get(r))
		}
	}
	byID := func(r *sizeResult) time.Duration { return r.resumeID.wall }
	byProject := func(r *sizeResult) time.Duration { return r.resumeProject.wall }
	byHandoff := func(r *sizeResult) time.Duration { return r.resumeHandoff.wall }
	row("`ledger resume SESSION --format hook`, no handoff written (one is extracted from the last 1,000 messages)",
		"≤ 30 ms at 100k, ≤ 1.2x the 1k time", col(resumeCell(byID)), resumeVerdict(byID))
	row("`ledger resume --project DIR --format hook` (the project's latest session, no handoff)", "≤ 30 ms at 100k, ≤ 1.2x the 1k time",
		col(resumeCell(byProject)), resumeVerdict(byProject))
	row("`ledger resume SESSION --format hook` once `ledger compact` wrote its handoff", "≤ 30 ms at 100k, ≤ 1.2x the 1k time",
		col(resumeCell(byHandoff)), resumeVerdict(byHandoff))

	for qi := range b.sized[sizes[0]].search {
		q := b.sized[sizes[0]].search[qi]
		v := verdict{}
		if r100k != nil && r100k.search[qi].rgOK {
			s := r100k.search[qi]
			v.check(float64(s.ledger.wall) <= goalSearchVsRg*float64(s.rg.wall),
				fmt.Sprintf("%.2fx rg at 100k", float64(s.ledger.wall)/float64(s.rg.wall)))
		}
		if r1M != nil {
			v.check(r1M.search[qi].ledger.wall <= goalSearch1M, fmt.Sprintf("%s at 1M", ms(r1M.search[qi].ledger.wall)))
		}
		row(fmt.Sprintf("`ledger search '%s' --limit 20` (%s)", q.query, q.label), "≤ 1/3 of rg at 100k, ≤ 10 ms at 1M",
			col(func(r *sizeResult) string {
				s := r.search[qi]
				if !s.rgOK {
					return fmt.Sprintf("**%s** (%d hits)", ms(s.ledger.wall), s.hits)
				}
				return fmt.Sprintf("**%s** (%d hits; %.3fx rg)", ms(s.ledger.wall), s.hits, float64(s.ledger.wall)/float64(s.rg.wall))
			}), v)
		row(fmt.Sprintf("`rg -i '%s' DIR` (same run)", q.query), "", col(func(r *sizeResult) string {
			s := r.search[qi]
			if !s.rgOK {
				return "rg not found"
			}
			return fmt.Sprintf("%s (%d lines)", ms(s.rg.wall), s.rgLines)
		}), info)
	}

	v = verdict{}
	for _, n := range sizes {
		v.check(b.sized[n].peakRSS <= goalRSS, fmt.Sprintf("%s at %s", mb(b.sized[n].peakRSS), human(n)))
	}
	row("peak RSS, largest of the ledger processes above", "≤ 150 MB", col(func(r *sizeResult) string {
		return fmt.Sprintf("%s (ingest %s)", mb(r.peakRSS), mb(r.ingest.rss))
	}), v)

	fmt.Fprintf(&sb, "\n| measure | goal | figure | met |\n|---|---|---|---|\n")
	v = verdict{}
	v.check(b.noop.wall <= goalNoop, ms(b.noop.wall))
	fmt.Fprintf(&sb, "| `ledger ingest DIR`, %d unchanged files already read | ≤ 200 ms | **%s** (peak RSS %s) | %s |\n",
		b.noopN, ms(b.noop.wall), mb(b.noop.rss), v)
	v = verdict{}
	v.check(b.hook.wall <= goalHook, ms(b.hook.wall))
	fmt.Fprintf(&sb, "| `ledger hook` SessionEnd, %s appended to a %s transcript already read | ≤ 300 ms | **%s** (peak RSS %s); the first ingest of the %s: %s, %.1f MB/s, peak RSS %s | %s |\n",
		mb(b.hookAppend), mb(b.hookBytes), ms(b.hook.wall), mb(b.hook.rss), mb(b.hookBytes), ms(b.hookBase.wall),
		mbps(b.hookBytes, b.hookBase.wall), mb(b.hookBase.rss), v)
	v = verdict{}
	all := slices.Collect(func(yield func(int64) bool) {
		for _, r := range b.sized {
			if !yield(r.peakRSS) {
				return
			}
		}
		yield(b.noop.rss)
		yield(b.hook.rss)
		yield(b.hookBase.rss)
	})
	peak := slices.Max(all)
	v.check(peak <= goalRSS, mb(peak))
	fmt.Fprintf(&sb, "| peak RSS of every ledger process in this run | ≤ 150 MB | **%s** | %s |\n", mb(peak), v)
	return sb.String()
}

func mbps(bytes int64, d time.Duration) float64 { return float64(bytes) / 1e6 / d.Seconds() }

func orNot(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// selfHWM is this process's peak RSS (VmHWM). A child started with vfork
// exec's from this process's memory, whose high-water mark the kernel
// carries into the child's. (getrusage(RUSAGE_SELF) would report the go
// command's peak too, under go run.)
func selfHWM() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb); err == nil {
				return mb(kb * 1024)
			}
		}
	}
	return "unknown"
}
