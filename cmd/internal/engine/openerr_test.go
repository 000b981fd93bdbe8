package engine

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/store"
)

// engineCalls are the engine's calls that use the ledger, by name, made
// on session id.
func engineCalls(t *testing.T, e *Engine, id string) map[string]func() error {
	ctx := context.Background()
	return map[string]func() error{
		"Session":           func() error { _, _, err := e.Session(ctx, id); return err },
		"OptionalSessionID": func() error { _, err := e.OptionalSessionID(ctx, id); return err },
		"Ingest":            func() error { _, err := e.Ingest(ctx, []string{sampleDir(t)}, IngestOptions{}); return err },
		"IngestFile": func() error {
			_, err := e.IngestFile(ctx, filepath.Join(sampleDir(t), "claude", "-home-dev-src-payments", sampleID+".jsonl"), IngestOptions{})
			return err
		},
		"IngestSession": func() error { return e.IngestSession(ctx, id) },
		"Sessions":      func() error { _, err := e.Sessions(ctx, "", 5); return err },
		"SessionsOf":    func() error { _, err := e.SessionsOf(ctx, store.SessionFilter{}); return err },
		"ListSessions":  func() error { _, err := e.ListSessions(ctx, store.SessionFilter{}); return err },
		"CountSessions": func() error { _, err := e.CountSessions(ctx, "/p"); return err },
		"Search":        func() error { _, err := e.Search(ctx, SearchRequest{Text: "x"}); return err },
		"Audit":         func() error { _, err := e.Audit(ctx, "", time.Time{}); return err },
		"AuditPage":     func() error { _, err := e.AuditPage(ctx, "", time.Time{}, 1, 10); return err },
		"Handoffs":      func() error { _, err := e.Handoffs(ctx, "", 0); return err },
		"FindHandoff":   func() error { _, err := e.FindHandoff(ctx, "12"); return err },
		"WriteHandoff":  func() error { _, err := e.WriteHandoff(ctx, id, HandoffRequest{Trigger: "manual"}); return err },
		"Compact":       func() error { _, err := e.Compact(ctx, id, HandoffRequest{Trigger: "manual"}); return err },
		"Note":          func() error { _, err := e.Note(ctx, NoteRequest{Session: id, Kind: "decision", Text: "x"}); return err },
		"Resume":        func() error { _, err := e.Resume(ctx, ResumeRequest{Session: id, Budget: 1000}); return err },
		"CrossResume": func() error {
			_, err := e.CrossResume(ctx, ResumeRequest{Session: id, Budget: 1000}, "codex")
			return err
		},
		"RefreshResume": func() error { return e.RefreshResumeState(ctx, id) },
		"LatestProject": func() error { _, err := e.LatestProjectSession(ctx, "/p", ""); return err },
		"Meter":         func() error { _, err := e.Meter(ctx, id, MeterOptions{}); return err },
		"MeterAccuracy": func() error { _, err := e.MeterAccuracy(ctx, id); return err },
		"View":          func() error { _, err := e.View(ctx, id); return err },
		"Timeline":      func() error { _, err := e.Timeline(ctx, id); return err },
		"LossReports":   func() error { _, err := e.LossReports(ctx, id); return err },
		"LossReport":    func() error { _, err := e.LossReport(ctx, 1); return err },
		"MessageInCtx":  func() error { _, err := e.MessageInContext(ctx, 1, 2); return err },
		"Export": func() error {
			_, err := e.Export(ctx, ExportRequest{Session: id, Format: "md"}, io.Discard)
			return err
		},
		"Forget":         func() error { _, err := e.Forget(ctx, id, true, false); return err },
		"ForgetProject":  func() error { _, err := e.ForgetProject(ctx, "/p", true, false); return err },
		"Pause":          func() error { _, err := e.Pause(ctx, "/p"); return err },
		"Unpause":        func() error { _, err := e.ResumeRecording(ctx, "/p"); return err },
		"Excluded":       func() error { _, err := e.ExcludedProjects(ctx); return err },
		"OptedOut":       func() error { _, err := e.OptedOut(ctx, "/p"); return err },
		"HookLog":        func() error { _, err := e.HookLog(ctx, store.ReceiptFilter{}); return err },
		"Doctor":         func() error { _, err := e.Doctor(ctx, false); return err },
		"Versions":       func() error { _, err := e.Versions(ctx, "test"); return err },
		"WindowOnRecord": func() error { _, err := e.WindowOnRecord(ctx, id); return err },
		"LearnWindow":    func() error { return e.LearnWindow(ctx, id, 1000) },
		"Sync":           func() error { _, err := e.Sync(ctx, "postgres://nobody@/x"); return err },
	}
}

// TestCallsFailWithTheOpenError: every call that needs the ledger returns
// the error its open failed with, as it is (a front door maps it by kind),
// and neither panics nor answers as if the ledger were empty.
func TestCallsFailWithTheOpenError(t *testing.T) {
	t.Parallel()
	why := &store.NoLedgerError{Path: "/nowhere/ledger.db"}
	e, err := Open(Config{DB: "/nowhere/ledger.db", DBError: why, Mode: Read})
	if err != nil {
		t.Fatal(err)
	}
	for name, call := range engineCalls(t, e, "abc") {
		err := call()
		var none *store.NoLedgerError
		if !errors.As(err, &none) {
			t.Errorf("%s on a ledger that did not open: %v, want the open's error", name, err)
		}
	}
	if st := e.Opened(); st != nil {
		t.Errorf("a store opened: %v", st.Path())
	}
}

// TestCallsFailOnAStoreThatFails: on a ledger that opened and then fails
// (here: its store closed under it), every call that needs it reports the
// failure: none panics, and none answers as if the ledger were empty.
func TestCallsFailOnAStoreThatFails(t *testing.T) {
	t.Parallel()
	e, s, home := hookEngine(t)
	ingestSample(t, e, home)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for name, call := range engineCalls(t, e, sampleID) {
		if name == "Sync" {
			continue // it opens the server first, and fails there (no server)
		}
		if err := call(); err == nil || !strings.Contains(err.Error(), "database is closed") {
			t.Errorf("%s on a store that fails: %v, want its error", name, err)
		}
	}
}
