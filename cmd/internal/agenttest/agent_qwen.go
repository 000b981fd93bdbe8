package agenttest

import (
	"path/filepath"
	"strings"
)

// Qwen Code, as it runs headless here (AGENTS.md): `qwen -p PROMPT
// --auth-type openai --approval-mode yolo --output-format stream-json`
// against OPENAI_BASE_URL's Chat Completions; `-c` continues the
// project's latest session, and `-p /compress` compresses it.

// QwenEnv is the environment that runs Qwen Code against s with home as
// its HOME, model as its model. extra is appended.
func (s *Server) QwenEnv(home, model string, extra ...string) []string {
	env := append(BaseEnv(home),
		"OPENAI_API_KEY=agenttest-key",
		"OPENAI_BASE_URL="+s.URL()+"/v1",
		"OPENAI_MODEL="+model,
		"QWEN_CODE_SUPPRESS_YOLO_WARNING=1",
		"NO_COLOR=1",
	)
	env = append(env, QwenCode.runEnv()...)
	return append(env, extra...)
}

// WriteQwenSettings writes home/.qwen/settings.json: no usage statistics
// (Qwen Code sends them to its vendor by default: a name lookup and a
// connection that go nowhere here). ledger's hooks go in after (`ledger
// hooks install --agent qwen` edits the file).
func WriteQwenSettings(home string) error {
	return writeSettings(filepath.Join(home, ".qwen", "settings.json"),
		map[string]any{"privacy": map[string]any{"usageStatisticsEnabled": false}})
}

// QwenCompressionDirective is the last user message of Qwen Code's
// compression request, read from its source (0.24.4,
// COMPRESSION_REQUEST_DIRECTIVE; when it shares the prompt cache, the
// directive ends a longer message).
const QwenCompressionDirective = "First, reason in your <analysis> block. Then, produce the <state_snapshot> XML."

// IsQwenCompaction reports whether r is Qwen Code asking for a
// compression summary.
func IsQwenCompaction(r *Request) bool {
	return r.Protocol == "openai-chat" && strings.Contains(r.LastUserText(), QwenCompressionDirective)
}

// QwenSnapshot is a compression summary in the shape Qwen Code's prompt
// asks for: an <analysis> block, then a <state_snapshot> element, which
// Qwen Code requires closed and not empty.
func QwenSnapshot(summary string) Turn {
	return Text("<analysis>\nThe conversation, in order.\n</analysis>\n<state_snapshot>\n    <primary_request_and_intent>" +
		summary + "</primary_request_and_intent>\n</state_snapshot>")
}
