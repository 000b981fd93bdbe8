//go:build unix

package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/store/storetest"
	"github.com/agentledger/ledger/transcript"
)

// The reliability tests run the real binary as separate processes: several
// processes on one database is what users do (ingest in a terminal while
// the agent's hooks fire), and goroutines sharing one pool would not meet
// the file locks that processes meet.

// proc is a running ledger process.
type proc struct {
	name       string
	cmd        *exec.Cmd
	out, errb  bytes.Buffer
	started    time.Time
	ended      time.Time     // when Wait returned, set before done is closed
	done       chan struct{} // closed when the process has exited
	err        error         // from Wait
	exitCode   int
	exitSignal bool
}

func binEnv(home string) []string {
	return []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "XDG_STATE_HOME=" + filepath.Join(home, ".state")}
}

// startBin starts the built binary as runBin would run it, without waiting.
func startBin(t *testing.T, home, stdin string, args ...string) *proc {
	t.Helper()
	p := &proc{name: strings.Join(args, " "), done: make(chan struct{})}
	p.cmd = exec.Command(ledgerBin, args...)
	p.cmd.Env = binEnv(home)
	p.cmd.Stdin = strings.NewReader(stdin)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.errb
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start ledger %s: %v", p.name, err)
	}
	p.started = time.Now()
	go func() {
		p.err = p.cmd.Wait()
		p.ended = time.Now()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// exited tells whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits for the process and notes how it ended.
func (p *proc) wait(t *testing.T) {
	t.Helper()
	<-p.done
	var ee *exec.ExitError
	switch {
	case p.err == nil:
	case errors.As(p.err, &ee):
		p.exitCode = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			p.exitSignal = true
		}
	default:
		t.Fatalf("wait for ledger %s: %v", p.name, p.err)
	}
}

// wantClean fails the test unless the process exited 0 with nothing on
// stderr: no error, and no warning either (a hook fails open, so a warning
// is how its failures show).
func (p *proc) wantClean(t *testing.T) {
	t.Helper()
	if p.exitCode != 0 || p.errb.Len() != 0 {
		t.Errorf("ledger %s: exit %d, stderr %q", p.name, p.exitCode, p.errb.String())
	}
}

// generate appends a generated Claude Code transcript part to path.
func generate(t *testing.T, path string, o transcript.GenOptions) {
	t.Helper()
	var buf bytes.Buffer
	if err := transcript.Generate(&buf, o); err != nil {
		t.Fatal(err)
	}
	appendFile(t, path, buf.Bytes())
}

func appendFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// tally is what a session should hold.
type tally struct{ Messages, Compactions int }

// expectedCounts reads transcripts with the transcript package, apart from
// the binary and its database: distinct message uuids and compaction
// boundaries per session, which is what an exact ingest stores.
func expectedCounts(t *testing.T, paths ...string) map[string]tally {
	t.Helper()
	msgs, bounds := map[string]map[string]bool{}, map[string]map[string]bool{}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		format, err := transcript.Detect(f)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if _, err := f.Seek(0, 0); err != nil {
			t.Fatal(err)
		}
		st := &transcript.State{Format: format, SessionID: transcript.SessionHint(p)}
		_, err = transcript.Read(context.Background(), f, st, 0, 1, func(r transcript.Record) error {
			if m := r.Message; m != nil {
				if msgs[m.SessionID] == nil {
					msgs[m.SessionID] = map[string]bool{}
				}
				msgs[m.SessionID][m.UUID] = true
			}
			if b := r.Boundary; b != nil {
				if bounds[b.SessionID] == nil {
					bounds[b.SessionID] = map[string]bool{}
				}
				bounds[b.SessionID][b.UUID] = true
			}
			return nil
		})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	out := map[string]tally{}
	for s, m := range msgs {
		out[s] = tally{len(m), len(bounds[s])}
	}
	for s, b := range bounds {
		out[s] = tally{len(msgs[s]), len(b)}
	}
	return out
}

// storedCounts is what `ledger sessions --json` says each session holds.
func storedCounts(t *testing.T, home, db string) map[string]tally {
	t.Helper()
	r := runBin(t, home, "", "--db", db, "sessions", "--json", "--limit", "1000")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("sessions: exit %d, stderr %q", r.code, r.stderr)
	}
	var list []struct {
		ID          string `json:"id"`
		Messages    int    `json:"messages"`
		Compactions int    `json:"compactions"`
	}
	decodeJSON(t, r.stdout, &list)
	out := map[string]tally{}
	for _, s := range list {
		out[s.ID] = tally{s.Messages, s.Compactions}
	}
	return out
}

