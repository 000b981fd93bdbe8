package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The measures of each size beside ingest, search and resume: the first
// resume of older sessions, the incremental re-index of a live session,
// and the web view's session list.

// reindexLines is how many lines are appended to the live session before
// its re-index is timed.
const reindexLines = 100

// liveSeed generates the live session: ledger-gen's seeds start sessions
// Seed%10000 hours into 2026, so it is the newest session of its project
// in every corpus size.
const liveSeed = 9999

// measureFirstResume times `ledger resume ID --format hook` once on each
// of b.runs older sessions (1, 2, ...: not the latest of their project),
// none resumed before: what a resume by id of an old session costs when
// the ingest did not store its state.
func (b *bench) measureFirstResume(t *target, r *sizeResult, dir string, sessions int) error {
	if sessions < 3*17+b.runs+1 {
		return nil // every session may be among its project's latest
	}
	var walls []time.Duration
	db := b.dbPath(strconv.Itoa(r.messages))
	for i := 1; i <= b.runs; i++ {
		id, err := sessionID(sessionPath(dir, i))
		if err != nil {
			return err
		}
		s, _, err := b.exec("", nil, "--db", db, "resume", id, "--format", "hook")
		if err != nil {
			return err
		}
		walls = append(walls, s.wall)
		r.resumeFirstRSS = max(r.resumeFirstRSS, s.rss)
	}
	slices.Sort(walls)
	r.resumeFirst = walls[len(walls)/2]
	b.logf("  %s: first resume of an older session %v", t.label, r.resumeFirst.Round(time.Microsecond))
	return nil
}

// measureReindex times `ledger ingest FILE` once reindexLines lines were
// appended to a live session of 1,000 messages (the newest of its project)
// in the size's ledger, each run from a copy of the ledger as it was before
// the append.
func (b *bench) measureReindex(t *target, r *sizeResult) error {
	dir := filepath.Join(b.work, "live")
	full := filepath.Join(dir, fmt.Sprintf("full-%s.jsonl", b.shape))
	if _, err := os.Stat(full); err != nil {
		if err := b.runJobs([]genJob{{Path: full, Seed: liveSeed, Messages: sessionMessages + 200,
			Project: sessionProject(0), Shape: b.shape}}); err != nil {
			return err
		}
	}
	data, err := os.ReadFile(full)
	if err != nil {
		return err
	}
	cut := len(data)
	for range reindexLines {
		cut = bytes.LastIndexByte(data[:cut-1], '\n') + 1
	}
	head, tail := data[:cut], data[cut:]
	r.reindexBytes = int64(len(tail))
	path := filepath.Join(dir, "-home-dev-src-project00", "live.jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, head, 0o600); err != nil {
		return err
	}
	size := strconv.Itoa(r.messages)
	base := filepath.Join(b.work, "db", t.label+"-live-base-"+size+".db")
	if err := copyDB(base, b.dbPath(size)); err != nil {
		return err
	}
	if _, _, err := b.exec("", nil, "--db", base, "ingest", path); err != nil {
		return err
	}
	run := filepath.Join(b.work, "db", t.label+"-live-run-"+size+".db")
	prep := func() error {
		if err := copyDB(run, base); err != nil {
			return err
		}
		return os.WriteFile(path, data, 0o600)
	}
	defer func() {
		freshDB(base)
		freshDB(run)
	}()
	if r.reindex, _, err = b.medianPrep(prep, "", nil, "--db", run, "ingest", path); err != nil {
		return err
	}
	if b.profileDir != "" {
		if err := prep(); err != nil {
			return err
		}
		b.profile("reindex-"+size, nil, "--db", run, "ingest", path)
	}
	b.logf("  %s: re-index after %d lines %v", t.label, reindexLines, r.reindex.wall.Round(time.Microsecond))
	return nil
}

// measureWebList times the web view's session list (`/`, 50 sessions a
// page): `ledger serve` on the size's ledger, each GET a whole request, the
// median of b.runs after a warm-up one.
func (b *bench) measureWebList(t *target, r *sizeResult) error {
	db := b.dbPath(strconv.Itoa(r.messages))
	cmd := exec.CommandContext(b.ctx, t.ledger, "--db", db, "serve", "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "XDG_STATE_HOME="+filepath.Join(b.work, "state"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}()
	// "ledger: serving DB (read-only) at http://127.0.0.1:PORT/; Ctrl-C to stop"
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return fmt.Errorf("serve: %w: %s", err, stderr.String())
	}
	go io.Copy(io.Discard, out)
	at := strings.Index(line, "http://")
	if at < 0 {
		return fmt.Errorf("serve: no URL in %q", line)
	}
	url := strings.TrimRight(strings.Fields(line[at:])[0], ";")
	client := &http.Client{Timeout: 30 * time.Second}
	var walls []time.Duration
	for i := range b.runs + 1 {
		start := time.Now()
		resp, err := client.Get(url)
		if err != nil {
			return err
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		d := time.Since(start)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		r.webBytes = n
		if i > 0 {
			walls = append(walls, d)
		}
	}
	slices.Sort(walls)
	r.webList = walls[len(walls)/2]
	b.logf("  %s: web session list %v (%d bytes)", t.label, r.webList.Round(time.Microsecond), r.webBytes)
	return nil
}
