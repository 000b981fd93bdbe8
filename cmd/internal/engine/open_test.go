package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/store/pgtest"
)

// openFor opens the engine of the ledger at db in mode m, closed when the
// test ends.
func openFor(t *testing.T, db string, m Mode) *Engine {
	t.Helper()
	e, err := Open(Config{DB: db, Mode: m})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// TestOpenModes: what each mode does with a ledger that is not there
// (reading creates nothing, not even through doctor's Inspect; writing
// creates it) and with one that is (Read cannot write it by any path,
// the others can).
func TestOpenModes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, m := range []Mode{Read, Write, WriteOrRead, Inspect} {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "sub", "ledger.db")
			e := openFor(t, db, m)
			if e.Mode() != m {
				t.Errorf("Mode() = %v, want %v", e.Mode(), m)
			}
			if e.Opened() != nil {
				t.Fatal("Open opened the store before its first use")
			}
			_, err := e.Store(ctx)
			creates := m == Write || m == WriteOrRead
			var none *store.NoLedgerError
			switch {
			case creates && err != nil:
				t.Fatalf("%v on no ledger: %v", m, err)
			case !creates && !errors.As(err, &none):
				t.Fatalf("%v on no ledger: %v, want a *store.NoLedgerError", m, err)
			}
			if _, serr := os.Stat(db); creates != (serr == nil) {
				t.Errorf("%v: ledger created %v, want %v", m, serr == nil, creates)
			}
			if !creates {
				// Make it, with a session to write a note to, and open
				// it again: an open that failed is tried again.
				w := openFor(t, db, Write)
				ingestSample(t, w, t.TempDir())
				w.Close()
			}
			st, err := e.Store(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := st.ReadOnly(); got != (m == Read) {
				t.Errorf("%v: store read-only %v, want %v", m, got, m == Read)
			}
			if m != Read {
				return
			}
			if _, err := e.Note(ctx, NoteRequest{Session: sampleID, Kind: "decision", Text: "x"}); Kind(err) != ErrReadOnly {
				t.Errorf("note through a Read engine: %v, want a read-only error", err)
			}
		})
	}
}

// TestOpenConfig: a mode Open does not know, or no ledger at all, is
// refused at Open; a ledger that could not be found (DBError) fails every
// use of the store with that error, and what needs no ledger still runs.
func TestOpenConfig(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if _, err := Open(Config{DB: "x.db"}); err == nil {
		t.Error("Open with no mode: no error")
	}
	if _, err := Open(Config{DB: "x.db", Mode: Mode(9)}); err == nil || !strings.Contains(err.Error(), "Mode(9)") {
		t.Errorf("Open with an unknown mode: %v", err)
	}
	if _, err := Open(Config{Mode: Read}); err == nil {
		t.Error("Open with no DB: no error")
	}
	// A best-effort write has no ledger to write where the read had none,
	// nor on a server (whose reads the team's writers keep current).
	for _, db := range []string{filepath.Join(t.TempDir(), "none.db"), "postgres://nobody@/x"} {
		r, err := Open(Config{DB: db, Mode: Read})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := r.writer(ctx); err == nil {
			t.Errorf("writer of %s: no error", db)
		}
		r.KeepResumeState(ctx, &store.ResumeState{SessionID: "x"}) // nothing to keep it in: nothing happens
	}
	why := errors.New("$LEDGER_DB is a folder")
	e, err := Open(Config{DBError: why, Mode: WriteOrRead})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store(ctx); !errors.Is(err, why) {
		t.Errorf("Store = %v, want %v", err, why)
	}
	if _, err := e.Sessions(ctx, "", 1); !errors.Is(err, why) {
		t.Errorf("Sessions = %v, want %v", err, why)
	}
	if line := e.StatusLine(ctx, []byte(`{"session_id":"s"}`), func(string) string { return "" }, true); line == "" {
		t.Error("no status line without a ledger")
	}
	if err := e.Close(); err != nil {
		t.Error(err)
	}
}

