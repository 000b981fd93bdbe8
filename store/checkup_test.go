package store

import (
	"context"
	"testing"
	"time"
)

func TestPausedProjectsAndCheckupQueries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTemp(t)
	if ps, err := s.PausedProjects(ctx); err != nil || len(ps) != 0 {
		t.Fatalf("PausedProjects = %v, %v", ps, err)
	}
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for i, want := range []bool{true, false} {
		if paused, err := s.PauseProject(ctx, "/src/app/", at.Add(time.Duration(i)*time.Hour)); err != nil || paused != want {
			t.Fatalf("PauseProject #%d = %v, %v", i, paused, err)
		}
	}
	ps, err := s.PausedProjects(ctx)
	if err != nil || len(ps) != 1 || ps[0].Project != "/src/app" || !ps[0].At.Equal(at) {
		t.Fatalf("PausedProjects = %+v, %v; want /src/app at its first pause", ps, err)
	}
	if resumed, err := s.ResumeProject(ctx, "/src/app"); err != nil || !resumed {
		t.Fatalf("ResumeProject = %v, %v", resumed, err)
	}
	if resumed, _ := s.ResumeProject(ctx, "/src/app"); resumed {
		t.Error("resumed a project twice")
	}
	// Without the table (an older ledger opened read-only): nothing paused.
	if _, err := s.db.Exec(`DROP TABLE paused_projects`); err != nil {
		t.Fatal(err)
	}
	if ps, err := s.PausedProjects(ctx); err != nil || len(ps) != 0 {
		t.Errorf("PausedProjects without the table = %v, %v", ps, err)
	}

	segs, err := s.FTSSegments(ctx)
	if err != nil || len(segs) != len(ftsTables) {
		t.Fatalf("FTSSegments = %v, %v", segs, err)
	}
	for _, r := range []HookReceipt{{Event: "Stop", At: at, Outcome: OutcomeOK}, {Event: "Stop", At: at.Add(time.Minute), Outcome: OutcomeDeferred},
		{Event: "SessionStart", At: at, Outcome: OutcomeOK}} {
		if err := s.AddHookReceipt(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	last, err := s.LastHookReceipts(ctx)
	if err != nil || len(last) != 2 || last[0].Event != "SessionStart" || last[1].Event != "Stop" || last[1].Outcome != OutcomeDeferred {
		t.Errorf("LastHookReceipts = %+v, %v", last, err)
	}
}
