package agenttest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// Gemini CLI, as it runs headless here (AGENTS.md): `gemini -p PROMPT
// --approval-mode yolo --output-format stream-json` against
// GOOGLE_GEMINI_BASE_URL with an API key, its settings choosing API-key
// auth, no folder trust, hooks on.

// GeminiEnv is the environment that runs Gemini CLI against s with home
// as its HOME (WriteGeminiSettings writes its settings). extra is appended.
func (s *Server) GeminiEnv(home string, extra ...string) []string {
	env := append(BaseEnv(home),
		"GEMINI_API_KEY=agenttest-key",
		"GOOGLE_GEMINI_BASE_URL="+s.URL(),
		"NO_COLOR=1",
	)
	env = append(env, GeminiCLI.runEnv()...)
	return append(env, extra...)
}

// WriteGeminiSettings writes home/.gemini/settings.json: API-key auth (the
// key from the environment), folder trust off (the project is a temp
// folder), hooks on, no usage statistics, no update check. ledger's hooks
// go in after (`ledger hooks install --agent gemini` edits the file).
func WriteGeminiSettings(home string) error {
	settings := map[string]any{
		"security":    map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}, "folderTrust": map[string]any{"enabled": false}},
		"hooksConfig": map[string]any{"enabled": true},
		"privacy":     map[string]any{"usageStatisticsEnabled": false},
		"general":     map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
	}
	return writeSettings(filepath.Join(home, ".gemini", "settings.json"), settings)
}

// writeSettings writes v as indented JSON at path, making its folder.
func writeSettings(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o600)
}

// GeminiCompressionPrompt starts the system instruction of Gemini CLI's
// compression requests (the summary, then its verification: two
// generateContent calls), read from its source (0.61.0,
// getCompressionPrompt).
const GeminiCompressionPrompt = "You are a specialized system component responsible for distilling chat history into a structured XML <state_snapshot>."

// IsGeminiCompression reports whether r is Gemini CLI asking for a
// compression summary or its verification.
func IsGeminiCompression(r *Request) bool {
	return r.Protocol == "gemini" && strings.Contains(r.System, GeminiCompressionPrompt)
}

// GeminiRouterPrompt is in the system instruction of Gemini CLI's model
// router (its numerical classifier, 0.61.0), which asks a flash-lite
// model for JSON {complexity_reasoning, complexity_score} before a turn.
const GeminiRouterPrompt = "You are a specialized Task Routing AI."

// IsGeminiRouter reports whether r is Gemini CLI's router asking which
// model should take the turn.
func IsGeminiRouter(r *Request) bool {
	return r.Protocol == "gemini" && strings.Contains(r.System, GeminiRouterPrompt)
}

// GeminiRouterAnswer is the router's answer: a simple task (the default
// model takes it).
func GeminiRouterAnswer() Turn {
	return Text(`{"complexity_reasoning": "A simple, explicit task.", "complexity_score": 10}`)
}

// GeminiSnapshot is a compression summary in the shape Gemini CLI's prompt
// asks for: a <state_snapshot> element.
func GeminiSnapshot(summary string) Turn {
	return Text("<state_snapshot>\n    <overall_goal>" + summary + "</overall_goal>\n</state_snapshot>")
}