// TestStoreOpenWaits: calls that come while the store opens wait for that
// one open, a caller whose context ends stops waiting, an open that fails
// is tried again, and Close after Abandon leaves the store open for the
// work still using it.
func TestStoreOpenWaits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "ledger.db")
	release, started := make(chan struct{}), make(chan struct{}, 2)
	var opens int
	fail := true
	e := newEngine(Config{DB: db, Mode: Write}, func(ctx context.Context) (*store.Store, error) {
		opens++ // under the engine's open semaphore
		started <- struct{}{}
		<-release
		if fail {
			fail = false
			return nil, errors.New("busy")
		}
		return openStore(ctx, Config{DB: db}, Write)
	})
	first := make(chan error, 1)
	go func() { _, err := e.Store(ctx); first <- err }()
	<-started
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.Store(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("Store with a done context = %v, want context.Canceled", err)
	}
	waiting, stop := context.WithCancel(ctx)
	gaveUp := make(chan error, 1)
	go func() { _, err := e.Store(waiting); gaveUp <- err }()
	stop()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Errorf("Store waiting for an open, its context ended: %v, want context.Canceled", err)
	}
	close(release)
	if err := <-first; err == nil || err.Error() != "busy" {
		t.Fatalf("first open = %v, want busy", err)
	}
	var wg sync.WaitGroup
	got := make([]*store.Store, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := e.Store(ctx)
			if err != nil {
				t.Error(err)
			}
			got[i] = st
		}()
	}
	wg.Wait()
	for _, st := range got {
		if st == nil || st != got[0] {
			t.Fatalf("concurrent first uses got different stores: %p, %p", st, got[0])
		}
	}
	if opens != 2 {
		t.Errorf("%d opens, want 2 (one failed, one for eight callers)", opens)
	}
	e.Abandon()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := got[0].Sessions(ctx, store.SessionFilter{}); err != nil {
		t.Errorf("the store after an abandoned engine's Close: %v, want it still open", err)
	}
	got[0].Close()
}

