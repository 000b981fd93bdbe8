package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCompactionLookupsReadNoSummary: listing sessions (each one's clears
// counted), a resume's LastCompaction and its count find a session's
// compactions by their index (migration 00017), not by reading each one's
// summary. On SQLite a column stored after a long summary is read by
// following the summary's overflow pages: 32 summaries of 64 KB were read
// three times over, about 6 MB, for one listing and one LastCompaction.
// Not parallel: it counts what the whole process reads (/proc/self/io).
func TestCompactionLookupsReadNoSummary(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	writeWords(t, ctx, s, "s1", "m", at, 10, 5, func() string { return "word" })
	summary := strings.Repeat("the summary of what was done so far ", 64<<10/36)
	for i := range 32 {
		source := "transcript"
		if i%16 == 15 {
			source = "cli"
		}
		if _, err := s.db.Exec(`INSERT INTO compactions (session_id, boundary_uuid, at, trigger, summary, source)
			VALUES ('s1', $1, $2, 'auto', $3, $4)`, fmt.Sprint("b", i), at.Add(time.Duration(i)*time.Minute), summary, source); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.db.Exec(`UPDATE sessions SET compactions = 32 WHERE id = 's1'`); err != nil { // as the writer counts them
		t.Fatal(err)
	}
	s.Close()
	fresh, err := Open(ctx, path, ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	before := readBytes(t)
	list, err := fresh.Sessions(ctx, SessionFilter{})
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions: %v, %v", list, err)
	}
	last, n, err := fresh.LastCompaction(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	read := readBytes(t) - before
	if list[0].Compactions != 30 || list[0].Clears != 2 || n != 30 || last.Summary != summary || !last.At.Equal(at.Add(30*time.Minute)) {
		t.Fatalf("session %+v; last compaction at %v of %d", list[0], last.At, n)
	}
	// The last summary itself (64 KB), the schema, the indexes' pages.
	if read > 320<<10 {
		t.Errorf("listing the session and reading its last compaction read %d KB", read>>10)
	}
}

// readBytes is what this process has read so far (rchar: every read and
// pread, the page cache's included).
func readBytes(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "rchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no rchar in /proc/self/io")
	return 0
}
