package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// Goals of the performance issues (15: ingest, search, resume, start-up,
// hooks).
const (
	goalIngestMBps    = 25.0
	goalIngestLinear  = 0.85 // MB/s at the largest size over MB/s at 100k
	goalSearchVsRg    = 0.4  // at 100k messages
	goalSearchVsRg1M  = 0.1  // at 1M
	goalSearchInproc  = 3 * time.Millisecond
	goalResumeVsFloor = 3.0 // over `ledger version` on the same database
	goalVersion       = 3 * time.Millisecond
	goalHook          = 150 * time.Millisecond
	goalStatus        = 50 * time.Millisecond
	goalAsToday       = 1.15                   // "as fast as today": at most this times the baseline
	goalRSS           = 150e6                  // MB, the unit the tables show
	goalIngestCPU     = 40.0                   // ms of CPU (user + system) per MB of JSONL, at 100k and 1M
	goalReindex       = 133 * time.Millisecond // agentsview's on the same input (issue 31)
	goalWebList       = 30 * time.Millisecond
)

// verdict is whether a goal is met where it was measured (the current
// build; the baseline is context).
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

func (b *bench) after() *target  { return b.targets[len(b.targets)-1] }
func (b *bench) before() *target { return b.targets[0] }
func (b *bench) hasBaseline() bool {
	return len(b.targets) > 1
}