func sameCounts(t *testing.T, what string, got, want map[string]tally) {
	t.Helper()
	for id, w := range want {
		if g := got[id]; g != w {
			t.Errorf("%s: session %s holds %+v, want %+v", what, id, g, w)
		}
	}
	for id, g := range got {
		if _, ok := want[id]; !ok {
			t.Errorf("%s: unexpected session %s %+v", what, id, g)
		}
	}
}

// wantHealthy runs `ledger doctor --json`: SQLite's integrity_check and
// FTS5's integrity-check of every index must say ok.
func wantHealthy(t *testing.T, home, db string) {
	t.Helper()
	r := runBin(t, home, "", "--db", db, "doctor", "--json")
	if r.code != 0 {
		t.Fatalf("doctor: exit %d, %s", r.code, r.stderr)
	}
	var h struct {
		Integrity string `json:"integrity"`
		FTS       string `json:"fts"`
	}
	decodeJSON(t, r.stdout, &h)
	if h.Integrity != "ok" || h.FTS != "ok" {
		t.Errorf("doctor: integrity %q, fts %q; want ok, ok", h.Integrity, h.FTS)
	}
}

// wantNoDuplicates opens the database directly (no store.Open: its
// migration check is not this one's subject): per session, as many
// messages as distinct uuids, and the session row's counters equal to the
// rows it has.
func wantNoDuplicates(t *testing.T, db string) {
	t.Helper()
	conn := rawDB(t, db)
	defer conn.Close()
	var rows []struct {
		ID       string `db:"id"`
		Rows     int    `db:"n"`
		Distinct int    `db:"distinct_uuids"`
		Counter  int    `db:"counter"`
		Compacts int    `db:"compacts"`
		CCounter int    `db:"ccounter"`
	}
	if err := conn.Select(&rows, `SELECT s.id,
		(SELECT count(*) FROM messages m WHERE m.session_id = s.id) AS n,
		(SELECT count(DISTINCT uuid) FROM messages m WHERE m.session_id = s.id) AS distinct_uuids,
		s.messages AS counter,
		(SELECT count(*) FROM compactions c WHERE c.session_id = s.id) AS compacts,
		s.compactions AS ccounter
		FROM sessions s`); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Rows != r.Distinct || r.Rows != r.Counter || r.Compacts != r.CCounter {
			t.Errorf("session %s: %d message rows, %d distinct uuids, counter %d; %d compactions, counter %d",
				r.ID, r.Rows, r.Distinct, r.Counter, r.Compacts, r.CCounter)
		}
	}
}

