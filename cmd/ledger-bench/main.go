package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentledger/ledger/transcript"
)

// sessionMessages is the length of every generated corpus session.
const sessionMessages = 1000

// genSeed is ledger-gen's default seed: the corpus is the one
// `ledger-gen -seed 1` writes.
const genSeed = 1

type config struct {
	ledger     string
	baseline   string
	work       string
	sizes      []int
	runs       int
	inRuns     int
	noopFiles  int
	bigMsgs    int
	appendMsgs int
	corpusDir  string
	shape      transcript.GenShape
	rg         string
	out        string
	profileDir string
	clean      bool
	prepare    bool
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == genWorkerFlag {
		if err := genWorker(); err != nil {
			fmt.Fprintln(os.Stderr, "ledger-bench: generate:", err)
			os.Exit(1)
		}
		return
	}
	var c config
	var sizes, shape string
	flag.StringVar(&c.ledger, "ledger", "", "ledger binary to measure (default: built from the module in the current folder, as docs/performance.md documents: CGO_ENABLED=0 go build -trimpath -ldflags='-s -w')")
	flag.StringVar(&c.baseline, "baseline", "", "source tree of a baseline ledger (e.g. `git archive main | tar -x -C /tmp/base`): built the same way and measured in the same run, every measure beside the current one")
	flag.StringVar(&c.work, "work", filepath.Join(os.TempDir(), "ledger-bench"), "folder for the binaries, corpora and databases")
	flag.StringVar(&sizes, "messages", "1000,100000", "corpus sizes in messages, comma-separated (sessions of 1,000 messages)")
	flag.StringVar(&shape, "shape", "real", "corpus line sizes: real (about 1.1 KB of JSONL per message) or heavy (about 2.6 KB)")
	flag.IntVar(&c.runs, "runs", 7, "runs of each timed command (the median is reported)")
	flag.IntVar(&c.inRuns, "inproc-runs", 50, "runs of each query in the in-process search measure (the median is reported)")
	flag.IntVar(&c.noopFiles, "noop-files", 1000, "unchanged files in the no-op re-ingest")
	flag.IntVar(&c.bigMsgs, "big-messages", 50000, "messages of the one big session (resume, and the SessionEnd hook reading what was appended to it)")
	flag.IntVar(&c.appendMsgs, "append-messages", 1000, "messages appended to the big session before its SessionEnd hook")
	flag.StringVar(&c.corpusDir, "corpus", filepath.Join("..", "shared", "corpus"), "real transcript corpus: every hook is timed on its largest Claude Code session (\"\" to skip)")
	flag.StringVar(&c.rg, "rg", "rg", "ripgrep binary to compare search with")
	flag.StringVar(&c.out, "out", "", "also write the table to this file")
	flag.StringVar(&c.profileDir, "profile", "", "write a CPU profile (--cpuprofile) of one extra run of each ledger command into this folder")
	flag.BoolVar(&c.clean, "clean", false, "remove the corpora and databases when done")
	flag.StringVar(&pgServer, "postgres", "", "also ingest and search every size on a PostgreSQL ledger on this server (`URL` of a role that may create databases)")
	flag.BoolVar(&c.prepare, "prepare", false, "only generate the corpora (and build ledger), then exit")
	flag.Parse()
	for _, f := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(strings.ReplaceAll(f, "_", "")))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "ledger-bench: -messages: bad size %q\n", f)
			os.Exit(2)
		}
		c.sizes = append(c.sizes, n)
	}
	slices.Sort(c.sizes)
	c.sizes = slices.Compact(c.sizes)
	var err error
	if c.shape, err = transcript.ParseGenShape(shape); err != nil {
		fmt.Fprintln(os.Stderr, "ledger-bench: -shape:", err)
		os.Exit(2)
	}
	c.runs = max(c.runs, 1)
	c.inRuns = max(c.inRuns, 1)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = run(ctx, c)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ledger-bench:", err)
		os.Exit(1)
	}
}

// sample is one whole-process run: wall time, the child's peak RSS and its
// CPU time (user and system: above the wall time, it used both cores).
type sample struct {
	wall time.Duration
	rss  int64 // bytes
	cpu  time.Duration
}

// target is one ledger build under measure: the current one, and the
// baseline when -baseline is given. Every measure runs for each target in
// turn, so that both meet the same machine state.
type target struct {
	label  string // "before" or "after"
	ledger string // the binary
	driver string // the in-process search driver built from the same tree ("": none)
	sized  map[int]*sizeResult
	// size-independent
	noop    sample
	big     bigResult
	hooks   []hookResult
	status  sample // ledger statusline on the corpus session, its handoff written
	peakRSS int64
	peakCmd string // the ledger command line of peakRSS
}

// bench holds the run's settings and what it measured.
type bench struct {
	config
	ctx       context.Context
	targets   []*target
	cur       *target // the target being measured
	rgVersion string
	env       []string
	// shared by the targets: the corpora and rg's figures
	corpora   map[int]corpusInfo
	noopN     int
	bigBytes  int64 // the big session's head
	bigAppend int64 // what is appended before its hook
	hookFile  string
	hookSize  int64
}