// TestEngineConcurrentCalls: one engine shared by goroutines that read
// (sessions, search, resume, audit, handoffs, meter, the status line)
// while others write (an ingest of a real transcript, notes): every call
// succeeds, the reads see the ledger as it was or as it is after each
// write, and what was written is all there at the end. Run with -race.
func TestEngineConcurrentCalls(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// A real session of 236 KB: each reader runs tens of times while it is
	// ingested (a 774 KB one only made the test take three times as long).
	big := corpusFile(t, "claude", "spotter-subagent")
	home := t.TempDir()
	e, err := Open(Config{DB: filepath.Join(t.TempDir(), "ledger.db"), Mode: WriteOrRead, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ingestSample(t, e, home)

	done := make(chan struct{})
	var wg sync.WaitGroup
	reads := make([]int, 4)
	reader := func(i int, call func() error) {
		defer wg.Done()
		for {
			if err := call(); err != nil {
				t.Errorf("read %d during the writes: %v", i, err)
				return
			}
			reads[i]++
			select {
			case <-done:
				return
			default:
			}
		}
	}
	status := []byte(`{"session_id":"` + sampleID + `","context_window":{"context_window_size":200000,"current_usage":{"input_tokens":1000}}}`)
	wg.Add(len(reads))
	go reader(0, func() error {
		list, err := e.Sessions(ctx, "", 10)
		if err == nil && len(list) == 0 {
			err = errors.New("no sessions")
		}
		return err
	})
	go reader(1, func() error {
		_, err := e.Search(ctx, SearchRequest{Text: "test", SearchOptions: store.SearchOptions{Limit: 5}})
		return err
	})
	go reader(2, func() error {
		r, err := e.Resume(ctx, ResumeRequest{Session: sampleID, Budget: 2000})
		if err == nil && r.Markdown == "" {
			err = errors.New("empty resume")
		}
		return err
	})
	go reader(3, func() error {
		if _, err := e.Audit(ctx, sampleID, time.Time{}); err != nil {
			return err
		}
		if _, err := e.Handoffs(ctx, sampleID, 0); err != nil {
			return err
		}
		if _, err := e.Meter(ctx, sampleID, MeterOptions{}); err != nil {
			return err
		}
		if e.StatusLine(ctx, status, func(string) string { return "" }, true) == StatusFallback {
			return errors.New("status line fell back")
		}
		return nil
	})

	var writers sync.WaitGroup
	writers.Add(2)
	go func() {
		defer writers.Done()
		if _, err := e.Ingest(ctx, []string{big}, IngestOptions{}); err != nil {
			t.Errorf("ingest during the reads: %v", err)
		}
	}()
	go func() {
		defer writers.Done()
		for i := range 5 {
			if _, err := e.Note(ctx, NoteRequest{Session: sampleID, Kind: "decision", Text: "decided " + string(rune('a'+i))}); err != nil {
				t.Errorf("note during the reads: %v", err)
			}
		}
	}()
	writers.Wait()
	close(done)
	wg.Wait()
	for i, n := range reads {
		if n == 0 {
			t.Errorf("reader %d never ran", i)
		}
	}
	list, err := e.Sessions(ctx, "", 10)
	if err != nil || len(list) != 2 {
		t.Fatalf("after the writes: %d sessions (%v), want the sample's and the corpus file's", len(list), err)
	}
	st, _ := e.Store(ctx)
	notes, err := st.HandoffNotes(ctx, sampleID)
	if err != nil || len(notes) != 5 {
		t.Errorf("after the writes: %d notes (%v), want 5", len(notes), err)
	}
}

// TestKeepResumeState: a resume through a Read engine extracts the
// session's state and cannot store it; KeepResumeState stores it through
// a write of its own, after which resume reads it, and the engine's store
// stays read-only.
func TestKeepResumeState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "ledger.db")
	w := openFor(t, db, Write)
	ingestSample(t, w, t.TempDir())
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// The ingest stored the latest session's state: drop it, as an
	// older session's is never stored by an ingest.
	if _, err := rawDB(t, db).Exec(`DELETE FROM resume_states`); err != nil {
		t.Fatal(err)
	}
	e := openFor(t, db, Read)
	r, err := e.Resume(ctx, ResumeRequest{Session: sampleID, Budget: 4000})
	if err != nil {
		t.Fatal(err)
	}
	if r.Unsaved == nil {
		t.Fatal("a resume on a read-only store left nothing unsaved")
	}
	e.KeepResumeState(ctx, r.Unsaved)
	again, err := e.Resume(ctx, ResumeRequest{Session: sampleID, Budget: 4000})
	if err != nil {
		t.Fatal(err)
	}
	if again.Unsaved != nil || again.Markdown != r.Markdown {
		t.Errorf("second resume: unsaved %v, same context %v; want the stored state read", again.Unsaved != nil, again.Markdown == r.Markdown)
	}
	if st := e.Opened(); st == nil || !st.ReadOnly() {
		t.Error("the Read engine's store is not read-only after KeepResumeState")
	}
	e.KeepResumeState(ctx, nil) // nothing to keep: nothing happens
}

// TestLearnWindowThroughAReader: the status line's engine reads; the
// window it learns is written through a write of its own, once, and a
// session the ledger does not hold is left alone.
func TestLearnWindowThroughAReader(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "ledger.db")
	w := openFor(t, db, Write)
	ingestSample(t, w, t.TempDir())
	w.Close()
	e := openFor(t, db, Read)
	if err := e.LearnWindow(ctx, sampleID, 1_000_000); err != nil {
		t.Fatal(err)
	}
	if n, err := e.WindowOnRecord(ctx, sampleID); n != 1_000_000 || err != nil {
		t.Errorf("window on record = %d, %v; want 1000000", n, err)
	}
	if err := e.LearnWindow(ctx, "nosuchsession", 5); err != nil {
		t.Errorf("LearnWindow of a session not held: %v", err)
	}
	if err := e.LearnWindow(ctx, "", 5); err != nil {
		t.Errorf("LearnWindow of no session: %v", err)
	}
	gone := openFor(t, filepath.Join(t.TempDir(), "none.db"), Read)
	if err := gone.LearnWindow(ctx, sampleID, 5); err == nil {
		t.Error("LearnWindow with no ledger: no error")
	}
}