func sessionUUID(n, kind int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", n, kind) }

// TestConcurrentWriters starts, at once, 8 `ledger ingest` processes of
// different sessions and a stream of `ledger hook` Stop events of one
// shared session whose transcript grows between them (cut mid-line, as a
// live transcript is), all on one new database. Every process must exit 0
// with nothing on stderr, the hook must log nothing, and the ledger must
// hold exactly what the transcripts say, with a clean integrity check.
// Two rounds: a new database raced to by every process, then the same
// files grown and ingested again from their cursors.
func TestConcurrentWriters(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs many processes")
	}
	const (
		ingests      = 8
		rounds       = 2
		messages     = 300 // per session and round
		hooksPerPart = 6
	)
	home := t.TempDir()
	db := filepath.Join(home, "data", "ledger.db")
	projects := filepath.Join(home, "projects")
	files := make([]string, ingests)
	for i := range files {
		files[i] = filepath.Join(projects, fmt.Sprintf("-p%d", i), sessionUUID(i, 1)+".jsonl")
	}
	sharedID := sessionUUID(99, 2)
	shared := filepath.Join(projects, "-shared", sharedID+".jsonl")
	cwd := filepath.Join(home, "work")
	hookIn, _ := json.Marshal(map[string]any{"session_id": sharedID, "transcript_path": shared, "cwd": cwd,
		"hook_event_name": "Stop", "stop_hook_active": false, "permission_mode": "default"})

	start := time.Now()
	for round := range rounds {
		seed := uint64(round*1000 + 1)
		for i, f := range files {
			generate(t, f, transcript.GenOptions{Seed: seed + uint64(i), SessionID: sessionUUID(i, 1),
				Project: fmt.Sprintf("/home/dev/src/p%d", i), Messages: messages, CompactEvery: 120, Shape: transcript.GenReal})
		}
		var part bytes.Buffer
		if err := transcript.Generate(&part, transcript.GenOptions{Seed: seed + 500, SessionID: sharedID,
			Project: cwd, Messages: messages, CompactEvery: 120, Shape: transcript.GenReal}); err != nil {
			t.Fatal(err)
		}

		var procs []*proc
		for _, f := range files {
			procs = append(procs, startBin(t, home, "", "--db", db, "ingest", "--json", f))
		}
		// The shared transcript grows in pieces cut anywhere (mid-line too);
		// a Stop hook fires after each, while the earlier ones may still run.
		// The last piece ends the part, so the last hook sees every line.
		b := part.Bytes()
		for k := range hooksPerPart {
			appendFile(t, shared, b[len(b)*k/hooksPerPart:len(b)*(k+1)/hooksPerPart])
			procs = append(procs, startBin(t, home, string(hookIn), "--db", db, "hook"))
			time.Sleep(15 * time.Millisecond)
		}
		for _, p := range procs {
			p.wait(t)
			if p.name == "--db "+db+" hook" && p.exitCode == 0 && strings.Contains(p.errb.String(), " spent after ") {
				continue // out of budget on a busy machine: counted below
			}
			p.wantClean(t)
		}
		if t.Failed() {
			t.FailNow()
		}
		// A hook that met the write lock held past its share of the 1 s
		// budget left the new lines for the next event: more events, alone,
		// until one has read them all (the first, unless the machine is too
		// busy to read 300 messages in a budget). Lines lost would never
		// come.
		want := expectedCounts(t, append([]string{shared}, files...)...)
		for runs := 1; ; runs++ {
			last := startBin(t, home, string(hookIn), "--db", db, "hook")
			last.wait(t)
			last.wantClean(t)
			if got := storedCounts(t, home, db); got[sharedID] == want[sharedID] || runs == 10 {
				sameCounts(t, fmt.Sprintf("round %d, after %d more Stop events", round+1, runs), got, want)
				break
			}
		}
	}
	t.Logf("%d rounds of %d ingests and %d hooks: %v", rounds, ingests, hooksPerPart, time.Since(start).Round(time.Millisecond))
	// No hook failed; some may have left their work for the next event,
	// their receipts in the log (the ledger being locked at their end):
	// deferred, or, on a machine too busy for the hooks among the 8
	// ingests (2 cores under go test), out of budget before the work was
	// done (a timeout, or a failure at its deadline, with its warning:
	// rolled back, left for the next event as well; the counts above are
	// what proves nothing was lost).
	if b, err := os.ReadFile(filepath.Join(home, ".state", "ledger", "hook.log")); !errors.Is(err, fs.ErrNotExist) {
		left := map[string]int{}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			outcome := ""
			for _, o := range []string{"ok", "deferred", "timeout"} {
				if strings.Contains(l, `"outcome":"`+o+`"`) {
					outcome = o
				}
			}
			if strings.Contains(l, `"outcome":"failed"`) && strings.Contains(l, " spent after ") {
				outcome = "timeout"
			}
			switch receipt := strings.Contains(l, " receipt "); {
			case receipt && outcome != "":
				left[outcome]++
			case !receipt && strings.Contains(l, " spent after "): // that run's warning
			default:
				t.Errorf("the hook logged a failure: %s", l)
			}
		}
		t.Logf("%d hook runs left their work for the next event, %d ran out of budget", left["deferred"], left["timeout"])
	}
	wantHealthy(t, home, db)
	wantNoDuplicates(t, db)
	// Running it all again adds nothing.
	again := ingestBin(t, home, db, projects)
	if again.Messages != 0 || again.Compactions != 0 || again.Sessions != 0 {
		t.Errorf("ingest after the rounds added %+v, want nothing", again)
	}
}