type corpusInfo struct {
	dir      string
	sessions int
	bytes    int64
}

type sizeResult struct {
	messages      int
	ingest        sample
	reingest      sample
	version       sample
	resumeID      sample
	resumeProject sample
	resumeHandoff sample
	search        []searchResult
	peakRSS       int64
	// resumeFirst is the median of the first resumes of older sessions
	// (0: not measured), resumeFirstRSS their largest peak RSS.
	resumeFirst    time.Duration
	resumeFirstRSS int64
	reindex        sample // `ledger ingest FILE` after reindexLines new lines of a live session
	reindexBytes   int64
	webList        time.Duration // GET / of `ledger serve`
	webBytes       int64
}

type searchResult struct {
	label, query string
	ledger       sample
	hits         int
	inproc       time.Duration // median of the in-process runs (0: not measured)
	rg           sample
	rgOK         bool
	rgLines      int
}

// bigResult is what was measured on the one big session.
type bigResult struct {
	ingest        sample // of its head, into a new database
	hook          sample // SessionEnd once the tail was appended
	version       sample
	resume        sample // no handoff written
	compact       sample // `ledger compact`: the handoff of the whole session
	resumeHandoff sample
}

// hookResult is one hook event timed on the real corpus's largest session.
type hookResult struct {
	name string
	s    sample
}

func run(ctx context.Context, c config) error {
	b := &bench{config: c, ctx: ctx, corpora: map[int]corpusInfo{}}
	if err := os.MkdirAll(c.work, 0o755); err != nil {
		return err
	}
	if c.profileDir != "" {
		if err := os.MkdirAll(c.profileDir, 0o755); err != nil {
			return err
		}
	}
	if err := b.prepareTargets(); err != nil {
		return err
	}
	if c.prepare {
		for _, n := range c.sizes {
			if _, err := b.corpus(n); err != nil {
				return err
			}
		}
		return b.generate(filepath.Join(b.work, "noop", "files"), b.noopFiles, 20)
	}
	b.env = append(b.env, "load before: "+loadavg(), "a page fault before: "+faultCostNote())
	if out, err := exec.Command(c.rg, "--version").Output(); err == nil {
		b.rgVersion = strings.SplitN(string(out), "\n", 2)[0]
	}
	for _, n := range c.sizes {
		if err := b.measureSize(n); err != nil {
			return fmt.Errorf("%s messages: %w", human(n), err)
		}
	}
	if err := b.measureNoop(); err != nil {
		return fmt.Errorf("no-op re-ingest: %w", err)
	}
	if err := b.measureBig(); err != nil {
		return fmt.Errorf("big session: %w", err)
	}
	if c.corpusDir != "" {
		if err := b.measureCorpusHooks(); err != nil {
			return fmt.Errorf("hooks on the corpus: %w", err)
		}
	}
	if pgServer != "" {
		if err := b.measurePostgres(); err != nil {
			return fmt.Errorf("postgres: %w", err)
		}
	}
	b.env = append(b.env, "load after: "+loadavg(), "a page fault after: "+faultCostNote())
	table := b.table() + b.pgTable()
	fmt.Print(table)
	if c.out != "" {
		if err := os.WriteFile(c.out, []byte(table), 0o644); err != nil {
			return err
		}
	}
	if c.clean {
		for _, d := range []string{"sessions-" + c.shape.String(), "corpus-" + c.shape.String(), "db", "noop", "big", "hooks", "live"} {
			os.RemoveAll(filepath.Join(c.work, d))
		}
	}
	return nil
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// each runs f for every target, the baseline first.
func (b *bench) each(f func(t *target) error) error {
	for _, t := range b.targets {
		b.cur = t
		if err := f(t); err != nil {
			if len(b.targets) > 1 {
				return fmt.Errorf("%s: %w", t.label, err)
			}
			return err
		}
	}
	return nil
}

// prepareTargets builds the binaries: the baseline's from its tree, the
// current one from the module in the working folder unless -ledger names
// it. Each gets the in-process search driver built from its own tree.
func (b *bench) prepareTargets() error {
	if b.baseline != "" {
		src, err := filepath.Abs(b.baseline)
		if err != nil {
			return err
		}
		t := &target{label: "before", sized: map[int]*sizeResult{}}
		if t.ledger, t.driver, err = b.build(src, "before"); err != nil {
			return fmt.Errorf("baseline: %w", err)
		}
		b.targets = append(b.targets, t)
	}
	t := &target{label: "after", sized: map[int]*sizeResult{}}
	if b.ledger != "" {
		p, err := filepath.Abs(b.ledger)
		if err != nil {
			return err
		}
		t.ledger = p
		if wd, err := os.Getwd(); err == nil {
			if _, t.driver, err = b.build(wd, "after-driver"); err != nil {
				b.logf("no in-process search driver: %v", err)
				t.driver = ""
			}
		}
	} else {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		if t.ledger, t.driver, err = b.build(wd, "after"); err != nil {
			return fmt.Errorf("run from the module root, or pass -ledger: %w", err)
		}
	}
	b.targets = append(b.targets, t)
	return nil
}

// driverSource is the in-process search driver: it opens a ledger with the
// store package of the tree it is built in and times Store.Search, so that
// a baseline tree is measured with its own code. It is compiled into the
// tree with an overlay; nothing is written there.
const driverSource = `package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/agentledger/ledger/store"
)

func main() {
	ctx := context.Background()
	runs, _ := strconv.Atoi(os.Args[2])
	st, err := store.Open(ctx, os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer st.Close()
	enc := json.NewEncoder(os.Stdout)
	for _, q := range os.Args[3:] {
		var ds []time.Duration
		hits := 0
		for i := range runs + 1 {
			start := time.Now()
			res, err := st.Search(ctx, store.SearchOptions{Query: store.ParseQuery(q), Limit: 20})
			d := time.Since(start)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			hits = len(res.Hits)
			if i > 0 {
				ds = append(ds, d)
			}
		}
		slices.Sort(ds)
		enc.Encode(map[string]any{"query": q, "median_ns": ds[len(ds)/2], "hits": hits})
	}
}
`

// build compiles ledger and the in-process driver from the module at src
// into -work/label/.
func (b *bench) build(src, label string) (ledger, driver string, err error) {
	dir := filepath.Join(b.work, "bin", label)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	ledger = filepath.Join(dir, "ledger")
	b.logf("building %s from %s", ledger, src)
	if err := b.goBuild(src, ledger, "./cmd/ledger"); err != nil {
		return "", "", err
	}
	main := filepath.Join(dir, "driver.go")
	if err := os.WriteFile(main, []byte(driverSource), 0o644); err != nil {
		return "", "", err
	}
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{
		filepath.Join(src, "cmd", "ledger-bench-inproc", "main.go"): main}})
	ov := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o644); err != nil {
		return "", "", err
	}
	driver = filepath.Join(dir, "search-driver")
	if err := b.goBuild(src, driver, "-overlay", ov, "./cmd/ledger-bench-inproc"); err != nil {
		return "", "", fmt.Errorf("in-process driver: %w", err)
	}
	return ledger, driver, nil
}

