package transcript

import (
	"bytes"
	"testing"
)

// addAgentSeeds gives a fuzz target the real sessions of Gemini CLI, Qwen
// Code and Copilot CLI, whole and line by line, and the Claude and Codex
// fixtures.
func addAgentSeeds(f *testing.F) {
	for _, fx := range agentFixtures {
		data := agentFixture(f, fx.file)
		f.Add(data)
		for _, line := range bytes.SplitAfter(data, []byte("\n")) {
			f.Add(line)
		}
	}
	addSeeds(f)
}

func FuzzReadGemini(f *testing.F) {
	addAgentSeeds(f)
	f.Add([]byte(`{"sessionId":"s","projectHash":"h"}` + "\n" + `{"$rewindTo":"m1"}` + "\n" +
		`{"$set":{"messages":[{"id":"x","type":"user","content":[{"text":"<state_snapshot>s</state_snapshot>"}]}]}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, FormatGemini, data) })
}

func FuzzReadQwen(f *testing.F) {
	addAgentSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, FormatQwen, data) })
}

func FuzzReadCopilot(f *testing.F) {
	addAgentSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, FormatCopilot, data) })
}