// TestKillDuringIngest kills `ledger ingest` with SIGKILL at each stage of
// an ingest that commits in two batches (an ingest reads files into one
// transaction until it holds about 10,000 messages, the engine's
// batchMessages): while it migrates a new database; inside the first
// batch's transaction, reading its files; during its FTS indexing, its
// files read and nothing of it in the WAL; while its pages go to the WAL,
// uncommitted; once it is committed, before the second batch has
// committed anything; inside the second batch's transaction, reading its
// file; and after the last commit, while the sessions' resume states are
// made. Where a point is seen the process is stopped (SIGSTOP), and the
// point is checked on the stopped process (what another connection reads
// as committed, which transcript it holds open and how far it has read
// it) before the kill: each kill is proven to land where it says. A stop
// that came too late (a busy machine) is run again from the same state.
//
// The kills go one after another into one database, each run taking on
// what the last left. After each kill a copy of that database must pass
// SQLite's and FTS5's integrity checks, and another ingest must finish it
// into exactly a clean ingest's messages (the same rows in the same order,
// no duplicates); so must the database of all the kills, at the end.
func TestKillDuringIngest(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("sees the ingest's open transcripts in /proc")
	}
	home, err := filepath.EvalSymlinks(t.TempDir()) // the paths /proc shows
	if err != nil {
		t.Fatal(err)
	}
	// The first batch: four files of one generated session (only the
	// session id differs: generating each under the race detector would
	// cost more than the ingests), the last of them taking the batch over
	// batchMessages. The second batch: one smaller file.
	const template = "00000000-0000-4000-8000-0000000000ff"
	var part bytes.Buffer
	if err := transcript.Generate(&part, transcript.GenOptions{Seed: 7000, SessionID: template,
		Project: "/home/dev/src/k", Messages: 2600, CompactEvery: 500, Shape: transcript.GenReal}); err != nil {
		t.Fatal(err)
	}
	const batchMessages = 10_000 // the engine's
	var files []string
	for i := range 4 {
		f := filepath.Join(home, "corpus", fmt.Sprintf("-k%d", i), sessionUUID(i, 3)+".jsonl")
		appendFile(t, f, bytes.ReplaceAll(part.Bytes(), []byte(template), []byte(sessionUUID(i, 3))))
		files = append(files, f)
	}
	each := expectedCounts(t, files[0])[sessionUUID(0, 3)]
	want := map[string]tally{}
	for i := range 4 {
		want[sessionUUID(i, 3)] = each
	}
	if 3*each.Messages >= batchMessages || 4*each.Messages < batchMessages {
		t.Fatalf("each file holds %d messages: the first batch would not be the four files", each.Messages)
	}
	last := sessionUUID(4, 3)
	files = append(files, filepath.Join(home, "corpus", "-k4", last+".jsonl"))
	generate(t, files[4], transcript.GenOptions{Seed: 7001, SessionID: last, Project: "/home/dev/src/k",
		Messages: 2000, CompactEvery: 500, Shape: transcript.GenReal})
	want[last] = expectedCounts(t, files[4])[last]
	batch1, total := 4*each.Messages, 4*each.Messages+want[last].Messages
	size5 := fileSize(files[4])

	clean := storetest.MigratedFile(t, filepath.Join(home, "clean.db"))
	ingestBin(t, home, clean, files...)
	sameCounts(t, "clean ingest", storedCounts(t, home, clean), want)
	cleanRows := messageRows(t, clean)

	committed := func(n int) func(w *ingestWatch) error {
		return func(w *ingestWatch) error {
			if w.committed != n {
				return fmt.Errorf("%d messages committed, want %d", w.committed, n)
			}
			return nil
		}
	}
	points := []struct {
		name  string
		after int                        // the point whose kill it starts from (-1: none)
		when  func(w *ingestWatch) bool  // seen on the running process: stop it
		is    func(w *ingestWatch) error // on the stopped process: the point reached
	}{
		{"migrating a new database", -1,
			func(w *ingestWatch) bool { return fileSize(w.db) >= 0 },
			func(w *ingestWatch) error {
				if len(w.seen) > 0 {
					return fmt.Errorf("already reading %v", w.seen)
				}
				return nil
			}},
		{"inside the first batch's transaction", 0,
			func(w *ingestWatch) bool { return w.open == files[1] },
			func(w *ingestWatch) error {
				if w.open != files[1] && w.open != files[2] && w.open != files[3] {
					return fmt.Errorf("holds %q open, not the first batch's second to fourth files", w.open)
				}
				return committed(0)(w)
			}},
		{"the first batch's FTS index, before its commit", 1,
			func(w *ingestWatch) bool { return w.seen[files[3]] && w.open == "" },
			func(w *ingestWatch) error {
				if !w.seen[files[3]] || w.open != "" || w.walChanged() {
					return fmt.Errorf("holds %q open (last file seen: %v), WAL changed: %v", w.open, w.seen[files[3]], w.walChanged())
				}
				return committed(0)(w)
			}},
		{"the first batch's pages in the WAL, uncommitted", 2,
			func(w *ingestWatch) bool { return w.seen[files[3]] && w.walChanged() },
			func(w *ingestWatch) error {
				if !w.walChanged() {
					return fmt.Errorf("nothing written to the WAL")
				}
				return committed(0)(w)
			}},
		{"between the batches", 3,
			func(w *ingestWatch) bool { return w.committed > 0 },
			committed(batch1)},
		{"inside the second batch's transaction", 4,
			func(w *ingestWatch) bool { return w.open == files[4] && w.pos[files[4]] >= size5/2 },
			func(w *ingestWatch) error {
				if w.open != files[4] {
					return fmt.Errorf("holds %q open, not the second batch's file", w.open)
				}
				return committed(batch1)(w)
			}},
		{"making the resume states after the last commit", 3,
			func(w *ingestWatch) bool { return w.committed == total && w.resumeStates == 0 },
			func(w *ingestWatch) error {
				if w.resumeStates != 0 {
					return fmt.Errorf("%d resume states saved", w.resumeStates)
				}
				return committed(total)(w)
			}},
	}
	// finished runs another ingest into db and checks it healthy and
	// holding exactly the clean ingest's messages.
	finished := func(t *testing.T, what, db string) {
		t.Helper()
		ingestBin(t, home, db, files...)
		wantHealthy(t, home, db)
		sameCounts(t, what, storedCounts(t, home, db), want)
		wantNoDuplicates(t, db)
		if got := messageRows(t, db); !slices.Equal(got, cleanRows) {
			t.Errorf("%s: %d message rows differ from the clean ingest's %d", what, len(got), len(cleanRows))
		}
	}
	// finish checks a copy of what a kill left: healthy, then finished by
	// another ingest into exactly the clean ingest's messages.
	finish := func(t *testing.T, db, as string) {
		t.Helper()
		copyLedger(t, db, as)
		wantHealthy(t, home, as)
		finished(t, "finished", as)
	}
	// Each run starts from what an earlier kill left (left(i), the
	// database as it was killed): the kills follow one another, and the
	// last starts again from the first batch's uncommitted pages in the
	// WAL, so that it has the five sessions' resume states to make.
	chain := filepath.Join(home, "kills.db")
	left := func(i int) string { return filepath.Join(home, fmt.Sprintf("killed-%d.db", i)) }
	for i, pt := range points {
		ok := t.Run(pt.name, func(t *testing.T) {
			from := ""
			if pt.after >= 0 {
				from = left(pt.after)
			}
			for attempt := 1; ; attempt++ {
				removeLedger(t, chain)
				if from != "" {
					copyLedger(t, from, chain)
				}
				w, err := killAt(t, home, chain, files, pt.when, pt.is)
				if err == nil {
					t.Logf("killed in run %d: %d of %d messages committed, %q open at %d, WAL %d bytes",
						attempt, w.committed, total, cmpOr(strings.TrimPrefix(w.open, filepath.Dir(w.open)+"/"), "nothing"), w.pos[w.open], w.wal.size)
					break
				}
				if attempt == 5 {
					t.Fatalf("not reached in %d runs: %v", attempt, err)
				}
				t.Logf("run %d: %v; again", attempt, err)
			}
			copyLedger(t, chain, left(i))
			if from != "" && sameFiles(t, from, chain) {
				// Killed before it wrote anything: the files are those
				// of the kill it started from, whose finish was checked.
				t.Logf("the database and its WAL are as the run found them")
				return
			}
			finish(t, chain, filepath.Join(home, fmt.Sprintf("finish-%d.db", i)))
		})
		if !ok {
			t.FailNow()
		}
	}
	// The database of all the kills, finished.
	finished(t, "after all the kills and a last run", chain)
}

