package agenttest

import "strings"

// Claude Code, as it runs headless here (AGENTS.md): `claude -p PROMPT
// --output-format json` against ANTHROPIC_BASE_URL, with an API key (any
// string: the server does not check it).

// ClaudeEnv is the environment that runs Claude Code against s with home
// as its HOME: no telemetry, no update check, nothing but the model's
// requests going out. extra is appended.
func (s *Server) ClaudeEnv(home string, extra ...string) []string {
	env := append(BaseEnv(home),
		"ANTHROPIC_BASE_URL="+s.URL(),
		"ANTHROPIC_API_KEY=agenttest-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
	)
	return append(env, extra...)
}

// ClaudeCompactionPrompt starts the instruction Claude Code appends to the
// conversation when it asks the model for a compaction summary (/compact
// or auto-compaction): read from its source (2.1.328).
const ClaudeCompactionPrompt = "CRITICAL: Respond with TEXT ONLY"

// IsClaudeCompaction reports whether r is Claude Code asking for a
// compaction summary: its last user message carries the instruction.
func IsClaudeCompaction(r *Request) bool {
	return r.Protocol == "anthropic" && strings.Contains(r.LastUserText(), ClaudeCompactionPrompt)
}

// ClaudeSummary is a compaction summary in the shape Claude Code's prompt
// asks for: an <analysis> block, then a <summary> block.
func ClaudeSummary(summary string) Turn {
	return Text("<analysis>\nThe conversation so far, read in order.\n</analysis>\n<summary>\n" + summary + "\n</summary>")
}