func (b *bench) goBuild(src, out string, args ...string) error {
	cmd := exec.CommandContext(b.ctx, "go", append([]string{"build", "-trimpath", "-ldflags=-s -w", "-o", out}, args...)...)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // a static binary: no dynamic loader at start-up
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build in %s: %w", src, err)
	}
	return nil
}

// exec runs one whole process: the ledger binary of the current target (or
// another program when name is not ""), stdin from in, stdout drained
// through a pipe (ripgrep would stop at the first match if it saw
// /dev/null), stderr kept for errors.
func (b *bench) exec(name string, in []byte, args ...string) (sample, *capped, error) {
	isLedger := name == ""
	if isLedger {
		name = b.cur.ledger
	}
	cmd := exec.CommandContext(b.ctx, name, args...)
	if in != nil {
		cmd.Stdin = bytes.NewReader(in)
	}
	stdout := capped{keep: name != b.rg}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "XDG_STATE_HOME="+filepath.Join(b.work, "state"))
	start := time.Now()
	err := cmd.Run()
	s := sample{wall: time.Since(start)}
	if cmd.ProcessState == nil {
		return s, &stdout, fmt.Errorf("%s: %w", filepath.Base(name), err) // did not start
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.rss = ru.Maxrss * 1024 // kilobytes on Linux
		s.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if isLedger && s.rss > b.cur.peakRSS {
		b.cur.peakRSS, b.cur.peakCmd = s.rss, peakCommand(args)
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && name == b.rg && ee.ExitCode() == 1 {
			return s, &stdout, nil // no match
		}
		return s, &stdout, fmt.Errorf("%s %s: %w: %s", filepath.Base(name), strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	// A hook fails open: a warning is how its failure shows.
	if isLedger && bytes.Contains(stderr.Bytes(), []byte("warning")) {
		return s, &stdout, fmt.Errorf("ledger %s: unexpected stderr: %s", strings.Join(args, " "), strings.TrimSpace(stderr.String()))
	}
	return s, &stdout, nil
}

// capped is a command's stdout: its lines counted, its first bytes kept.
// The measuring process must stay small: a child's peak RSS as the kernel
// reports it starts from its parent's (exec records the old memory's
// high-water mark, and Go starts children with vfork).
type capped struct {
	keep  bool // keep the head (ledger's JSON), not only count lines
	head  []byte
	lines int
}

const capHead = 4 << 20

func (c *capped) Write(p []byte) (int, error) {
	c.lines += bytes.Count(p, []byte("\n"))
	if n := min(len(p), capHead-len(c.head)); c.keep && n > 0 {
		c.head = append(c.head, p[:n]...)
	}
	return len(p), nil
}

// median runs a command b.runs times (after one untimed warm-up run) and
// returns the median wall and CPU times and the largest peak RSS.
func (b *bench) median(name string, in []byte, args ...string) (sample, *capped, error) {
	return b.medianPrep(nil, name, in, args...)
}

// medianPrep is median with prep run before every run, untimed.
func (b *bench) medianPrep(prep func() error, name string, in []byte, args ...string) (sample, *capped, error) {
	var walls, cpus []time.Duration
	var rss int64
	var out *capped
	for i := range b.runs + 1 {
		if prep != nil {
			if err := prep(); err != nil {
				return sample{}, nil, err
			}
		}
		s, o, err := b.exec(name, in, args...)
		if err != nil {
			return sample{}, nil, err
		}
		if i == 0 {
			out = o
			continue // warm-up
		}
		walls = append(walls, s.wall)
		cpus = append(cpus, s.cpu)
		rss = max(rss, s.rss)
	}
	slices.Sort(walls)
	slices.Sort(cpus)
	return sample{wall: walls[len(walls)/2], cpu: cpus[len(cpus)/2], rss: rss}, out, nil
}

// profile runs a ledger command once more with --cpuprofile into
// -profile/<target>-NAME.pprof, when -profile is set.
func (b *bench) profile(name string, in []byte, args ...string) {
	if b.profileDir == "" {
		return
	}
	p := filepath.Join(b.profileDir, b.cur.label+"-"+name+".pprof")
	if _, _, err := b.exec("", in, append([]string{"--cpuprofile", p}, args...)...); err != nil {
		b.logf("profile %s: %v", name, err)
	}
}

// genJob is one transcript to generate.
type genJob struct {
	Path      string
	Seed      uint64
	Messages  int
	Project   string
	SessionID string
	Shape     transcript.GenShape
}

// sessionJob is the corpus session i: what ledger-gen writes with the same
// index, seed, message count and shape.
func (b *bench) sessionJob(root string, i, messages int) genJob {
	return genJob{Path: sessionPath(root, i), Seed: genSeed*1_000_003 + uint64(i), Messages: messages, Project: sessionProject(i),
		Shape: b.shape}
}

// write generates the job's transcript, atomically.
func (j genJob) write() error {
	if err := os.MkdirAll(filepath.Dir(j.Path), 0o755); err != nil {
		return err
	}
	tmp := j.Path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	err = transcript.Generate(f, transcript.GenOptions{Seed: j.Seed, SessionID: j.SessionID,
		Messages: j.Messages, CompactEvery: 400, Project: j.Project, Shape: j.Shape})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, j.Path)
}

// genWorkerFlag makes the binary a generator child: it reads jobs as JSON
// on stdin. Generating in children keeps the measuring process small, and
// a child's peak RSS as the kernel reports it cannot be below its parent's.
const genWorkerFlag = "-gen-worker"

func genWorker() error {
	dec := json.NewDecoder(os.Stdin)
	for {
		var j genJob
		if err := dec.Decode(&j); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
		if err := j.write(); err != nil {
			return err
		}
	}
}

// runJobs generates jobs in one child process per core.
func (b *bench) runJobs(jobs []genJob) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	procs := min(runtime.NumCPU(), len(jobs))
	errs := make(chan error, procs)
	for k := range procs {
		var in bytes.Buffer
		enc := json.NewEncoder(&in)
		for i := k; i < len(jobs); i += procs {
			enc.Encode(jobs[i])
		}
		cmd := exec.CommandContext(b.ctx, self, genWorkerFlag)
		cmd.Stdin, cmd.Stderr = &in, os.Stderr
		go func() { errs <- cmd.Run() }()
	}
	for range procs {
		if e := <-errs; e != nil && err == nil {
			err = fmt.Errorf("generate: %w", e)
		}
	}
	return err
}