// killAt runs an ingest of files into db, stops it (SIGSTOP) once when
// says so, and kills it (SIGKILL) there: the error says why the stopped
// process was not at the point is checks (or had ended before).
func killAt(t *testing.T, home, db string, files []string, when func(*ingestWatch) bool, is func(*ingestWatch) error) (*ingestWatch, error) {
	t.Helper()
	p := startBin(t, home, "", append([]string{"--db", db, "ingest", "--json"}, files...)...)
	w := &ingestWatch{db: db, pid: p.cmd.Process.Pid, files: map[string]bool{}, seen: map[string]bool{}, pos: map[string]int64{}}
	defer w.close()
	for _, f := range files {
		w.files[f] = true
	}
	w.start = w.walNow()
	w.look(false)
	for !p.exited() && !when(w) {
		time.Sleep(time.Millisecond)
		w.look(false)
	}
	var err error
	if p.exited() {
		err = errors.New("the ingest ended first")
	} else {
		p.cmd.Process.Signal(syscall.SIGSTOP)
		for !p.exited() && !stopped(p.cmd.Process.Pid) {
			time.Sleep(100 * time.Microsecond)
		}
		if p.exited() {
			err = errors.New("the ingest ended first")
		} else {
			w.look(true)
			err = is(w)
		}
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.wait(t)
	if !p.exitSignal && p.exitCode != 0 {
		t.Fatalf("ingest failed before the kill: exit %d, %s", p.exitCode, p.errb.String())
	}
	return w, err
}

// stopped tells whether the process is stopped by a signal.
func stopped(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && (s[i+2] == 'T' || s[i+2] == 't')
}

// ingestWatch looks at an ingest from outside: the transcripts it holds
// open (/proc) and how far it has read them, its WAL, and, through a
// read-only connection (a WAL reader does not block the writer), what it
// has committed.
type ingestWatch struct {
	db    string
	pid   int
	files map[string]bool // the transcripts it reads
	// seen are the transcripts seen open, pos how far each was read, open
	// the one open at the last look ("" none).
	seen map[string]bool
	pos  map[string]int64
	open string
	// start is the WAL when the run began, wal at the last look; the
	// committed counts are read again whenever the WAL changes.
	start, wal   walStamp
	conn         *sql.DB
	committed    int // messages
	resumeStates int
}

// walStamp is a WAL file's size and time: a WAL that was checkpointed
// whole is written again from its start, its size unchanged.
type walStamp struct {
	size int64
	mod  time.Time
}

func (w *ingestWatch) walNow() walStamp {
	fi, err := os.Stat(w.db + "-wal")
	if err != nil {
		return walStamp{size: -1}
	}
	return walStamp{fi.Size(), fi.ModTime()}
}

// walChanged tells whether the run has written to the WAL.
func (w *ingestWatch) walChanged() bool { return w.wal != w.start }

// look reads the process's state; force reads the committed counts even
// if the WAL has not changed.
func (w *ingestWatch) look(force bool) {
	dir := fmt.Sprintf("/proc/%d/fd", w.pid)
	w.open = ""
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil || !w.files[target] {
			continue
		}
		w.open, w.seen[target] = target, true
		info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", w.pid, e.Name()))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(info), "\n") {
			var pos int64
			if _, err := fmt.Sscanf(l, "pos: %d", &pos); err == nil && pos > w.pos[target] {
				w.pos[target] = pos
			}
		}
	}
	if now := w.walNow(); now != w.wal || force {
		w.wal = now
		w.readCommitted()
	}
}

