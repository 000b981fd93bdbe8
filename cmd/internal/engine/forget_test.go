package engine

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestForgetPrunesHandoffFolders: forget with files removes a session's
// handoff files and the folders ledger made for them once empty (the
// session's folder, then its project's in the ledger's handoffs folder);
// a project folder still holding another session's handoffs stays, and
// so do a folder the user chose (--out) and a project's own
// .ledger/handoffs.
func TestForgetPrunesHandoffFolders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const other = "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e58"
	e, s := clockEngine(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	dir := t.TempDir()
	tr := ingestSample(t, e, dir)
	b, err := os.ReadFile(tr)
	if err != nil {
		t.Fatal(err)
	}
	putFile(t, filepath.Join(dir, "other", other+".jsonl"), strings.ReplaceAll(string(b), sampleID, other))
	if _, err := e.Ingest(ctx, []string{filepath.Join(dir, "other")}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	write := func(session, out string) string {
		t.Helper()
		h, err := e.WriteHandoff(ctx, session, HandoffRequest{Trigger: "manual", Budget: 1500, Out: out, Source: "cli"})
		if err != nil {
			t.Fatal(err)
		}
		return h.Path
	}
	mine := filepath.Join(dir, "mine")
	first, chosen, second := write(sampleID, ""), write(sampleID, filepath.Join(mine, "h.md")), write(other, "")
	root := filepath.Join(filepath.Dir(s.Path()), "handoffs")
	project := HandoffsDir(s.Path(), "/home/dev/src/payments")
	if filepath.Dir(filepath.Dir(first)) != project || filepath.Dir(filepath.Dir(second)) != project {
		t.Fatalf("handoff files %s and %s, want them under %s", first, second, project)
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	f, err := e.Forget(ctx, sampleID, false, true)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(f.FilesRemoved)
	if want := []string{first, chosen}; !slices.Equal(f.FilesRemoved, want) || len(f.FileErrors) != 0 {
		t.Errorf("files removed %q (errors %v), want %q", f.FilesRemoved, f.FileErrors, want)
	}
	if exists(filepath.Dir(first)) || !exists(project) || !exists(second) || !exists(mine) {
		t.Errorf("after forgetting %s: its folder there %v (want false); the project's %v, the other handoff %v, the chosen folder %v (want true)",
			sampleID, exists(filepath.Dir(first)), exists(project), exists(second), exists(mine))
	}
	if _, err := e.Forget(ctx, other, false, true); err != nil {
		t.Fatal(err)
	}
	if exists(project) || !exists(root) {
		t.Errorf("after forgetting both: the project's folder there %v (want false), the handoffs folder %v (want true)", exists(project), exists(root))
	}

	// A handoff in the project's own .ledger/handoffs: its session's
	// folder goes, the project's folders stay.
	const third = "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e59"
	checkout := filepath.Join(dir, "payments")
	putFile(t, filepath.Join(checkout, "README"), "x\n")
	putFile(t, filepath.Join(dir, "third", third+".jsonl"), strings.ReplaceAll(strings.ReplaceAll(string(b), sampleID, third), "/home/dev/src/payments", checkout))
	if _, err := e.Ingest(ctx, []string{filepath.Join(dir, "third")}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	h, err := e.WriteHandoff(ctx, third, HandoffRequest{Trigger: "manual", Budget: 1500, Source: "cli", InProject: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := InProjectHandoffPath(checkout, third, filepath.Base(h.Path)); h.Path != want {
		t.Fatalf("in-project handoff at %s, want %s", h.Path, want)
	}
	if _, err := e.Forget(ctx, third, false, true); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Dir(h.Path)) || !exists(filepath.Join(checkout, ".ledger", "handoffs")) {
		t.Errorf("after forgetting %s: its folder there %v (want false), the project's .ledger/handoffs %v (want true)",
			third, exists(filepath.Dir(h.Path)), exists(filepath.Join(checkout, ".ledger", "handoffs")))
	}
}