func sessionProject(i int) string { return fmt.Sprintf("/home/dev/src/project%02d", i%17) }

func sessionPath(root string, i int) string {
	return filepath.Join(root, fmt.Sprintf("-home-dev-src-project%02d", i%17), fmt.Sprintf("session-%05d.jsonl", i))
}

// generate writes the sessions [0, n) of messages each under root that are
// not there yet, on every core.
func (b *bench) generate(root string, n, messages int) error {
	var todo []genJob
	for i := range n {
		if _, err := os.Stat(sessionPath(root, i)); err != nil {
			todo = append(todo, b.sessionJob(root, i, messages))
		}
	}
	if len(todo) == 0 {
		return nil
	}
	b.logf("generating %d sessions of %d messages under %s", len(todo), messages, root)
	return b.runJobs(todo)
}

// corpus returns a folder holding the first sessions of the session pool:
// hard links, so that the sizes share their bytes on disk.
func (b *bench) corpus(messages int) (corpusInfo, error) {
	if c, ok := b.corpora[messages]; ok {
		return c, nil
	}
	sessions := (messages + sessionMessages - 1) / sessionMessages
	pool := filepath.Join(b.work, "sessions-"+b.shape.String())
	if err := b.generate(pool, sessions, sessionMessages); err != nil {
		return corpusInfo{}, err
	}
	dir := filepath.Join(b.work, "corpus-"+b.shape.String(), strconv.Itoa(messages))
	var total int64
	for i := range sessions {
		src, dst := sessionPath(pool, i), sessionPath(dir, i)
		fi, err := os.Stat(src)
		if err != nil {
			return corpusInfo{}, err
		}
		total += fi.Size()
		if _, err := os.Stat(dst); err == nil {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return corpusInfo{}, err
		}
		if err := os.Link(src, dst); err != nil {
			return corpusInfo{}, err
		}
	}
	c := corpusInfo{dir: dir, sessions: sessions, bytes: total}
	b.corpora[messages] = c
	return c, nil
}