func (w *ingestWatch) readCommitted() {
	if w.conn == nil {
		if _, err := os.Stat(w.db); err != nil {
			return
		}
		c, err := sql.Open("sqlite", "file:"+w.db+"?mode=ro&_pragma=busy_timeout(50)")
		if err != nil {
			return
		}
		w.conn = c
	}
	var n int
	if w.conn.QueryRow(`SELECT count(*) FROM messages`).Scan(&n) == nil {
		w.committed = n
	}
	if w.conn.QueryRow(`SELECT count(*) FROM resume_states`).Scan(&n) == nil {
		w.resumeStates = n
	}
}

func (w *ingestWatch) close() {
	if w.conn != nil {
		w.conn.Close()
	}
}

// fileSize is path's size, -1 if there is none.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return fi.Size()
}

// copyLedger copies a SQLite ledger's files as a killed process left
// them (the database, its WAL and shared memory), replacing dst's.
func copyLedger(t *testing.T, src, dst string) {
	t.Helper()
	removeLedger(t, dst)
	for _, ext := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(src + ext)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst+ext, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// sameFiles tells whether two ledgers' database and WAL files hold the
// same bytes.
func sameFiles(t *testing.T, a, b string) bool {
	t.Helper()
	for _, ext := range []string{"", "-wal"} {
		x, errx := os.ReadFile(a + ext)
		y, erry := os.ReadFile(b + ext)
		if errx != nil || erry != nil || !bytes.Equal(x, y) {
			return false
		}
	}
	return true
}

func removeLedger(t *testing.T, db string) {
	t.Helper()
	for _, ext := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(db + ext); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
}

// messageRows lists a ledger's messages in their sessions' order: what
// makes two ingests' messages the same (their text by length and start).
func messageRows(t *testing.T, db string) []string {
	t.Helper()
	var rows []string
	if err := rawDB(t, db).Select(&rows, `SELECT session_id || ' ' || seq || ' ' || uuid || ' ' || role || ' ' || kind || ' ' ||
		length(text) || ' ' || substr(text, 1, 40) FROM messages ORDER BY session_id, seq`); err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestOwnerOnlyFiles runs what creates files (ingest, compact with and
// without a project folder, a failing hook, hooks install/uninstall, the
// database at its default place) under umask 0, so that a file or folder
// created without an explicit owner-only mode shows up, then walks the
// temp HOME: nothing may be readable or writable by group or others.
func TestOwnerOnlyFiles(t *testing.T) {
	t.Parallel()
	home := t.TempDir() // before the umask: its folders are the testing package's
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	project := filepath.Join(home, "src", "app")
	if err := os.MkdirAll(project, 0o700); err != nil {
		t.Fatal(err)
	}
	inProject, elsewhere := sessionUUID(1, 4), sessionUUID(2, 4)
	tr := filepath.Join(home, ".claude", "projects", "-src-app")
	generate(t, filepath.Join(tr, inProject+".jsonl"), transcript.GenOptions{Seed: 1, SessionID: inProject,
		Project: project, Messages: 40})
	generate(t, filepath.Join(tr, elsewhere+".jsonl"), transcript.GenOptions{Seed: 2, SessionID: elsewhere,
		Project: filepath.Join(home, "gone"), Messages: 40})

	steps := []struct {
		stdin string
		args  []string
	}{
		{"", []string{"ingest", filepath.Join(home, ".claude", "projects")}}, // the db at ~/.local/share/ledger
		{"", []string{"compact", inProject}},                                 // ~/.local/share/ledger/handoffs/<project>/...
		{"", []string{"compact", elsewhere}},                                 // ~/.local/share/ledger/handoffs/...
		{"not json", []string{"hook"}},                                       // $XDG_STATE_HOME/ledger/hook.log
		{"", []string{"hooks", "install"}},                                   // ~/.claude/settings.json
		{"", []string{"hooks", "install", "--mode", "clear"}},                // settings.json.bak
		{"", []string{"--db", filepath.Join(home, "other", "l.db"), "init"}}, // a --db folder
	}
	for _, s := range steps {
		r := runBin(t, home, s.stdin, s.args...)
		if r.code != 0 {
			t.Fatalf("ledger %s: exit %d, %s", strings.Join(s.args, " "), r.code, r.stderr)
		}
	}
	for _, p := range []string{
		filepath.Join(home, ".local", "share", "ledger", "ledger.db"),
		filepath.Join(home, ".local", "share", "ledger", "handoffs", engine.ProjectDirName(filepath.Join(home, "gone")), elsewhere),
		filepath.Join(home, ".local", "share", "ledger", "handoffs", engine.ProjectDirName(project), inProject),
		filepath.Join(home, ".state", "ledger", "hook.log"),
		filepath.Join(home, ".claude", "settings.json"),
		filepath.Join(home, ".claude", "settings.json.bak"),
	} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("expected ledger to create %s: %v", p, err)
		}
	}
	// The WAL and shm files exist only while a connection is open: hold one.
	s, err := store.Open(context.Background(), filepath.Join(home, ".local", "share", "ledger", "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var n int
	if err := rawDB(t, s.Path()).Get(&n, `SELECT count(*) FROM sessions`); err != nil || n != 2 {
		t.Fatalf("sessions: %d, %v", n, err)
	}
	for _, ext := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(s.Path() + ext); err != nil {
			t.Errorf("no %s file while the database is open: %v", ext, err)
		}
	}
	checked := 0
	err = filepath.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if path == home {
			return nil // made by the testing package
		}
		checked++
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v: readable or writable by others", path, fi.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d files and folders checked", checked)
}

// TestIngestBadLines: one transcript holding every kind of bad line the
// README's reliability table lists. The good lines land, the bad ones are
// skipped and reported (or repaired), nothing is fatal, and a last line
// still being written waits for the next run.
func TestIngestBadLines(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	session := sessionUUID(5, 5)
	msg := func(uuid, role, text string) string {
		b, _ := json.Marshal(map[string]any{"type": role, "uuid": uuid, "sessionId": session, "cwd": "/tmp/bad",
			"timestamp": "2026-03-03T00:00:01Z", "message": map[string]any{"role": role, "content": text}})
		return string(b) + "\n"
	}
	// 20 MB in 20,000 long words: a dump of encoded data, say (millions of
	// short words would time FTS5's indexing rather than ledger).
	huge := strings.Repeat(strings.Repeat("x", 1023)+" ", 20<<10) + "needle"
	last := msg("u7", "user", "the last line, still being written")
	lines := []string{
		msg("u1", "user", "first"),
		"{not json\n",
		"[1,2,3]\n",
		strings.Replace(msg("u3", "user", "bad utf8 here: X end"), "X", "\xff\xfe", 1),
		strings.Replace(msg("u4", "user", "nul bytes: X end"), "X", "\x00\x00", 1),
		msg("u4e", "user", "escaped nul: \x00 end"), // json.Marshal writes the NUL as \u0000
		`{"type":"brand-new-kind","sessionId":"` + session + `","whatever":[1]}` + "\n",
		msg("u5", "user", huge),
		msg("u6", "assistant", "after the junk"),
		last[:len(last)/2],
	}
	dir := filepath.Join(home, "in")
	path := filepath.Join(dir, session+".jsonl")
	appendFile(t, path, []byte(strings.Join(lines, "")))
	appendFile(t, filepath.Join(dir, "empty.jsonl"), nil)

	got := ingestBin(t, home, db, dir)
	if got.Messages != 6 || got.SkippedLines != 2 || len(got.Skips) != 2 ||
		got.Skips[0].Line != 2 || got.Skips[0].Reason != "invalid json" ||
		got.Skips[1].Line != 3 || got.Skips[1].Reason != "not a claude record" || len(got.Unrecognized) != 0 {
		t.Errorf("ingest = %+v; want 6 messages, lines 2 (invalid json) and 3 (not a claude record) skipped", got)
	}
	s, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var texts []string
	if err := rawDB(t, s.Path()).Select(&texts, `SELECT text FROM messages WHERE uuid IN ('u3', 'u4', 'u4e') ORDER BY uuid`); err != nil {
		t.Fatal(err)
	}
	if want := []string{"bad utf8 here: \uFFFD end", "nul bytes:  end", "escaped nul:  end"}; !slicesEqual(texts, want) {
		t.Errorf("repaired texts = %q, want %q", texts, want)
	}
	// The 20 MB text is kept as its first MB and last 64 KB around a marker
	// with the sizes: memory stays bounded, and its end stays searchable.
	var stored string
	if err := rawDB(t, s.Path()).Get(&stored, `SELECT text FROM messages WHERE uuid = 'u5'`); err != nil ||
		len(stored) > 1200<<10 || !strings.Contains(stored, fmt.Sprintf(" bytes cut from this text of %d bytes]", len(huge))) ||
		!strings.HasSuffix(stored, "needle") {
		t.Errorf("20 MB message stored as %d bytes (%v): %.80q...%.80q", len(stored), err, stored, stored[max(0, len(stored)-80):])
	}
	r := runBin(t, home, "", "--db", db, "search", "--json", "needle")
	if r.code != 0 || !strings.Contains(r.stdout, `"session": "`+session) {
		t.Errorf("search for the 20 MB line's last word: exit %d, %.200s %s", r.code, r.stdout, r.stderr)
	}
	if r := runBin(t, home, "", "--db", db, "search", "--json", "escaped"); !strings.Contains(r.stdout, "escaped nul:  end") {
		t.Errorf("search finds the NUL's message as %.300s", r.stdout)
	}
	// The cut last line is completed: the next run reads it, and only it.
	appendFile(t, path, []byte(last[len(last)/2:]))
	if again := ingestBin(t, home, db, dir); again.Messages != 1 || again.SkippedLines != 0 {
		t.Errorf("after the last line completed: %+v, want 1 message and no skips", again)
	}
	// An empty file named on its own is not an error either.
	if r := runBin(t, home, "", "--db", db, "ingest", "--json", filepath.Join(dir, "empty.jsonl")); r.code != 0 || r.stderr != "" {
		t.Errorf("ingest of an empty file: exit %d, %q", r.code, r.stderr)
	}
	wantHealthy(t, home, db)
}

func slicesEqual(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00") && len(a) == len(b)
}

// TestHookBadInput adds to TestHookFailsOpen the other bad inputs of the
// README's table, each with the warning it gets: `ledger hook` exits 0
// with one warning line on stderr and the same line in the hook log.
func TestHookBadInput(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	notDir := filepath.Join(home, "file")
	appendFile(t, notDir, []byte("x"))
	garbage := filepath.Join(home, "garbage.db")
	appendFile(t, garbage, bytes.Repeat([]byte("not a database "), 1000))
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	stop := func(extra string) string {
		return `{"hook_event_name":"Stop","session_id":"s","cwd":"/tmp"` + extra + `}`
	}
	tests := []struct {
		name, stdin, db, warning string
	}{
		{"garbage", "not json", db, "hook input is not JSON"},
		{"over 4 MB", stop(`,"x":"` + strings.Repeat("x", 4<<20) + `"`), db, "hook input larger than"},
		{"no event", `{"session_id":"s"}`, db, "hook input has no hook_event_name"},
		{"no transcript_path", stop(""), db, "Stop: hook input has no transcript_path"},
		{"database folder is a file", stop(`,"transcript_path":"/x.jsonl"`), filepath.Join(notDir, "l.db"), "create database folder"},
		{"database is not a database", stop(`,"transcript_path":"/x.jsonl"`), garbage, "is not a SQLite database"},
	}
	log := filepath.Join(home, ".state", "ledger", "hook.log")
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runBin(t, home, tc.stdin, "--db", tc.db, "hook")
			if r.code != 0 || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "ledger: warning: ") ||
				!strings.Contains(r.stderr, tc.warning) {
				t.Errorf("exit %d, stderr %q; want exit 0 and one warning with %q", r.code, r.stderr, tc.warning)
			}
			// One warning line per failure; the log also holds the receipts
			// of runs that could not write theirs to the ledger.
			b, _ := os.ReadFile(log)
			var lines []string
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				if !strings.Contains(l, " receipt {") {
					lines = append(lines, l)
				}
			}
			if len(lines) != i+1 || !strings.Contains(lines[i], tc.warning) {
				t.Errorf("hook log has %d warning lines, the last %q; want %d, with %q", len(lines), lines[len(lines)-1], i+1, tc.warning)
			}
		})
	}
	// An event ledger does not handle is no failure at all.
	if r := runBin(t, home, `{"hook_event_name":"Notification","session_id":"s"}`, "--db", db, "hook"); r.code != 0 || r.stderr != "" {
		t.Errorf("unhandled event: exit %d, %q", r.code, r.stderr)
	}
}
