package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// codexSample is the sample Codex rollout's name and thread id.
const (
	codexSampleName = "rollout-2026-03-02T14-00-00-0199f3a2-7d4e-7c10-b2a9-5e8f1d3c6a20.jsonl"
	codexSampleID   = "0199f3a2-7d4e-7c10-b2a9-5e8f1d3c6a20"
)

// indexEntry is a line of a Codex session index naming thread id.
func indexEntry(id, name string) string {
	return `{"id":"` + id + `","thread_name":"` + name + `","updated_at":"2026-03-02T14:05:00Z"}` + "\n"
}

// TestCodexThreadNameFromIndex: an ingested Codex rollout laid out as
// Codex lays it out (<home>/sessions/YYYY/MM/DD) takes its title from
// <home>/session_index.jsonl, the latest naming of its id holding; for a
// rollout anywhere else no index is read (its place comes from the
// rollout's, never from the index).
func TestCodexThreadNameFromIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, err := os.ReadFile(filepath.Join(sampleDir(t), "codex", "2026", "03", "02", codexSampleName))
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(t.TempDir(), ".codex")
	index := indexEntry(codexSampleID, "first name") + indexEntry("0199f3a2-0000-7000-8000-000000000000", "another thread") +
		indexEntry(strings.ToUpper(codexSampleID), "Renamed: inventory sync")
	putFile(t, filepath.Join(home, "session_index.jsonl"), index)

	title := func(rollout string) string {
		t.Helper()
		putFile(t, rollout, string(b))
		e, _ := openEngine(t)
		if _, err := e.Ingest(ctx, []string{rollout}, IngestOptions{}); err != nil {
			t.Fatal(err)
		}
		_, sess, err := e.Session(ctx, codexSampleID)
		if err != nil {
			t.Fatal(err)
		}
		return sess.Title
	}
	if got, want := title(filepath.Join(home, "sessions", "2026", "03", "02", codexSampleName)), "Renamed: inventory sync"; got != want {
		t.Errorf("title of a rollout under sessions/YYYY/MM/DD = %q, want the index's latest name %q", got, want)
	}
	// Beside the index, and in a folder laid out almost as Codex's.
	for _, rollout := range []string{filepath.Join(home, codexSampleName), filepath.Join(home, "sessions", "2026", "3", "02", codexSampleName),
		filepath.Join(home, "archive", "2026", "03", "02", codexSampleName)} {
		if got := new(ingester).codexThreadName(rollout, codexSampleID); got != "" {
			t.Errorf("the thread name of %s = %q, want none", rollout, got)
		}
	}
}

// TestCodexSessionIndexBounds: the session index is another program's
// file: none, a folder in its place, garbage, a line far longer than any
// entry, or one larger than maxSessionIndex, and the names still come
// from what can be read, the newest (at its end) first of all.
func TestCodexSessionIndexBounds(t *testing.T) {
	t.Parallel()
	const a, b, c = "0199f3a2-7d4e-7c10-b2a9-5e8f1d3c6a20", "0199f3a2-7d4e-7c10-b2a9-5e8f1d3c6a21", "0199f3a2-7d4e-7c10-b2a9-5e8f1d3c6a22"
	dir := t.TempDir()
	if got := readSessionIndex(filepath.Join(dir, "none.jsonl")); got != nil {
		t.Errorf("no index: %v", got)
	}
	if err := os.Mkdir(filepath.Join(dir, "folder.jsonl"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got := readSessionIndex(filepath.Join(dir, "folder.jsonl")); got != nil {
		t.Errorf("a folder for an index: %v", got)
	}

	// A line of 128 KB between two entries: the entry after it (a later
	// naming) still counts.
	long := filepath.Join(dir, "long.jsonl")
	putFile(t, long, indexEntry(a, "before")+`{"id":"`+b+`","thread_name":"`+strings.Repeat("x", 128<<10)+`"}`+"\n"+
		"\x00\x01 garbage\n"+indexEntry(a, "after")+indexEntry(c, "new thread"))
	got := readSessionIndex(long)
	if got[a] != "after" || got[c] != "new thread" {
		t.Errorf("names after a 128 KB line: %v, want %s named after and %s new thread", got, a, c)
	}
	if n := got[b]; len(n) > 1024 {
		t.Errorf("the 128 KB line's name kept whole (%d bytes)", len(n))
	}

	// An index larger than maxSessionIndex: its last bytes are read, the
	// line they start in the middle of passed over.
	huge := filepath.Join(dir, "huge.jsonl")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	chunk := []byte(strings.Repeat(strings.Repeat("p", 1023)+"\n", 1024)) // 1 MB of lines that are no entry
	_, err = f.WriteString(indexEntry(b, "only in the head"))
	for range maxSessionIndex/len(chunk) + 1 {
		if err == nil {
			_, err = f.Write(chunk)
		}
	}
	if err == nil {
		_, err = f.WriteString(indexEntry(a, "newest"))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	got = readSessionIndex(huge)
	if len(got) != 1 || got[a] != "newest" {
		t.Errorf("names of an index larger than %d bytes: %v, want only %s newest", maxSessionIndex, got, a)
	}
}