// TestSyncToPostgres: an engine's SQLite ledger pushed to a team ledger on
// PostgreSQL, once (a second sync sends nothing), and refused when the
// destination is not a URL or the source is a server itself.
func TestSyncToPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	e, err := Open(Config{DB: filepath.Join(t.TempDir(), "ledger.db"), Mode: Write, Host: "laptop", Local: filepath.Join(t.TempDir(), "local.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ingestSample(t, e, t.TempDir())
	res, err := e.Sync(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if res.Sessions != 1 || res.Messages == 0 || len(res.Failed) != 0 {
		t.Errorf("first sync = %+v, want the sample's session and its messages", res)
	}
	again, err := e.Sync(ctx, url)
	if err != nil || again.Sessions != 0 || again.Messages != 0 {
		t.Errorf("second sync = %+v, %v; want nothing sent", again, err)
	}
	if _, err := e.Sync(ctx, "/tmp/x.db"); Kind(err) != ErrInvalid {
		t.Errorf("sync to a file: %v, want invalid", err)
	}
	team := openFor(t, url, Read)
	list, err := team.Sessions(ctx, "", 5)
	if err != nil || len(list) != 1 || list[0].ID != sampleID {
		t.Fatalf("the team ledger read back: %v, %v", list, err)
	}
	if _, err := team.Sync(ctx, url); Kind(err) != ErrInvalid {
		t.Errorf("sync from a server: %v, want invalid", err)
	}
}

// TestDBPath: where the ledger is by the environment: $LEDGER_DB, else
// under an absolute $XDG_DATA_HOME (a relative one is ignored, as the XDG
// specification says), else under $HOME; a PostgreSQL URL is no path to
// make absolute.
func TestDBPath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"LEDGER_DB": "/a/l.db", "HOME": "/h"}, "/a/l.db"},
		{map[string]string{"XDG_DATA_HOME": "/x", "HOME": "/h"}, "/x/ledger/ledger.db"},
		{map[string]string{"XDG_DATA_HOME": "rel", "HOME": "/h"}, "/h/.local/share/ledger/ledger.db"},
		{map[string]string{"HOME": "/h"}, "/h/.local/share/ledger/ledger.db"},
	} {
		if got, err := DBPath(func(k string) string { return tc.env[k] }); got != tc.want || err != nil {
			t.Errorf("DBPath(%v) = %q, %v; want %q", tc.env, got, err, tc.want)
		}
	}
	if got, err := DBPath(func(string) string { return "" }); err == nil && !filepath.IsAbs(got) {
		t.Errorf("DBPath with no HOME = %q: want the system's home folder's, or an error", got)
	}
	if u := "postgres://u@h/db"; AbsPath(u) != u {
		t.Errorf("AbsPath(%s) = %s", u, AbsPath(u))
	}
	if p := AbsPath("rel.db"); !filepath.IsAbs(p) {
		t.Errorf("AbsPath(rel.db) = %s", p)
	}
}

// TestAgentDatabase: OpenCode's and Kilo's database as each picks it:
// $OPENCODE_DB ($KILO_DB) absolute, or relative to the data folder
// ($XDG_DATA_HOME/opencode), ":memory:" ignored; else <data>/opencode.db.
func TestAgentDatabase(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		agent string
		env   map[string]string
		want  string
	}{
		{"opencode", nil, "/h/.local/share/opencode/opencode.db"},
		{"kilo", map[string]string{"XDG_DATA_HOME": "/x"}, "/x/kilo/kilo.db"},
		{"opencode", map[string]string{"OPENCODE_DB": "/d/oc.db"}, "/d/oc.db"},
		{"opencode", map[string]string{"OPENCODE_DB": "dev.db"}, "/h/.local/share/opencode/dev.db"},
		{"kilo", map[string]string{"KILO_DB": ":memory:"}, "/h/.local/share/kilo/kilo.db"},
	} {
		if got := AgentDatabase(tc.agent, "/h", func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("AgentDatabase(%s, %v) = %s, want %s", tc.agent, tc.env, got, tc.want)
		}
	}
}
