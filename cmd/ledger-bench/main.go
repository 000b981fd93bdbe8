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
	work       string
	sizes      []int
	runs       int
	noopFiles  int
	hookMB     int
	appendMB   int
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
	var sizes string
	flag.StringVar(&c.ledger, "ledger", "", "ledger binary to measure (default: go build ./cmd/ledger into -work)")
	flag.StringVar(&c.work, "work", filepath.Join(os.TempDir(), "ledger-bench"), "folder for the binary, corpora and databases")
	flag.StringVar(&sizes, "messages", "1000,100000", "corpus sizes in messages, comma-separated (sessions of 1,000 messages)")
	flag.IntVar(&c.runs, "runs", 7, "runs of each timed command (the median is reported)")
	flag.IntVar(&c.noopFiles, "noop-files", 1000, "unchanged files in the no-op re-ingest")
	flag.IntVar(&c.hookMB, "hook-mb", 50, "size of the transcript the SessionEnd hook appends to (MB)")
	flag.IntVar(&c.appendMB, "append-mb", 1, "what is appended before the SessionEnd hook (MB)")
	flag.StringVar(&c.rg, "rg", "rg", "ripgrep binary to compare search with")
	flag.StringVar(&c.out, "out", "", "also write the table to this file")
	flag.StringVar(&c.profileDir, "profile", "", "write a CPU profile (--cpuprofile) of one extra run of each ledger command into this folder")
	flag.BoolVar(&c.clean, "clean", false, "remove the corpora and databases when done")
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
	if c.runs < 1 {
		c.runs = 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, c)
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

// bench holds the run's settings and what it measured.
type bench struct {
	config
	ctx context.Context
	// per size
	sized map[int]*sizeResult
	// size-independent
	noop       sample
	noopN      int
	hookBase   sample // ingesting the big transcript
	hookBytes  int64
	hook       sample
	hookAppend int64
	rgVersion  string
	env        []string
	peakRSS    int64
}

type sizeResult struct {
	messages, sessions int
	bytes              int64
	ingest             sample
	reingest           sample
	version            sample
	resumeID           sample
	resumeProject      sample
	resumeHandoff      sample
	search             []searchResult
	peakRSS            int64
}

type searchResult struct {
	label, query string
	ledger       sample
	hits         int
	rg           sample
	rgOK         bool
	rgLines      int
}

func run(ctx context.Context, c config) error {
	b := &bench{config: c, ctx: ctx, sized: map[int]*sizeResult{}}
	if err := os.MkdirAll(c.work, 0o755); err != nil {
		return err
	}
	if c.profileDir != "" {
		if err := os.MkdirAll(c.profileDir, 0o755); err != nil {
			return err
		}
	}
	if err := b.prepareBinary(); err != nil {
		return err
	}
	if c.prepare {
		for _, n := range c.sizes {
			if _, _, _, err := b.corpus(n); err != nil {
				return err
			}
		}
		return b.generate(filepath.Join(b.work, "noop", "files"), b.noopFiles, 20)
	}
	b.env = append(b.env, "load before: "+loadavg())
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
	if err := b.measureHook(); err != nil {
		return fmt.Errorf("hook tail ingest: %w", err)
	}
	b.env = append(b.env, "load after: "+loadavg())
	table := b.table()
	fmt.Print(table)
	if c.out != "" {
		if err := os.WriteFile(c.out, []byte(table), 0o644); err != nil {
			return err
		}
	}
	if c.clean {
		for _, d := range []string{"sessions", "corpus", "db", "noop", "hook"} {
			os.RemoveAll(filepath.Join(c.work, d))
		}
	}
	return nil
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// prepareBinary builds ledger unless -ledger names one.
func (b *bench) prepareBinary() error {
	if b.ledger != "" {
		p, err := filepath.Abs(b.ledger)
		b.ledger = p
		return err
	}
	b.ledger = filepath.Join(b.work, "ledger")
	b.logf("building %s", b.ledger)
	cmd := exec.CommandContext(b.ctx, "go", "build", "-o", b.ledger, "./cmd/ledger")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/ledger (run from the module root, or pass -ledger): %w", err)
	}
	return nil
}