// pair is a cell: the baseline's figure → the current one's.
func (b *bench) pair(f func(t *target) string) string {
	var parts []string
	for _, t := range b.targets {
		parts = append(parts, f(t))
	}
	return strings.Join(parts, " → ")
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

func (b *bench) table() string {
	var sb strings.Builder
	sizes := b.sizes
	after := b.after()
	row := func(measure, goal, cells string, v verdict) {
		fmt.Fprintf(&sb, "| %s | %s | %s | %s |\n", measure, goal, cells, v)
	}
	// col is one cell per size, each a pair.
	col := func(f func(t *target, r *sizeResult) string) string {
		cells := make([]string, len(sizes))
		for i, n := range sizes {
			cells[i] = b.pair(func(t *target) string { return f(t, t.sized[n]) })
		}
		return strings.Join(cells, " | ")
	}
	largest := sizes[len(sizes)-1]

	fmt.Fprintf(&sb, "ledger-bench, %s: %d CPUs (%s), %s, GOMAXPROCS %d; %s; %s; corpus shape %s.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), cpuModel(), runtime.Version(), runtime.GOMAXPROCS(0),
		strings.Join(b.env, ", "), orNot(b.rgVersion, "ripgrep not found"), b.shape)
	if b.hasBaseline() {
		fmt.Fprintf(&sb, "Each cell is the baseline → the current build, measured in this run, one after the other; \"met\" judges the current build.\n")
	}
	fmt.Fprintf(&sb, "Whole processes, wall time; the median of %d runs after a warm-up run (ingests: one run into a new database). ", b.runs)
	fmt.Fprintf(&sb, "Peak RSS is the kernel's for each child (rusage); it cannot be below this measuring process's own peak, %s.\n\n", selfHWM())
	heads := make([]string, len(sizes))
	seps := make([]string, len(sizes))
	for i, n := range sizes {
		heads[i] = human(n) + " messages"
		seps[i] = "---"
	}
	fmt.Fprintf(&sb, "| measure | goal | %s | met |\n|---|---|%s|---|\n", strings.Join(heads, " | "), strings.Join(seps, "|"))

	row("corpus", "", strings.Join(func() []string {
		var out []string
		for _, n := range sizes {
			c := b.corpora[n]
			out = append(out, fmt.Sprintf("%d sessions, %s (%.2f KB/message)", c.sessions, mb(c.bytes), float64(c.bytes)/1e3/float64(n)))
		}
		return out
	}(), " | "), info)

	// Throughput is judged where it means something: at 1k messages a new
	// database's creation is most of the time.
	var v verdict
	for _, n := range sizes {
		if n < 100_000 {
			continue
		}
		r := after.sized[n]
		v.check(mbps(b.corpora[n].bytes, r.ingest.wall) >= goalIngestMBps, fmt.Sprintf("%.1f MB/s at %s", mbps(b.corpora[n].bytes, r.ingest.wall), human(n)))
		v.check(cpuPerMB(r.ingest, b.corpora[n].bytes) <= goalIngestCPU, fmt.Sprintf("%.0f ms CPU/MB at %s", cpuPerMB(r.ingest, b.corpora[n].bytes), human(n)))
	}
	if r100k, rL := after.sized[100_000], after.sized[largest]; r100k != nil && largest > 100_000 {
		lin := mbps(b.corpora[largest].bytes, rL.ingest.wall) / mbps(b.corpora[100_000].bytes, r100k.ingest.wall)
		v.check(lin >= goalIngestLinear, fmt.Sprintf("%s at %.2fx the 100k throughput", human(largest), lin))
	}
	row("`ledger ingest DIR` (new database, FTS included)", "≥ 25 MB/s and ≤ 40 ms CPU per MB at 100k and 1M, linear", col(func(t *target, r *sizeResult) string {
		c := b.corpora[r.messages]
		return fmt.Sprintf("%s, **%.1f MB/s**, %.0fk msg/s (CPU %s, **%.0f ms/MB**; peak RSS %s)", ms(r.ingest.wall), mbps(c.bytes, r.ingest.wall),
			float64(r.messages)/1e3/r.ingest.wall.Seconds(), ms(r.ingest.cpu), cpuPerMB(r.ingest, c.bytes), mb(r.ingest.rss))
	}), v)

	v = verdict{}
	if b.hasBaseline() {
		for _, n := range sizes {
			a, bf := after.sized[n].reingest.wall, b.before().sized[n].reingest.wall
			v.check(float64(a) <= goalAsToday*float64(bf)+float64(time.Millisecond), fmt.Sprintf("%.2fx before at %s", ratio(a, bf), human(n)))
		}
	}
	row("`ledger ingest DIR` again (nothing new)", "as today", col(func(t *target, r *sizeResult) string {
		return fmt.Sprintf("%s (%d files)", ms(r.reingest.wall), b.corpora[r.messages].sessions)
	}), v)

	v = verdict{}
	for _, n := range sizes {
		v.check(after.sized[n].version.wall <= goalVersion, fmt.Sprintf("%s at %s", ms(after.sized[n].version.wall), human(n)))
	}
	row("`ledger version` (start-up: the process floor)", "≤ 3 ms", col(func(t *target, r *sizeResult) string { return "**" + ms(r.version.wall) + "**" }), v)

	resumeRow := func(measure string, get func(r *sizeResult) time.Duration) {
		var v verdict
		for _, n := range sizes {
			r := after.sized[n]
			x := ratio(get(r), r.version.wall)
			v.check(x <= goalResumeVsFloor, fmt.Sprintf("%.1fx the floor at %s", x, human(n)))
		}
		row(measure, "≤ 3x `ledger version`, flat", col(func(t *target, r *sizeResult) string {
			return fmt.Sprintf("**%s** (%.1fx floor)", ms(get(r)), ratio(get(r), r.version.wall))
		}), v)
	}
	resumeRow("`ledger resume SESSION --format hook`, no handoff written", func(r *sizeResult) time.Duration { return r.resumeID.wall })
	resumeRow("`ledger resume --project DIR --format hook` (the project's latest session, no handoff)", func(r *sizeResult) time.Duration { return r.resumeProject.wall })
	resumeRow("`ledger resume SESSION --format hook` once `ledger compact` wrote a handoff", func(r *sizeResult) time.Duration { return r.resumeHandoff.wall })

	v = verdict{}
	measured := false
	for _, n := range sizes {
		if r := after.sized[n]; r.resumeFirst > 0 {
			measured = true
			v.check(r.resumeFirst <= goalHook, fmt.Sprintf("%s at %s", ms(r.resumeFirst), human(n)))
		}
	}
	if measured {
		row(fmt.Sprintf("`ledger resume SESSION --format hook`, the first resume of %d older sessions (superseded in their project: an ingest leaves their state to the first resume), median", b.runs),
			"≤ 150 ms (a hook's budget)", col(func(t *target, r *sizeResult) string {
				if r.resumeFirst == 0 {
					return "-"
				}
				return fmt.Sprintf("**%s** (peak RSS %s)", ms(r.resumeFirst), mb(r.resumeFirstRSS))
			}), v)
	}

	v = verdict{}
	for _, n := range sizes {
		if r := after.sized[n]; n == 100_000 && r.reindex.wall > 0 {
			v.check(r.reindex.wall <= goalReindex, fmt.Sprintf("%s at 100k", ms(r.reindex.wall)))
		}
	}
	row(fmt.Sprintf("`ledger ingest FILE`: %d new lines of a live 1,000-message session (the newest of its project) in the ledger", reindexLines),
		"≤ 133 ms at 100k (agentsview's)", col(func(t *target, r *sizeResult) string {
			if r.reindex.wall == 0 {
				return "-"
			}
			return fmt.Sprintf("**%s** (%s; CPU %s, peak RSS %s)", ms(r.reindex.wall), mb(r.reindexBytes), ms(r.reindex.cpu), mb(r.reindex.rss))
		}), v)

	v = verdict{}
	for _, n := range sizes {
		if n >= 100_000 {
			v.check(after.sized[n].webList <= goalWebList, fmt.Sprintf("%s at %s", ms(after.sized[n].webList), human(n)))
		}
	}
	row(fmt.Sprintf("web view's session list (`ledger serve`, `GET /`, 50 sessions; median of %d requests)", b.runs), "≤ 30 ms at 100k, flat",
		col(func(t *target, r *sizeResult) string {
			return fmt.Sprintf("**%s** (%.0f KB)", ms(r.webList), float64(r.webBytes)/1e3)
		}), v)

	first := after.sized[sizes[0]]
	for qi := range first.search {
		q := first.search[qi]
		v := verdict{}
		for _, n := range sizes {
			s := after.sized[n].search[qi]
			switch {
			case n == 100_000 && s.rgOK:
				v.check(ratio(s.ledger.wall, s.rg.wall) <= goalSearchVsRg, fmt.Sprintf("%.2fx rg at 100k", ratio(s.ledger.wall, s.rg.wall)))
			case n == 1_000_000 && s.rgOK:
				v.check(ratio(s.ledger.wall, s.rg.wall) <= goalSearchVsRg1M, fmt.Sprintf("%.3fx rg at 1M", ratio(s.ledger.wall, s.rg.wall)))
			}
		}
		row(fmt.Sprintf("`ledger search '%s' --limit 20` (%s), whole process", q.query, q.label), "≤ 0.4x rg at 100k, ≤ 0.1x at 1M",
			col(func(t *target, r *sizeResult) string {
				s := r.search[qi]
				if !s.rgOK {
					return fmt.Sprintf("**%s** (%d hits)", ms(s.ledger.wall), s.hits)
				}
				return fmt.Sprintf("**%s** (%d hits; %.3fx rg)", ms(s.ledger.wall), s.hits, ratio(s.ledger.wall, s.rg.wall))
			}), v)
		v = verdict{}
		if r, ok := after.sized[1_000_000]; ok && after.driver != "" {
			v.check(r.search[qi].inproc <= goalSearchInproc, fmt.Sprintf("%s at 1M", ms(r.search[qi].inproc)))
		}
		row(fmt.Sprintf("… in-process (`Store.Search`, median of %d)", b.inRuns), "≤ 3 ms at 1M", col(func(t *target, r *sizeResult) string {
			if t.driver == "" {
				return "-"
			}
			return ms(r.search[qi].inproc)
		}), v)
		row(fmt.Sprintf("`rg -i '%s' DIR` (same run)", q.query), "", strings.Join(func() []string {
			var out []string
			for _, n := range sizes {
				s := after.sized[n].search[qi]
				if !s.rgOK {
					out = append(out, "rg not found")
					continue
				}
				out = append(out, fmt.Sprintf("%s (%d lines)", ms(s.rg.wall), s.rgLines))
			}
			return out
		}(), " | "), info)
	}

	v = verdict{}
	for _, n := range sizes {
		v.check(after.sized[n].peakRSS <= goalRSS, fmt.Sprintf("%s at %s", mb(after.sized[n].peakRSS), human(n)))
	}
	row("peak RSS, largest of the ledger processes above", "≤ 150 MB", col(func(t *target, r *sizeResult) string {
		return fmt.Sprintf("%s (ingest %s)", mb(r.peakRSS), mb(r.ingest.rss))
	}), v)

	// The size-independent measures.
	fmt.Fprintf(&sb, "\n| measure | goal | figure | met |\n|---|---|---|---|\n")
	single := func(measure, goal string, cell func(t *target) string, v verdict) {
		row(measure, goal, b.pair(cell), v)
	}
	v = verdict{}
	if b.hasBaseline() {
		a, bf := after.noop.wall, b.before().noop.wall
		v.check(float64(a) <= goalAsToday*float64(bf)+float64(time.Millisecond), fmt.Sprintf("%.2fx before", ratio(a, bf)))
	}
	single(fmt.Sprintf("`ledger ingest DIR`, %d unchanged files already read", b.noopN), "as today",
		func(t *target) string { return fmt.Sprintf("**%s** (peak RSS %s)", ms(t.noop.wall), mb(t.noop.rss)) }, v)

	big := fmt.Sprintf("the %dk-message session (%s)", b.bigMsgs/1000, mb(b.bigBytes))
	single("`ledger ingest FILE`, "+big+", new database", "",
		func(t *target) string {
			return fmt.Sprintf("%s, %.1f MB/s (peak RSS %s)", ms(t.big.ingest.wall), mbps(b.bigBytes, t.big.ingest.wall), mb(t.big.ingest.rss))
		}, info)
	v = verdict{}
	v.check(after.big.hook.wall <= goalHook, ms(after.big.hook.wall))
	if b.hasBaseline() {
		a, bf := after.big.hook.wall, b.before().big.hook.wall
		v.check(float64(a) <= goalAsToday*float64(bf)+float64(time.Millisecond), fmt.Sprintf("%.2fx before", ratio(a, bf)))
	}
	single(fmt.Sprintf("`ledger hook` SessionEnd, %d messages (%s) appended to %s", b.appendMsgs, mb(b.bigAppend), big), "≤ 150 ms, as today",
		func(t *target) string {
			return fmt.Sprintf("**%s** (peak RSS %s)", ms(t.big.hook.wall), mb(t.big.hook.rss))
		}, v)
	for _, rr := range []struct {
		name string
		get  func(t *target) time.Duration
	}{
		{"`ledger resume SESSION --format hook`, " + big + ", no handoff written", func(t *target) time.Duration { return t.big.resume.wall }},
		{"`ledger resume SESSION --format hook`, " + big + ", once a handoff was written", func(t *target) time.Duration { return t.big.resumeHandoff.wall }},
	} {
		v = verdict{}
		x := ratio(rr.get(after), after.big.version.wall)
		v.check(x <= goalResumeVsFloor, fmt.Sprintf("%.1fx the floor", x))
		single(rr.name, "≤ 3x `ledger version`", func(t *target) string {
			return fmt.Sprintf("**%s** (%.1fx floor, %s)", ms(rr.get(t)), ratio(rr.get(t), t.big.version.wall), ms(t.big.version.wall))
		}, v)
	}
	v = verdict{}
	v.check(after.big.compact.rss <= goalRSS, "compact "+mb(after.big.compact.rss))
	v.check(after.big.resume.rss <= goalRSS, "resume "+mb(after.big.resume.rss))
	v.check(after.big.resumeHandoff.rss <= goalRSS, "resume with a handoff "+mb(after.big.resumeHandoff.rss))
	single("`ledger compact SESSION` (once), "+big+"; peak RSS of it and of the resumes above", "≤ 150 MB", func(t *target) string {
		return fmt.Sprintf("%s, peak RSS **%s**; resume **%s**, **%s** with a handoff", ms(t.big.compact.wall), mb(t.big.compact.rss),
			mb(t.big.resume.rss), mb(t.big.resumeHandoff.rss))
	}, v)
	for i := range after.hooks {
		v = verdict{}
		v.check(after.hooks[i].s.wall <= goalHook, ms(after.hooks[i].s.wall))
		single(fmt.Sprintf("`ledger hook` %s, %s (%s)", after.hooks[i].name, b.hookFile, mb(b.hookSize)), "≤ 150 ms",
			func(t *target) string {
				if i >= len(t.hooks) {
					return "-"
				}
				return fmt.Sprintf("**%s**", ms(t.hooks[i].s.wall))
			}, v)
	}
	if len(after.hooks) > 0 {
		v = verdict{}
		v.check(after.status.wall <= goalStatus, ms(after.status.wall))
		single(fmt.Sprintf("`ledger statusline`, %s (%s), a handoff written", b.hookFile, mb(b.hookSize)), "≤ 50 ms",
			func(t *target) string { return fmt.Sprintf("**%s**", ms(t.status.wall)) }, v)
	}
	v = verdict{}
	v.check(after.peakRSS <= goalRSS, mb(after.peakRSS))
	single("peak RSS of every ledger process in this run", "≤ 150 MB", func(t *target) string {
		return fmt.Sprintf("**%s** (%s)", mb(t.peakRSS), t.peakCmd)
	}, v)
	return sb.String()
}

func mbps(bytes int64, d time.Duration) float64 { return float64(bytes) / 1e6 / d.Seconds() }

// cpuPerMB is a run's CPU time (user and system) in ms per MB read.
func cpuPerMB(s sample, bytes int64) float64 {
	return float64(s.cpu) / float64(time.Millisecond) / (float64(bytes) / 1e6)
}

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
