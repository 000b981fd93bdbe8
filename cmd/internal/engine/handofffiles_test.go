package engine

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/store"
)

// TestHandoffUnwritableFileStoresNothing: a handoff whose Markdown file
// cannot be written (its folder is a file: the --out given, or the
// ledger's handoffs folder) fails with an error naming the file, and
// leaves neither a handoff row nor a compaction record: the file exists
// exactly when its row does.
func TestHandoffUnwritableFileStoresNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, s := clockEngine(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	dir := t.TempDir()
	ingestSample(t, e, dir)
	before, err := s.Compactions(ctx, store.CompactionFilter{SessionID: sampleID})
	if err != nil {
		t.Fatal(err)
	}
	blocker := filepath.Join(dir, "notes.txt")
	putFile(t, blocker, "the user's notes\n")
	// The ledger's own place for the session's handoffs, taken by a file.
	putFile(t, filepath.Join(HandoffsDir(s.Path(), "/home/dev/src/payments"), IDName(sampleID)), "not a folder\n")

	for name, out := range map[string]string{"--out under a file": filepath.Join(blocker, "handoff.md"), "the default place": ""} {
		_, err := e.WriteHandoff(ctx, sampleID, HandoffRequest{Trigger: "manual", Budget: handoff.DefaultBudget, Out: out, Source: "cli"})
		if err == nil || !strings.Contains(err.Error(), "write handoff file") {
			t.Errorf("%s: %v, want the file's write failing", name, err)
		}
	}
	if hs, err := s.Handoffs(ctx, sampleID, 0); err != nil || len(hs) != 0 {
		t.Errorf("handoffs after the failed writes: %d, %v; want none", len(hs), err)
	}
	if after, err := s.Compactions(ctx, store.CompactionFilter{SessionID: sampleID}); err != nil || len(after) != len(before) {
		t.Errorf("compaction records: %d after, %d before (%v); want no new one", len(after), len(before), err)
	}
	if b, err := os.ReadFile(blocker); err != nil || string(b) != "the user's notes\n" {
		t.Errorf("the file in the way: %q, %v", b, err)
	}
}

// TestCreateNewNeverOverAFile: where a file system has no hard links, a
// handoff's file is created exclusively: owner-only, holding the data,
// and failing with fs.ErrExist (the file there untouched) when the name
// is taken, so that writeNewFile moves on to the next name.
func TestCreateNewNeverOverAFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "20260302T100000Z.md")
	if err := createNew(p, []byte("# Handoff\n")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want owner-only", fi.Mode().Perm())
	}
	if err := createNew(p, []byte("another\n")); !errors.Is(err, fs.ErrExist) {
		t.Errorf("over a file: %v, want fs.ErrExist", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "# Handoff\n" {
		t.Errorf("the file there became %q", b)
	}
	if err := createNew(filepath.Join(dir, "none", "x.md"), nil); err == nil || errors.Is(err, fs.ErrExist) {
		t.Errorf("in a missing folder: %v, want an error that is not fs.ErrExist", err)
	}
}