// exec runs one whole process: the ledger binary (or another program when
// name is not ""), stdin from in, stdout drained through a pipe (ripgrep
// would stop at the first match if it saw /dev/null), stderr kept for
// errors.
func (b *bench) exec(name string, in []byte, args ...string) (sample, *capped, error) {
	if name == "" {
		name = b.ledger
	}
	cmd := exec.CommandContext(b.ctx, name, args...)
	if in != nil {
		cmd.Stdin = bytes.NewReader(in)
	}
	stdout := capped{keep: name == b.ledger}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
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
	if name == b.ledger {
		b.peakRSS = max(b.peakRSS, s.rss)
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && name == b.rg && ee.ExitCode() == 1 {
			return s, &stdout, nil // no match
		}
		return s, &stdout, fmt.Errorf("%s %s: %w: %s", filepath.Base(name), strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	// A hook fails open: a warning is how its failure shows.
	if name == b.ledger && bytes.Contains(stderr.Bytes(), []byte("warning")) {
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
	_, out, err := b.exec(name, in, args...)
	if err != nil {
		return sample{}, nil, err
	}
	var walls, cpus []time.Duration
	var rss int64
	for range b.runs {
		s, _, err := b.exec(name, in, args...)
		if err != nil {
			return sample{}, nil, err
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
// -profile/NAME.pprof, when -profile is set.
func (b *bench) profile(name string, in []byte, args ...string) {
	if b.profileDir == "" {
		return
	}
	p := filepath.Join(b.profileDir, name+".pprof")
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
}

// sessionJob is the corpus session i: what ledger-gen writes with the same
// index, seed and message count.
func sessionJob(root string, i, messages int) genJob {
	return genJob{Path: sessionPath(root, i), Seed: genSeed*1_000_003 + uint64(i), Messages: messages, Project: sessionProject(i)}
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
		Messages: j.Messages, CompactEvery: 400, Project: j.Project})
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
			todo = append(todo, sessionJob(root, i, messages))
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
func (b *bench) corpus(messages int) (string, int, int64, error) {
	sessions := (messages + sessionMessages - 1) / sessionMessages
	pool := filepath.Join(b.work, "sessions")
	if err := b.generate(pool, sessions, sessionMessages); err != nil {
		return "", 0, 0, err
	}
	dir := filepath.Join(b.work, "corpus", strconv.Itoa(messages))
	var total int64
	for i := range sessions {
		src, dst := sessionPath(pool, i), sessionPath(dir, i)
		fi, err := os.Stat(src)
		if err != nil {
			return "", 0, 0, err
		}
		total += fi.Size()
		if _, err := os.Stat(dst); err == nil {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", 0, 0, err
		}
		if err := os.Link(src, dst); err != nil {
			return "", 0, 0, err
		}
	}
	return dir, sessions, total, nil
}

// freshDB removes a database and its WAL files and returns its path.
func freshDB(path string) string {
	for _, suf := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suf)
	}
	return path
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

func (b *bench) measureSize(n int) error {
	r := &sizeResult{messages: n}
	b.sized[n] = r
	dir, sessions, total, err := b.corpus(n)
	if err != nil {
		return err
	}
	r.sessions, r.bytes = sessions, total
	if err := os.MkdirAll(filepath.Join(b.work, "db"), 0o755); err != nil {
		return err
	}
	db := freshDB(filepath.Join(b.work, "db", strconv.Itoa(n)+".db"))
	before := b.peakRSS
	b.peakRSS = 0
	defer func() { r.peakRSS = b.peakRSS; b.peakRSS = max(before, b.peakRSS) }()

	b.logf("%s messages: ingest %s (%d files)", human(n), mb(total), sessions)
	if r.ingest, _, err = b.exec("", nil, "--db", db, "ingest", dir); err != nil {
		return err
	}
	b.logf("  %v, %.1f MB/s, peak RSS %s", r.ingest.wall.Round(time.Millisecond), float64(total)/1e6/r.ingest.wall.Seconds(), mb(r.ingest.rss))
	if b.profileDir != "" {
		// Profiling slows it a little: a second ingest, into another database.
		pdb := freshDB(filepath.Join(b.work, "db", strconv.Itoa(n)+"-profile.db"))
		b.profile(fmt.Sprintf("ingest-%d", n), nil, "--db", pdb, "ingest", dir)
		freshDB(pdb)
	}
	if r.reingest, _, err = b.median("", nil, "--db", db, "ingest", dir); err != nil {
		return err
	}
	if r.version, _, err = b.median("", nil, "--db", db, "version"); err != nil {
		return err
	}
	b.profile(fmt.Sprintf("version-%d", n), nil, "--db", db, "version")

	id, err := sessionID(sessionPath(dir, 0))
	if err != nil {
		return err
	}
	if r.resumeID, _, err = b.median("", nil, "--db", db, "resume", id, "--format", "hook"); err != nil {
		return err
	}
	b.profile(fmt.Sprintf("resume-%d", n), nil, "--db", db, "resume", id, "--format", "hook")
	if r.resumeProject, _, err = b.median("", nil, "--db", db, "resume", "--project", sessionProject(0), "--format", "hook"); err != nil {
		return err
	}

	if err := b.measureSearch(r, dir, db); err != nil {
		return err
	}
	// Last, as it writes: resume once a handoff was written (what
	// SessionStart finds after PreCompact or `ledger compact`).
	if _, _, err := b.exec("", nil, "--db", db, "compact", id, "--out", filepath.Join(b.work, "db", fmt.Sprintf("handoff-%d.md", n))); err != nil {
		return err
	}
	if r.resumeHandoff, _, err = b.median("", nil, "--db", db, "resume", id, "--format", "hook"); err != nil {
		return err
	}
	b.profile(fmt.Sprintf("resume-handoff-%d", n), nil, "--db", db, "resume", id, "--format", "hook")
	return nil
}

// measureSearch runs ledger search and rg -i over the same corpus, query by
// query.
func (b *bench) measureSearch(r *sizeResult, dir, db string) error {
	n := r.messages
	rare, err := rareIdent(sessionPath(dir, 0))
	if err != nil {
		return err
	}
	queries := []struct{ label, q string }{
		{"rare identifier", rare},
		{"common word", "timeout"},
		{"path", "pkg/auth/session_store.go"},
	}
	for i, q := range queries {
		sr := searchResult{label: q.label, query: q.q}
		var out *capped
		if sr.ledger, out, err = b.median("", nil, "--db", db, "search", q.q, "--limit", "20", "--json"); err != nil {
			return err
		}
		var hits []json.RawMessage
		if err := json.Unmarshal(out.head, &hits); err != nil {
			return fmt.Errorf("search %q: %w", q.q, err)
		}
		sr.hits = len(hits)
		b.profile(fmt.Sprintf("search%d-%d", i, n), nil, "--db", db, "search", q.q, "--limit", "20")
		if b.rgVersion != "" {
			if sr.rg, out, err = b.median(b.rg, nil, "-i", q.q, dir); err != nil {
				return err
			}
			sr.rgOK, sr.rgLines = true, out.lines
		}
		b.logf("  search %q: ledger %v (%d hits), rg %v (%d lines)", q.q, sr.ledger.wall.Round(time.Microsecond), sr.hits,
			sr.rg.wall.Round(time.Microsecond), sr.rgLines)
		r.search = append(r.search, sr)
	}
	return nil
}

// sessionID reads the session id of a generated transcript's first record.
func sessionID(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 1<<16).ReadBytes('\n')
	if err != nil {
		return "", err
	}
	var rec struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(line, &rec); err != nil || rec.SessionID == "" {
		return "", fmt.Errorf("no session id on the first line of %s", path)
	}
	return rec.SessionID, nil
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
	db := freshDB(filepath.Join(b.work, "noop", "ledger.db"))
	b.logf("no-op re-ingest of %d files", n)
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
	b.noop = s
	b.profile("noop-ingest", nil, "--db", db, "ingest", root)
	return nil
}

// measureHook times `ledger hook` on SessionEnd after appendMB were added to
// a transcript of hookMB already ingested: the tail ingest of a session's
// end. Each run starts from a copy of the database as it was before the
// append.
func (b *bench) measureHook() error {
	dir := filepath.Join(b.work, "hook")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	const id = "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57"
	project := "/home/dev/src/payments"
	full := filepath.Join(dir, fmt.Sprintf("full-%d-%d.jsonl", b.hookMB, b.appendMB))
	h, t, err := b.hookTranscript(full, id, project, int64(b.hookMB)<<20, int64(b.appendMB)<<20)
	if err != nil {
		return err
	}
	b.hookBytes, b.hookAppend = h, t-h
	tail := make([]byte, t-h)
	src, err := os.Open(full)
	if err != nil {
		return err
	}
	defer src.Close()
	if _, err := src.ReadAt(tail, h); err != nil {
		return err
	}
	path := filepath.Join(dir, "-home-dev-src-payments", id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := copyFile(path, io.NewSectionReader(src, 0, h)); err != nil {
		return err
	}
	base := freshDB(filepath.Join(dir, "base.db"))
	b.logf("hook tail ingest: ingest %s, then append %s", mb(b.hookBytes), mb(b.hookAppend))
	if b.hookBase, _, err = b.exec("", nil, "--db", base, "ingest", path); err != nil {
		return err
	}
	in, _ := json.Marshal(map[string]string{"session_id": id, "transcript_path": path, "cwd": project,
		"hook_event_name": "SessionEnd", "reason": "exit"})
	db := filepath.Join(dir, "run.db")
	once := func(args ...string) (sample, error) {
		var err error
		freshDB(db)
		var f *os.File
		for _, suf := range []string{"", "-wal"} {
			f, err = os.Open(base + suf)
			if suf != "" && errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return sample{}, err
			}
			err = copyFile(db+suf, f)
			f.Close()
			if err != nil {
				return sample{}, err
			}
		}
		if err := os.Truncate(path, b.hookBytes); err != nil {
			return sample{}, err
		}
		f, err = os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return sample{}, err
		}
		_, err = f.Write(tail)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return sample{}, err
		}
		s, _, err := b.exec("", in, append([]string{"--db", db}, args...)...)
		return s, err
	}
	var walls []time.Duration
	for i := range b.runs + 1 {
		s, err := once("hook")
		if err != nil {
			return err
		}
		if i == 0 {
			continue // warm-up
		}
		walls = append(walls, s.wall)
		b.hook.rss = max(b.hook.rss, s.rss)
	}
	slices.Sort(walls)
	b.hook.wall = walls[len(walls)/2]
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
		if _, err := once("--cpuprofile", filepath.Join(b.profileDir, "hook-sessionend.pprof"), "hook"); err != nil {
			return err
		}
	}
	return nil
}

