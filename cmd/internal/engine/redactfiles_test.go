package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/store/secrets/secretstest"
)

// TestFilesAndLogRedacted: what the engine writes to files itself, a
// pending draft and its Markdown, and the hook log's lines, loses its
// secrets even when what it is given still holds one (writeFile, hookLog
// redact whatever they write).
func TestFilesAndLogRedacted(t *testing.T) {
	t.Parallel()
	e, st := openEngine(t)
	gh := secretstest.Kinds()[4].Value
	pw := "docker login -u deploy -p Zq8vLw2pXr0Tm2Kc registry.example.com"
	d := handoffDraft{SessionID: "s1", Path: filepath.Join(t.TempDir(), "h.md"),
		Doc:    handoff.Doc{Session: "s1", Task: "rotate " + gh, Markdown: "# Handoff\n\n" + pw + "\n"},
		Record: store.CompactionRecord{Source: "hook", Trigger: "auto", At: time.Now()}}
	p, err := deferHandoff(st, &d)
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	e.HookWarning(state, "PreCompact", errors.New("transcript_path /home/dev/"+gh+"/x.jsonl: not found"))
	e.hookLog(state, "receipt "+pw)
	for _, f := range []string{p, d.Path, filepath.Join(state, "ledger", "hook.log")} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), gh) || strings.Contains(string(b), "Zq8vLw2pXr0Tm2Kc") || !strings.Contains(string(b), "[REDACTED:") {
			t.Errorf("%s:\n%s", f, b)
		}
	}
}
