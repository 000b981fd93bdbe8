package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/store/secrets/secretstest"
)

// clockEngine is an engine over a new ledger (openEngine's) whose clock
// stands at at.
func clockEngine(t *testing.T, at time.Time) (*Engine, *store.Store) {
	t.Helper()
	_, s := openEngine(t)
	e := newEngine(Config{DB: s.Path(), Mode: Write, Now: func() time.Time { return at }},
		func(context.Context) (*store.Store, error) { return s, nil })
	return e, s
}

// sampleIn writes the sample Claude Code session into dir as if it had
// run in project, and returns its path.
func sampleIn(t *testing.T, dir, project string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sampleDir(t), "claude", "-home-dev-src-payments", sampleID+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, sampleID+".jsonl")
	putFile(t, path, strings.ReplaceAll(string(b), "/home/dev/src/payments", project))
	return path
}

// TestIngestNotesIgnoredProject: a session in a folder with a
// .ledgerignore is read past and not stored, and the ingest notes the
// project and its file (at the engine's time) so that `pause --list`
// names a project the ledger holds nothing of; once the file is gone it
// is no longer listed.
func TestIngestNotesIgnoredProject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	at := time.Date(2026, 3, 2, 10, 0, 7, 500_000_000, time.UTC)
	e, s := clockEngine(t, at)
	dir := t.TempDir()
	project := filepath.Join(dir, "client")
	ignore := filepath.Join(project, IgnoreFile)
	putFile(t, ignore, "")
	tr := sampleIn(t, dir, project)

	sum, err := e.Ingest(ctx, []string{tr}, IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Sessions != 0 || sum.Messages != 0 {
		t.Errorf("ingest of an ignored project stored %d sessions and %d messages", sum.Sessions, sum.Messages)
	}
	if ss, err := s.Sessions(ctx, store.SessionFilter{}); err != nil || len(ss) != 0 {
		t.Errorf("sessions after the ingest: %+v, %v; want none", ss, err)
	}
	ig, err := s.IgnoredProjects(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ig) != 1 || ig[0].Project != project || ig[0].File != ignore || !ig[0].At.Equal(at.Truncate(time.Second)) {
		t.Fatalf("ignored projects %+v, want %s by %s at %s", ig, project, ignore, at.Truncate(time.Second))
	}
	ex, err := e.ExcludedProjects(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ex) != 1 || ex[0] != (Excluded{Project: project, How: "ledgerignore", File: ignore}) {
		t.Errorf("excluded projects %+v, want the ignored one", ex)
	}
	// Read once: the next ingest has nothing new, and stores nothing.
	if sum, err := e.Ingest(ctx, []string{tr}, IngestOptions{}); err != nil || sum.Files != 0 || sum.Messages != 0 {
		t.Errorf("a second ingest: %+v, %v; want nothing read", sum, err)
	}
	if err := os.Remove(ignore); err != nil {
		t.Fatal(err)
	}
	if ex, err := e.ExcludedProjects(ctx); err != nil || len(ex) != 0 {
		t.Errorf("excluded projects once the .ledgerignore is gone: %+v, %v", ex, err)
	}
}

// TestPauseOfAPathHoldingASecret: a paused folder whose path holds a
// secret is stored redacted; the sessions and hooks of that folder (and
// of those below it), which name it in full, are still kept out.
func TestPauseOfAPathHoldingASecret(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, s := clockEngine(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	var token string
	for _, k := range secretstest.Kinds() {
		if k.Kind == "github-pat" {
			token = k.Value
		}
	}
	dir := t.TempDir()
	project := filepath.Join(dir, token)
	if _, err := e.Pause(ctx, project); err != nil {
		t.Fatal(err)
	}
	ps, err := s.PausedProjects(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || strings.Contains(ps[0].Project, token) {
		t.Fatalf("paused projects %+v: want one, its secret redacted", ps)
	}
	for _, d := range []string{project, filepath.Join(project, "sub")} {
		if why, err := e.OptedOut(ctx, d); err != nil || !strings.HasPrefix(why, "recording is paused for ") {
			t.Errorf("OptedOut(%s) = %q, %v; want paused", d, why, err)
		}
	}
	if why, err := e.OptedOut(ctx, dir); err != nil || why != "" {
		t.Errorf("OptedOut of the folder above = %q, %v; want nothing", why, err)
	}
	tr := sampleIn(t, dir, project)
	if sum, err := e.Ingest(ctx, []string{tr}, IngestOptions{}); err != nil || sum.Messages != 0 {
		t.Errorf("ingest of a session in the paused folder: %+v, %v; want nothing stored", sum, err)
	}
	if ss, err := s.Sessions(ctx, store.SessionFilter{}); err != nil || len(ss) != 0 {
		t.Errorf("sessions: %+v, %v; want none", ss, err)
	}
	if why := e.hookOptedOut(ctx, HookInput{Cwd: project, SessionID: sampleID}); !strings.HasPrefix(why, "recording is paused") {
		t.Errorf("a hook in the paused folder: %q, want it kept out", why)
	}
}