// hookTranscript writes one generated session to path (once: it is kept)
// and returns where to cut it at line ends: a head of at least headSize
// bytes and, up to tailEnd, the tail of at least tailSize that follows.
func (b *bench) hookTranscript(path, id, project string, headSize, tailSize int64) (head, tailEnd int64, err error) {
	if _, err := os.Stat(path); err != nil {
		// About 2,600 bytes per message; ask for a little more than needed.
		msgs := int((headSize+tailSize)/2400) + 1000
		if err := b.runJobs([]genJob{{Path: path, Seed: 42, Messages: msgs, Project: project, SessionID: id}}); err != nil {
			return 0, 0, err
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	// lineEnd is the offset just after the line holding offset from.
	lineEnd := func(from int64) (int64, error) {
		if _, err := f.Seek(from, io.SeekStart); err != nil {
			return 0, err
		}
		rest, err := bufio.NewReaderSize(f, 1<<16).ReadBytes('\n')
		if err != nil {
			return 0, fmt.Errorf("generated transcript too short: %w", err)
		}
		return from + int64(len(rest)), nil
	}
	if head, err = lineEnd(headSize); err != nil {
		return 0, 0, err
	}
	tailEnd, err = lineEnd(head + tailSize)
	return head, tailEnd, err
}

// copyFile writes what r holds to a new file at path.
func copyFile(path string, r io.Reader) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
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
