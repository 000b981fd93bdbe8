package engine

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentHookInputs decodes every hook input Claude Code 2.1.328 and
// Codex 0.169.0 gave ledger's hooks in real runs (testdata/agents, logged
// beside ledger's own hook): each names its event, session and
// transcript, and the fields ledger acts on are where it reads them.
func TestAgentHookInputs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file   string
		events map[string]int // how many of each event the run fired
	}{
		{"claude-2.1.328", map[string]int{"SessionStart": 5, "PostToolUse": 3, "PreCompact": 2, "Stop": 2, "SessionEnd": 3}},
		{"codex-0.169.0", map[string]int{"SessionStart": 3, "PreCompact": 2, "PostCompact": 2, "Stop": 1, "SessionEnd": 1}},
	} {
		f, err := os.Open(filepath.Join("..", "..", "..", "testdata", "agents", tc.file, "hooks.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		got := map[string]int{}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			in, err := DecodeHookInput(strings.NewReader(sc.Text()))
			if err != nil {
				t.Fatalf("%s: %v: %s", tc.file, err, sc.Text())
			}
			got[in.Event]++
			if in.SessionID == "" || !strings.HasSuffix(in.TranscriptPath, ".jsonl") || in.Cwd != "/home/dev/src/tidepool" {
				t.Errorf("%s %s: session %q, transcript %q, cwd %q", tc.file, in.Event, in.SessionID, in.TranscriptPath, in.Cwd)
			}
			switch in.Event {
			case "SessionStart":
				if in.Source != "startup" && in.Source != "resume" && in.Source != "compact" {
					t.Errorf("%s SessionStart source %q", tc.file, in.Source)
				}
			case "PreCompact":
				if in.Trigger != "manual" && in.Trigger != "auto" {
					t.Errorf("%s PreCompact trigger %q", tc.file, in.Trigger)
				}
			case "PostToolUse":
				if in.ToolName == "" {
					t.Errorf("%s PostToolUse without tool_name", tc.file)
				}
			}
			// Codex names the model at every event but SessionEnd; Claude
			// Code only at SessionStart after a compaction.
			if strings.HasPrefix(tc.file, "codex") && in.Event != "SessionEnd" && in.Model != "gpt-5.5" {
				t.Errorf("%s %s: model %q", tc.file, in.Event, in.Model)
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		for ev, n := range tc.events {
			if got[ev] != n {
				t.Errorf("%s: %d %s inputs, want %d (all: %v)", tc.file, got[ev], ev, n, got)
			}
		}
	}
}
