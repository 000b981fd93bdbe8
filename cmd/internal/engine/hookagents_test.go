package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDecodeRecordedAgentPayloads decodes every hook payload Gemini CLI,
// Qwen Code and Copilot CLI sent in the recorded runs
// (testdata/agents/*/hooks/NNN-<event>.json) as ledger's own: the event
// named as ledger names it, the session, the transcript where the agent
// gives one, and each event's own fields.
func TestDecodeRecordedAgentPayloads(t *testing.T) {
	t.Parallel()
	dirs := map[string]string{"gemini": "gemini-0.61.0", "qwen": "qwen-0.24.4", "copilot": "copilot-1.0.102"}
	for agent, dir := range dirs {
		files, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "agents", dir, "hooks", "*.json"))
		if err != nil || len(files) < 10 {
			t.Fatalf("%s: %d payloads (%v)", agent, len(files), err)
		}
		for _, f := range files {
			native := strings.TrimSuffix(filepath.Base(f)[4:], ".json")
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			o := HookOptions{Agent: agent}
			camel := agent == "copilot" && native[0] >= 'a' && native[0] <= 'z'
			if camel {
				o.Event = native
			}
			in, err := DecodeAgentHookInput(strings.NewReader(string(b)), o)
			if err != nil {
				t.Errorf("%s %s: %v", agent, filepath.Base(f), err)
				continue
			}
			want := map[string]string{"PreCompress": "PreCompact", "AfterAgent": "Stop", "AfterTool": "PostToolUse",
				"sessionStart": "SessionStart", "preCompact": "PreCompact", "agentStop": "Stop", "sessionEnd": "SessionEnd",
				"postToolUse": "PostToolUse", "userPromptSubmitted": "userPromptSubmitted"}[native]
			if want == "" {
				want = native
			}
			if in.Event != want || in.SessionID == "" || !filepath.IsAbs(in.Cwd) {
				t.Errorf("%s %s: event %q session %q cwd %q; want event %q", agent, filepath.Base(f), in.Event, in.SessionID, in.Cwd, want)
			}
			_, handled := HookBudget(in.Event)
			switch in.Event {
			case "PreCompact":
				if in.Trigger != "auto" && in.Trigger != "manual" || in.TranscriptPath == "" {
					t.Errorf("%s %s: trigger %q, transcript %q", agent, filepath.Base(f), in.Trigger, in.TranscriptPath)
				}
			case "SessionStart":
				if in.Source != "startup" && in.Source != "resume" && in.Source != "compact" {
					t.Errorf("%s %s: source %q", agent, filepath.Base(f), in.Source)
				}
			case "Stop":
				if in.TranscriptPath == "" {
					t.Errorf("%s %s: no transcript", agent, filepath.Base(f))
				}
			case "UserPromptSubmit", "userPromptSubmitted", "BeforeAgent":
				handled = !handled // ledger does not hook these
			}
			if !handled {
				t.Errorf("%s %s: event %q has no budget", agent, filepath.Base(f), in.Event)
			}
		}
	}
}

// TestDecodeAgentHookInputBad: what is not an agent's hook input is an
// error, never a guess.
func TestDecodeAgentHookInputBad(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		o  HookOptions
		in string
	}{
		{HookOptions{Agent: "copilot"}, `{"sessionId":"s","cwd":"/x"}`}, // no event, no --event
		{HookOptions{Agent: "gemini"}, `{"session_id":"s"}`},            // no hook_event_name
		{HookOptions{Agent: "qwen"}, `[1]`},
		{HookOptions{Agent: "copilot", Event: "agentStop"}, `{"sessionId": 5}`},
	} {
		if _, err := DecodeAgentHookInput(strings.NewReader(tc.in), tc.o); err == nil {
			t.Errorf("%+v %s: no error", tc.o, tc.in)
		}
	}
}
