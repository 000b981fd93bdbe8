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
				Project: fmt.Sprintf("/home/dev/src/p%d", i), Messages: messages, CompactEvery: 120})
		}
		var part bytes.Buffer
		if err := transcript.Generate(&part, transcript.GenOptions{Seed: seed + 500, SessionID: sharedID,
			Project: cwd, Messages: messages, CompactEvery: 120}); err != nil {
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
	// their receipts in the log (the ledger being locked at their end).
	if b, err := os.ReadFile(filepath.Join(home, ".state", "ledger", "hook.log")); !errors.Is(err, fs.ErrNotExist) {
		deferred := 0
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if !strings.Contains(l, " receipt ") || !strings.Contains(l, `"outcome":"deferred"`) && !strings.Contains(l, `"outcome":"ok"`) {
				t.Errorf("the hook logged a failure: %s", l)
			}
			if strings.Contains(l, `"outcome":"deferred"`) {
				deferred++
			}
		}
		t.Logf("%d hook runs left their work for the next event", deferred)
	}
	wantHealthy(t, home, db)
	wantNoDuplicates(t, db)
	// Running it all again adds nothing.
	again := ingestBin(t, home, db, projects)
	if again.Messages != 0 || again.Compactions != 0 || again.Sessions != 0 {
		t.Errorf("ingest after the rounds added %+v, want nothing", again)
	}
}

// TestKillDuringIngest kills `ledger ingest` with SIGKILL at several
// moments of one big ingest (while it migrates a new database, mid-file,
// near the end), each time into a new database and then, cumulatively,
// into one database. After every kill the database must pass SQLite's and
// FTS5's integrity checks; a second run must then land exactly what a clean
// ingest lands, with no duplicates.
func TestKillDuringIngest(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("ingests tens of megabytes several times")
	}
	setup := time.Now()
	home := t.TempDir()
	corpus := filepath.Join(home, "corpus")
	// One generated session, written as four (only the session id differs):
	// generating and reading each under the race detector would cost more
	// than the ingests.
	const template = "00000000-0000-4000-8000-0000000000ff"
	var part bytes.Buffer
	if err := transcript.Generate(&part, transcript.GenOptions{Seed: 7000, SessionID: template,
		Project: "/home/dev/src/k", Messages: 2000, CompactEvery: 400}); err != nil {
		t.Fatal(err)
	}
	one := filepath.Join(home, template+".jsonl")
	appendFile(t, one, part.Bytes())
	each := expectedCounts(t, one)[template]
	want := map[string]tally{}
	for i := range 4 {
		id := sessionUUID(i, 3)
		appendFile(t, filepath.Join(corpus, fmt.Sprintf("-k%d", i), id+".jsonl"), bytes.ReplaceAll(part.Bytes(), []byte(template), []byte(id)))
		want[id] = each
	}
	size := 4 * part.Len()

	// A clean ingest, timed: the kill points are fractions of it.
	clean := filepath.Join(home, "clean.db")
	t0 := time.Now()
	ingestBin(t, home, clean, corpus)
	full := time.Since(t0)
	sameCounts(t, "clean ingest", storedCounts(t, home, clean), want)
	t.Logf("clean ingest of 4 files, %.1f MB: %v (set up in %v)", float64(size)/1e6, full.Round(time.Millisecond), t0.Sub(setup).Round(time.Millisecond))

	// kill starts an ingest into db and sends it SIGKILL once at says so
	// (asked every 2 ms), unless it ends first.
	kill := func(db string, at killPoint) (killed bool, after time.Duration) {
		w := &watch{db: db}
		defer w.close()
		p := startBin(t, home, "", "--db", db, "ingest", "--json", corpus)
		w.start = p.started
		for !p.exited() && !at(w, time.Since(p.started)) {
			time.Sleep(2 * time.Millisecond)
		}
		after = time.Since(p.started)
		p.cmd.Process.Signal(syscall.SIGKILL)
		p.wait(t)
		if !p.exitSignal && p.exitCode != 0 {
			t.Fatalf("ingest failed before the kill: exit %d, %s", p.exitCode, p.errb.String())
		}
		return p.exitSignal, after
	}
	// Where the kills land: while the new database is created and
	// migrated; while the first file's pages go to the WAL at its commit
	// (the page cache holds them until then); at the start of the second
	// file's transaction; in the middle of the third's and early in the
	// fourth's, timed by how long this very run took over the file before.
	points := []struct {
		name string
		at   killPoint
	}{
		{"database created", func(w *watch, _ time.Duration) bool { return w.size("") >= 0 }},
		{"first commit", func(w *watch, _ time.Duration) bool { return w.size("-wal") >= 2<<20 }},
		{"second file starts", func(w *watch, _ time.Duration) bool { return w.files() >= 1 }},
		{"mid third file", func(w *watch, since time.Duration) bool { return w.files() >= 2 && since > w.reached[2]+w.lastFile()/2 }},
		{"early fourth file", func(w *watch, since time.Duration) bool { return w.files() >= 3 && since > w.reached[3]+w.lastFile()/4 }},
	}
	cumulative := filepath.Join(home, "cumulative.db")
	for i, pt := range points {
		t.Run(pt.name, func(t *testing.T) {
			db := filepath.Join(home, fmt.Sprintf("kill-%d.db", i))
			killed, after := kill(db, pt.at)
			landed := map[string]tally{}
			if _, err := os.Stat(db); err == nil {
				wantHealthy(t, home, db)
				landed = storedCounts(t, home, db)
			}
			total := 0
			for _, c := range landed {
				total += c.Messages
			}
			t.Logf("killed=%v after %v: %d of %d messages committed", killed, after.Round(time.Millisecond), total, 4*each.Messages)
			ingestBin(t, home, db, corpus)
			wantHealthy(t, home, db)
			sameCounts(t, "after the kill and a second run", storedCounts(t, home, db), want)
			wantNoDuplicates(t, db)

			// The same kill into one database that keeps what every
			// earlier kill left.
			kill(cumulative, pt.at)
			wantHealthy(t, home, cumulative)
		})
	}
	ingestBin(t, home, cumulative, corpus)
	wantHealthy(t, home, cumulative)
	sameCounts(t, "after repeated kills and a last run", storedCounts(t, home, cumulative), want)
	wantNoDuplicates(t, cumulative)
}

