package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/store"
)

// ingestSample ingests the sample Claude Code session (copied under the
// engine's home) and returns its transcript's path.
func ingestSample(t *testing.T, e *Engine, home string) string {
	t.Helper()
	path, _ := sampleTranscript(t, home)
	if _, err := e.Ingest(context.Background(), []string{path}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestExportEveryWay: a session exported as the agent's JSONL and as
// Markdown, to a writer and to a file; restored where Claude Code looks
// for it, recorded as read (an ingest reads nothing back), and never over
// a file that is there.
func TestExportEveryWay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, s, home := hookEngine(t)
	ingestSample(t, e, home)
	sess, err := s.Session(ctx, sampleID)
	if err != nil {
		t.Fatal(err)
	}

	var jsonl bytes.Buffer
	x, err := e.Export(ctx, ExportRequest{Session: sampleID[:8], Format: "jsonl"}, &jsonl)
	if err != nil || x.Path != "" || int64(x.Messages) != sess.Messages || x.Session.ID != sampleID {
		t.Fatalf("export to a writer: %+v, %v", x, err)
	}
	ofSession := 0
	for i, l := range bytes.Split(bytes.TrimSpace(jsonl.Bytes()), []byte("\n")) {
		if !json.Valid(l) {
			t.Fatalf("exported line %d is not JSON: %.200q", i+1, l)
		}
		if bytes.Contains(l, []byte(`"sessionId":"`+sampleID+`"`)) {
			ofSession++
		}
	}
	if int64(ofSession) < sess.Messages {
		t.Errorf("%d records of the session exported for %d messages", ofSession, sess.Messages)
	}

	out := filepath.Join(home, "out", "s.md")
	if x, err := e.Export(ctx, ExportRequest{Session: sampleID, Format: "md", Out: out}, nil); err != nil || x.Path != out {
		t.Fatalf("export --out: %+v, %v", x, err)
	}
	if md, _ := os.ReadFile(out); !strings.HasPrefix(string(md), "# ") || !strings.Contains(string(md), "integration") {
		t.Errorf("the Markdown export: %.200q", md)
	}

	claudeDir := filepath.Join(home, "restored-claude")
	x, err = e.Export(ctx, ExportRequest{Session: sampleID, Format: "jsonl", Restore: true, ClaudeDir: claudeDir}, nil)
	if want := RestorePath(sess, claudeDir, ""); err != nil || x.Path != want {
		t.Fatalf("restore: %+v, %v; want it at %s", x, err, want)
	}
	sum, err := e.Ingest(ctx, []string{claudeDir}, IngestOptions{})
	if err != nil || sum.Messages != 0 {
		t.Errorf("ingest of the restored file: %+v, %v; want nothing read back", sum, err)
	}
	if _, err := e.Export(ctx, ExportRequest{Session: sampleID, Format: "jsonl", Restore: true, ClaudeDir: claudeDir}, nil); err == nil {
		t.Error("a second restore replaced the file it wrote")
	}
	if _, err := e.Export(ctx, ExportRequest{Session: "nosuchsession", Format: "md"}, &bytes.Buffer{}); !notFound(err) {
		t.Errorf("export of an unknown session: %v", err)
	}
}

// TestStatusLineFromTheLedger: the status line shows the age of the
// session's latest handoff, at the engine's clock, and no "handoff due"
// once there is one; input it cannot read gives the fallback.
func TestStatusLineFromTheLedger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, s, home := hookEngine(t)
	ingestSample(t, e, home)
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "statusline", "current.json"))
	if err != nil {
		t.Fatal(err)
	}
	raw = bytes.ReplaceAll(raw, []byte("00893aaf-19fa-41d2-8238-13269b9b3ca0"), []byte(sampleID))
	getenv := func(string) string { return "" }
	if line := e.StatusLine(ctx, raw, getenv, true); !strings.Contains(line, "no handoff") {
		t.Errorf("before a handoff: %q", line)
	}
	if _, err := e.WriteHandoff(ctx, sampleID, HandoffRequest{Trigger: "manual", Source: "cli"}); err != nil {
		t.Fatal(err)
	}
	later := engineOf(s)
	later.home = home
	later.now = func() time.Time { return e.now().Add(5 * time.Minute) }
	if line := later.StatusLine(ctx, raw, getenv, true); !strings.Contains(line, "· handoff 5m ago") || strings.Contains(line, "due") {
		t.Errorf("five minutes after the handoff: %q", line)
	}
	if line := e.StatusLine(ctx, raw, getenv, false); !strings.Contains(line, "no handoff") {
		t.Errorf("without the ledger: %q", line)
	}
	if line := e.StatusLine(ctx, []byte("{not json"), getenv, true); line != StatusFallback {
		t.Errorf("bad input: %q", line)
	}
	if session, tokens := StatusWindow(raw); session != sampleID || tokens <= 0 {
		t.Errorf("StatusWindow = %q, %d", session, tokens)
	}
	if n, err := e.WindowOnRecord(ctx, "nosuchsession"); n != 0 || err != nil {
		t.Errorf("WindowOnRecord of an unknown session = %d, %v", n, err)
	}
}