// freshDB removes a database and its WAL files and returns its path.
func freshDB(path string) string {
	for _, suf := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suf)
	}
	return path
}

// copyDB replaces dst (and its WAL) with a copy of src's.
func copyDB(dst, src string) error {
	freshDB(dst)
	for _, suf := range []string{"", "-wal"} {
		f, err := os.Open(src + suf)
		if suf != "" && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		err = copyFile(dst+suf, f)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// caseRe finds the rare identifiers the generator writes: numbered subtests.
var caseRe = regexp.MustCompile(`FAIL: ([A-Za-z]+/case_[0-9]{5})`)

// rareIdent is the first numbered subtest of session 0, which every corpus
// size holds: rare (one in 100,000 failures shares its number) yet found.
func rareIdent(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if m := caseRe.FindSubmatch(sc.Bytes()); m != nil {
			return string(m[1]), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no numbered subtest in %s", path)
}

func (b *bench) dbPath(name string) string {
	return filepath.Join(b.work, "db", b.cur.label+"-"+name+".db")
}

func (b *bench) measureSize(n int) error {
	c, err := b.corpus(n)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(b.work, "db"), 0o755); err != nil {
		return err
	}
	id, err := sessionID(sessionPath(c.dir, 0))
	if err != nil {
		return err
	}
	size := strconv.Itoa(n)
	results := func(t *target) *sizeResult {
		if t.sized[n] == nil {
			t.sized[n] = &sizeResult{messages: n}
		}
		return t.sized[n]
	}
	// track makes each size's peak RSS its own.
	track := func(f func(t *target, r *sizeResult) error) error {
		return b.each(func(t *target) error {
			r := results(t)
			before := t.peakRSS
			t.peakRSS = 0
			err := f(t, r)
			r.peakRSS = max(r.peakRSS, t.peakRSS)
			t.peakRSS = max(before, t.peakRSS)
			return err
		})
	}
	b.logf("%s messages: ingest %s (%d files)", human(n), mb(c.bytes), c.sessions)
	if err := track(func(t *target, r *sizeResult) (err error) {
		db := freshDB(b.dbPath(size))
		if r.ingest, _, err = b.exec("", nil, "--db", db, "ingest", c.dir); err != nil {
			return err
		}
		b.logf("  %s: %v, %.1f MB/s, peak RSS %s", t.label, r.ingest.wall.Round(time.Millisecond), mbps(c.bytes, r.ingest.wall), mb(r.ingest.rss))
		if b.profileDir != "" {
			// Profiling slows it a little: a second ingest, into another database.
			pdb := freshDB(b.dbPath(size + "-profile"))
			b.profile("ingest-"+size, nil, "--db", pdb, "ingest", c.dir)
			freshDB(pdb)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := track(func(t *target, r *sizeResult) (err error) {
		db := b.dbPath(size)
		if r.reingest, _, err = b.median("", nil, "--db", db, "ingest", c.dir); err != nil {
			return err
		}
		if r.version, _, err = b.median("", nil, "--db", db, "version"); err != nil {
			return err
		}
		b.profile("version-"+size, nil, "--db", db, "version")
		if r.resumeID, _, err = b.median("", nil, "--db", db, "resume", id, "--format", "hook"); err != nil {
			return err
		}
		b.profile("resume-"+size, nil, "--db", db, "resume", id, "--format", "hook")
		if r.resumeProject, _, err = b.median("", nil, "--db", db, "resume", "--project", sessionProject(0), "--format", "hook"); err != nil {
			return err
		}
		b.logf("  %s: version %v, resume %v", t.label, r.version.wall.Round(time.Microsecond), r.resumeID.wall.Round(time.Microsecond))
		if err := b.measureFirstResume(t, r, c.dir, c.sessions); err != nil {
			return fmt.Errorf("first resume: %w", err)
		}
		if err := b.measureWebList(t, r); err != nil {
			return fmt.Errorf("web session list: %w", err)
		}
		if n >= 10_000 {
			if err := b.measureReindex(t, r); err != nil {
				return fmt.Errorf("re-index: %w", err)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := b.measureSearch(n, c.dir, results, track); err != nil {
		return err
	}
	// Last, as it writes: resume once a handoff was written (what
	// SessionStart finds after PreCompact or `ledger compact`).
	return track(func(t *target, r *sizeResult) (err error) {
		db := b.dbPath(size)
		if _, _, err := b.exec("", nil, "--db", db, "compact", id, "--out", filepath.Join(b.work, "db", t.label+"-handoff-"+size+".md")); err != nil {
			return err
		}
		if r.resumeHandoff, _, err = b.median("", nil, "--db", db, "resume", id, "--format", "hook"); err != nil {
			return err
		}
		b.profile("resume-handoff-"+size, nil, "--db", db, "resume", id, "--format", "hook")
		return nil
	})
}

// searchQueries are the queries every size is searched for: a rare
// identifier (found in session 0), a common word, two words, a path.
func searchQueries(rare string) []struct{ label, q string } {
	return []struct{ label, q string }{
		{"rare identifier", rare},
		{"common word", "timeout"},
		{"two words", "flaky deadline"},
		{"path", "pkg/auth/session_store.go"},
	}
}

// measureSearch runs ledger search (whole process and in-process) and
// rg -i over the same corpus, query by query.
func (b *bench) measureSearch(n int, dir string, results func(*target) *sizeResult, track func(func(*target, *sizeResult) error) error) error {
	rare, err := rareIdent(sessionPath(dir, 0))
	if err != nil {
		return err
	}
	queries := searchQueries(rare)
	for _, q := range queries {
		var rg sample
		var lines int
		if b.rgVersion != "" {
			s, out, err := b.median(b.rg, nil, "-i", q.q, dir)
			if err != nil {
				return err
			}
			rg, lines = s, out.lines
			b.logf("  rg %q: %v (%d lines)", q.q, s.wall.Round(time.Microsecond), out.lines)
		}
		for _, t := range b.targets {
			r := results(t)
			r.search = append(r.search, searchResult{label: q.label, query: q.q, rg: rg, rgOK: b.rgVersion != "", rgLines: lines})
		}
	}
	return track(func(t *target, r *sizeResult) error {
		db := b.dbPath(strconv.Itoa(n))
		for i, q := range queries {
			sr := &r.search[i]
			var out *capped
			var err error
			if sr.ledger, out, err = b.median("", nil, "--db", db, "search", q.q, "--limit", "20", "--json"); err != nil {
				return err
			}
			var hits []json.RawMessage
			if err := json.Unmarshal(out.head, &hits); err != nil {
				return fmt.Errorf("search %q: %w", q.q, err)
			}
			sr.hits = len(hits)
			b.profile(fmt.Sprintf("search%d-%d", i, n), nil, "--db", db, "search", q.q, "--limit", "20")
			b.logf("  %s: search %q: %v (%d hits)", t.label, q.q, sr.ledger.wall.Round(time.Microsecond), sr.hits)
		}
		if t.driver == "" {
			return nil
		}
		args := []string{db, strconv.Itoa(b.inRuns)}
		for _, q := range queries {
			args = append(args, q.q)
		}
		_, out, err := b.exec(t.driver, nil, args...)
		if err != nil {
			return err
		}
		dec := json.NewDecoder(bytes.NewReader(out.head))
		for i := range queries {
			var res struct {
				Median int64 `json:"median_ns"`
			}
			if err := dec.Decode(&res); err != nil {
				return fmt.Errorf("in-process driver: %w", err)
			}
			r.search[i].inproc = time.Duration(res.Median)
		}
		return nil
	})
}

// sessionID reads the session id of a transcript: the first record's
// that has one.
func sessionID(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<16)
	for range 100 {
		line, err := r.ReadBytes('\n')
		var rec struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.SessionID != "" {
			return rec.SessionID, nil
		}
		if err != nil {
			break
		}
	}
	return "", fmt.Errorf("no session id in the first lines of %s", path)
}

// measureNoop times `ledger ingest` over noopFiles small files that it has
// read before: cursors say nothing changed.
func (b *bench) measureNoop() error {
	root := filepath.Join(b.work, "noop", "files")
	if err := b.generate(root, b.noopFiles, 20); err != nil {
		return err
	}
	var n int
	if err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			n++
		}
		return err
	}); err != nil {
		return err
	}
	b.noopN = n
	b.logf("no-op re-ingest of %d files", n)
	return b.each(func(t *target) error {
		db := freshDB(filepath.Join(b.work, "noop", t.label+"-ledger.db"))
		if _, _, err := b.exec("", nil, "--db", db, "ingest", root); err != nil {
			return err
		}
		s, out, err := b.median("", nil, "--db", db, "ingest", "--json", root)
		if err != nil {
			return err
		}
		var sum struct {
			Files, Messages int
		}
		if err := json.Unmarshal(out.head, &sum); err != nil || sum.Files != 0 || sum.Messages != 0 {
			return fmt.Errorf("the re-ingest read something: %s", out.head)
		}
		t.noop = s
		b.profile("noop-ingest", nil, "--db", db, "ingest", root)
		return nil
	})
}

// bigSessionID is the id of the one big session.
const bigSessionID = "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57"

// measureBig measures the one big session (-big-messages): its first
// ingest; `ledger hook` on SessionEnd after -append-messages were added to
// it (a session's tail ingest: each run starts from a copy of the database
// as it was before the append); then resume with no handoff written, and
// once one was.
func (b *bench) measureBig() error {
	dir := filepath.Join(b.work, "big")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	project := "/home/dev/src/payments"
	full := filepath.Join(dir, fmt.Sprintf("full-%s-%d-%d.jsonl", b.shape, b.bigMsgs, b.appendMsgs))
	h, t, err := b.bigTranscript(full, project)
	if err != nil {
		return err
	}
	b.bigBytes, b.bigAppend = h, t-h
	tail := make([]byte, t-h)
	src, err := os.Open(full)
	if err != nil {
		return err
	}
	defer src.Close()
	if _, err := src.ReadAt(tail, h); err != nil {
		return err
	}
	path := filepath.Join(dir, "-home-dev-src-payments", bigSessionID+".jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	head := func() error {
		return copyFile(path, io.NewSectionReader(src, 0, h))
	}
	appendTail := func() error {
		if err := os.Truncate(path, b.bigBytes); err != nil {
			return err
		}
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = f.Write(tail)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	in, _ := json.Marshal(map[string]string{"session_id": bigSessionID, "transcript_path": path, "cwd": project,
		"hook_event_name": "SessionEnd", "reason": "exit"})
	b.logf("big session: ingest %s (%d messages), then append %s (%d messages)", mb(b.bigBytes), b.bigMsgs, mb(b.bigAppend), b.appendMsgs)
	return b.each(func(tg *target) error {
		r := &tg.big
		if err := head(); err != nil {
			return err
		}
		base := freshDB(filepath.Join(dir, tg.label+"-base.db"))
		var err error
		if r.ingest, _, err = b.exec("", nil, "--db", base, "ingest", path); err != nil {
			return err
		}
		db := filepath.Join(dir, tg.label+"-run.db")
		prep := func() error {
			if err := copyDB(db, base); err != nil {
				return err
			}
			return appendTail()
		}
		if r.hook, _, err = b.medianPrep(prep, "", in, "--db", db, "hook"); err != nil {
			return err
		}
		// The hook must have read the whole tail: ingesting again adds nothing.
		_, out, err := b.exec("", nil, "--db", db, "ingest", "--json", path)
		if err != nil {
			return err
		}
		var sum struct{ Messages int }
		if err := json.Unmarshal(out.head, &sum); err != nil || sum.Messages != 0 {
			return fmt.Errorf("the hook left lines unread: %s", out.head)
		}
		if b.profileDir != "" {
			if err := prep(); err != nil {
				return err
			}
			b.profile("hook-sessionend", in, "--db", db, "hook")
		}
		if r.version, _, err = b.median("", nil, "--db", db, "version"); err != nil {
			return err
		}
		if r.resume, _, err = b.median("", nil, "--db", db, "resume", bigSessionID, "--format", "hook"); err != nil {
			return err
		}
		b.profile("resume-big", nil, "--db", db, "resume", bigSessionID, "--format", "hook")
		// Each compact writes a handoff: timed once, on the ledger the
		// resumes above read.
		if r.compact, _, err = b.exec("", nil, "--db", db, "compact", bigSessionID, "--out", filepath.Join(dir, tg.label+"-handoff.md")); err != nil {
			return err
		}
		if r.resumeHandoff, _, err = b.median("", nil, "--db", db, "resume", bigSessionID, "--format", "hook"); err != nil {
			return err
		}
		b.logf("  %s: ingest %v, SessionEnd hook %v, resume %v, %v with a handoff", tg.label, r.ingest.wall.Round(time.Millisecond),
			r.hook.wall.Round(time.Microsecond), r.resume.wall.Round(time.Microsecond), r.resumeHandoff.wall.Round(time.Microsecond))
		return nil
	})
}

// bigTranscript writes the big session to path (once: it is kept) and
// returns where to cut it at line ends: the head holding -big-messages
// messages and, up to tailEnd, the -append-messages that follow.
func (b *bench) bigTranscript(path, project string) (head, tailEnd int64, err error) {
	if _, err := os.Stat(path); err != nil {
		if err := b.runJobs([]genJob{{Path: path, Seed: 42, Messages: b.bigMsgs + b.appendMsgs, Project: project,
			SessionID: bigSessionID, Shape: b.shape}}); err != nil {
			return 0, 0, err
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var off int64
	msgs := 0
	for {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, 0, err
		}
		off += int64(len(line))
		var rec struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(line, &rec) == nil && (rec.Type == "user" || rec.Type == "assistant") {
			msgs++
		}
		if msgs == b.bigMsgs && head == 0 {
			head = off
		}
	}
	if head == 0 {
		return 0, 0, errors.New("generated transcript too short")
	}
	return head, off, nil
}

// largestSession is the corpus's largest Claude Code main transcript (not
// a subagent's).
func largestSession(corpus string) (string, int64, error) {
	var best string
	var size int64
	files, err := filepath.Glob(filepath.Join(corpus, "claude", "*.jsonl"))
	if err != nil {
		return "", 0, err
	}
	for _, f := range files {
		if strings.Contains(filepath.Base(f), "subagents") {
			continue
		}
		if fi, err := os.Stat(f); err == nil && fi.Size() > size {
			best, size = f, fi.Size()
		}
	}
	if best == "" {
		return "", 0, fmt.Errorf("no Claude Code transcript in %s/claude", corpus)
	}
	return best, size, nil
}

// measureCorpusHooks times every hook event on the corpus's largest session,
// each run from a copy of the same database: up to date with the
// transcript (what a hook usually meets), or new (the worst case: the
// whole transcript to read).
func (b *bench) measureCorpusHooks() error {
	src, size, err := largestSession(b.corpusDir)
	if err != nil {
		return err
	}
	b.hookFile, b.hookSize = filepath.Base(src), size
	dir := filepath.Join(b.work, "hooks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, filepath.Base(src))
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	err = copyFile(path, f)
	f.Close()
	if err != nil {
		return err
	}
	id, err := sessionID(path)
	if err != nil {
		return err
	}
	in := func(event string, extra ...string) []byte {
		m := map[string]string{"session_id": id, "transcript_path": path, "cwd": dir, "hook_event_name": event}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		j, _ := json.Marshal(m)
		return j
	}
	events := []struct {
		name  string
		input []byte
		fresh bool // from a new ledger
	}{
		{"SessionStart (compact)", in("SessionStart", "source", "compact"), false},
		{"PreCompact", in("PreCompact", "trigger", "auto"), false},
		{"PreCompact, new ledger", in("PreCompact", "trigger", "auto"), true},
		{"PostToolUse", in("PostToolUse", "tool_name", "Bash"), false},
		{"Stop", in("Stop"), false},
		{"Stop, new ledger", in("Stop"), true},
		{"SessionEnd", in("SessionEnd", "reason", "exit"), false},
	}
	b.logf("hooks on %s (%s)", b.hookFile, mb(size))
	return b.each(func(t *target) error {
		base := freshDB(filepath.Join(dir, t.label+"-base.db"))
		if _, _, err := b.exec("", nil, "--db", base, "ingest", path); err != nil {
			return err
		}
		db := filepath.Join(dir, t.label+"-run.db")
		t.hooks = nil
		for i, ev := range events {
			prep := func() error {
				os.RemoveAll(filepath.Join(dir, "handoffs"))
				if ev.fresh {
					freshDB(db)
					return nil
				}
				return copyDB(db, base)
			}
			s, _, err := b.medianPrep(prep, "", ev.input, "--db", db, "hook")
			if err != nil {
				return fmt.Errorf("%s: %w", ev.name, err)
			}
			t.hooks = append(t.hooks, hookResult{ev.name, s})
			if err := prep(); err != nil {
				return err
			}
			b.profile(fmt.Sprintf("hook%d", i), ev.input, "--db", db, "hook")
		}
		return b.measureStatus(t, dir, base, id, path)
	})
}

// measureStatus times `ledger statusline` as Claude Code runs it after
// each message: Claude Code's status-line JSON on stdin, on a ledger that
// holds the session and a handoff of it (whose age the line shows).
func (b *bench) measureStatus(t *target, dir, base, id, path string) error {
	db := filepath.Join(dir, t.label+"-status.db")
	if err := copyDB(db, base); err != nil {
		return err
	}
	if _, _, err := b.exec("", nil, "--db", db, "compact", id, "--out", filepath.Join(dir, t.label+"-status-handoff.md")); err != nil {
		return err
	}
	in, _ := json.Marshal(map[string]any{"hook_event_name": "Status", "session_id": id, "transcript_path": path, "cwd": dir,
		"model":          map[string]any{"id": "claude-sonnet-4-5", "display_name": "Sonnet 4.5"},
		"context_window": map[string]any{"context_window_size": 200000, "current_usage": map[string]any{"input_tokens": 90000}}})
	s, out, err := b.median("", in, "--db", db, "statusline")
	if err != nil {
		return fmt.Errorf("statusline: %w", err)
	}
	if !bytes.Contains(out.head, []byte("handoff")) {
		return fmt.Errorf("statusline: no handoff in %q", out.head)
	}
	t.status = s
	b.logf("  %s: statusline %v", t.label, s.wall.Round(time.Microsecond))
	return nil
}

// copyFile writes what r holds to a new file at path, on disk when it
// returns: a copy's pages still to be written back would be waited for by
// the next fsync of the file, the measured command's (a ledger of 1.1 GB
// copied before each re-index run made its checkpoint take a second).
func copyFile(path string, r io.Reader) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func human(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return strconv.Itoa(n)
}

// peakCommand names a ledger command line in a table: its command words,
// not its paths, ids or flags.
func peakCommand(args []string) string {
	var words []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--db":
			i++
		case strings.HasPrefix(a, "-") || strings.ContainsAny(a, "/.") || len(a) > 16 || len(words) == 2:
		default:
			words = append(words, a)
		}
	}
	return "`ledger " + strings.Join(words, " ") + "`"
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

func ms(d time.Duration) string {
	f := float64(d) / float64(time.Millisecond)
	switch {
	case f < 10:
		return fmt.Sprintf("%.1f ms", f)
	case f < 10000:
		return fmt.Sprintf("%.0f ms", f)
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}