// killPoint tells, from what a watch sees of a running ingest and the
// time since it started, whether to kill it now.
type killPoint func(w *watch, since time.Duration) bool

// watch looks at a database that an ingest is writing: its files' sizes
// and, through a read-only connection (WAL readers do not block the
// writer), how many transcript files it has committed and when.
type watch struct {
	db      string
	start   time.Time // when the ingest started
	conn    *sql.DB
	reached map[int]time.Duration // when n files were first seen committed, since start
	n       int
}

// size is the size of the database file with suffix name, -1 if none.
func (w *watch) size(name string) int64 {
	fi, err := os.Stat(w.db + name)
	if err != nil {
		return -1
	}
	return fi.Size()
}

// files is how many transcript files the ingest has committed (cursors).
func (w *watch) files() int {
	if w.conn == nil {
		if w.size("") <= 0 {
			return 0
		}
		c, err := sql.Open("sqlite", "file:"+w.db+"?mode=ro&_pragma=busy_timeout(50)")
		if err != nil {
			return 0
		}
		w.conn, w.reached = c, map[int]time.Duration{0: 0}
	}
	var n int
	if w.conn.QueryRow(`SELECT count(*) FROM cursors`).Scan(&n) == nil && n > w.n {
		for i := w.n + 1; i <= n; i++ {
			w.reached[i] = time.Since(w.start)
		}
		w.n = n
	}
	return w.n
}

// lastFile is how long the last committed file took.
func (w *watch) lastFile() time.Duration { return w.reached[w.n] - w.reached[w.n-1] }

func (w *watch) close() {
	if w.conn != nil {
		w.conn.Close()
	}
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
