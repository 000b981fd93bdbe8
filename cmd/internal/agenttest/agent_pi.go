package agenttest

import (
	"path/filepath"
	"strings"
)

// Pi, as it runs headless here (AGENTS.md): `pi -p --provider agenttest
// --model MODEL --mode json PROMPT...` with a provider of its models.json
// on the server's Chat Completions; `-c` continues the project's latest
// session; several prompts run one after the other in one process (an
// automatic compaction between them runs every event of ledger's
// extension).

// PiEnv is the environment that runs Pi against the provider WritePiConfig
// wrote, with home as its HOME. extra is appended.
func (s *Server) PiEnv(home string, extra ...string) []string {
	env := append(BaseEnv(home), "PI_OFFLINE=1", "NO_COLOR=1")
	return append(env, extra...)
}

// PiProvider is the name of the provider WritePiConfig writes.
const PiProvider = "agenttest"

// WritePiConfig writes home/.pi/agent/models.json, a provider PiProvider
// on s's Chat Completions with one model of window tokens, and
// settings.json, compacting when the context passes the window less 1,000
// tokens and keeping 200 of them.
func (s *Server) WritePiConfig(home, model string, window int) error {
	dir := filepath.Join(home, ".pi", "agent")
	models := map[string]any{"providers": map[string]any{PiProvider: map[string]any{
		"baseUrl": s.URL() + "/v1", "api": "openai-completions", "apiKey": "agenttest-key",
		"compat": map[string]any{"supportsDeveloperRole": false, "supportsReasoningEffort": false},
		"models": []any{map[string]any{"id": model, "name": model, "reasoning": false, "input": []string{"text"},
			"contextWindow": window, "maxTokens": 1000,
			"cost": map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}},
	}}}
	if err := writeSettings(filepath.Join(dir, "models.json"), models); err != nil {
		return err
	}
	return writeSettings(filepath.Join(dir, "settings.json"),
		map[string]any{"compaction": map[string]any{"enabled": true, "reserveTokens": 1000, "keepRecentTokens": 200}})
}

// PiCompactionPrompt starts the system prompt of Pi's compaction summary
// request (its core/compaction/utils.js, 0.73.1).
const PiCompactionPrompt = "You are a context summarization assistant."

// IsPiCompaction reports whether r is Pi asking for a compaction summary.
func IsPiCompaction(r *Request) bool {
	return r.Protocol == "openai-chat" && strings.Contains(r.System, PiCompactionPrompt)
}