// TestHandoffsListedAndFound: a session's handoffs, newest first, and
// one found by its id or its session's.
func TestHandoffsListedAndFound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _, home := hookEngine(t)
	ingestSample(t, e, home)
	for _, task := range []string{"first task", "second task"} {
		if _, err := e.WriteHandoff(ctx, sampleID, HandoffRequest{Task: task, Trigger: "manual", Source: "cli"}); err != nil {
			t.Fatal(err)
		}
	}
	docs, err := e.Handoffs(ctx, sampleID[:8], 0)
	if err != nil || len(docs) != 2 || docs[0].Task != "second task" {
		t.Fatalf("handoffs: %d, %v", len(docs), err)
	}
	if one, err := e.Handoffs(ctx, sampleID, 1); err != nil || len(one) != 1 {
		t.Errorf("limit 1: %d, %v", len(one), err)
	}
	if d, err := e.FindHandoff(ctx, sampleID); err != nil || d.Task != "second task" {
		t.Errorf("FindHandoff(session) = %q, %v; want the latest", d.Task, err)
	}
	if _, err := e.FindHandoff(ctx, "nosuchthing"); err == nil {
		t.Error("FindHandoff of nothing found something")
	}
}

// TestCheckupOfASetUp: the hooks installed for Claude Code (running this
// binary or another), the transcripts not ingested yet, the last receipt
// of each event, and what is missing said as problems.
func TestCheckupOfASetUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, s, home := hookEngine(t)
	claudeDir := filepath.Join(home, ".claude")
	c, err := e.Checkup(ctx, CheckupOptions{ClaudeDir: claudeDir, CodexHome: filepath.Join(home, ".codex"), Exe: "/usr/bin/ledger"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Problems) == 0 || len(c.Transcripts) == 0 || c.Transcripts[0].Found {
		t.Errorf("a bare home: %+v", c)
	}

	proj := filepath.Join(claudeDir, "projects", "-home-dev-src-payments")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	path, _ := sampleTranscript(t, proj)
	settings := `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/usr/bin/ledger hook"}]}],
		"PreCompact": [{"hooks": [{"type": "command", "command": "/opt/other/ledger hook"}]}]}}`
	if err := os.WriteFile(filepath.Join(claudeDir, "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.AddHookReceipt(ctx, store.HookReceipt{SessionID: sampleID, Event: "Stop", At: time.Now().UTC(), Outcome: store.OutcomeOK}); err != nil {
		t.Fatal(err)
	}
	c, err = e.Checkup(ctx, CheckupOptions{ClaudeDir: claudeDir, CodexHome: filepath.Join(home, ".codex"), Exe: "/usr/bin/ledger"})
	if err != nil {
		t.Fatal(err)
	}
	var claude *HookSetup
	for i := range c.Hooks {
		if c.Hooks[i].Agent == "claude" {
			claude = &c.Hooks[i]
		}
	}
	if claude == nil || !contains(claude.Events, "Stop") || !contains(claude.Missing, "SessionStart") || !contains(claude.Elsewhere, "/opt/other/ledger") {
		t.Errorf("claude's hooks: %+v", claude)
	}
	if tr := c.Transcripts[0]; !tr.Found || tr.Files != 1 || tr.Behind != 1 || tr.Bytes == 0 || tr.Oldest == nil {
		t.Errorf("transcripts before the ingest: %+v", tr)
	}
	if len(c.Receipts) != 1 || c.Receipts[0].Event != "Stop" {
		t.Errorf("receipts: %+v", c.Receipts)
	}
	if _, err := e.Ingest(ctx, []string{path}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	c, err = e.Checkup(ctx, CheckupOptions{ClaudeDir: claudeDir, CodexHome: filepath.Join(home, ".codex"), Exe: "/usr/bin/ledger"})
	if tr := c.Transcripts[0]; err != nil || tr.Behind != 0 || tr.Bytes != 0 {
		t.Errorf("transcripts after the ingest: %+v (%v)", tr, err)
	}
	if c.FTSSegments["messages_fts"] < 1 {
		t.Errorf("segments %v", c.FTSSegments)
	}
}
