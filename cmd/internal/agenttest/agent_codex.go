package agenttest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Codex CLI, as it runs headless here (AGENTS.md): `codex exec
// --skip-git-repo-check --dangerously-bypass-hook-trust PROMPT` with a
// model provider of its config.toml pointed at the server's Responses API.

// CodexKeyEnv names the variable Codex reads the fake provider's key from.
const CodexKeyEnv = "AGENTTEST_API_KEY"

// CodexEnv is the environment that runs Codex against the provider
// WriteCodexConfig wrote, with home as its HOME. extra is appended.
func (s *Server) CodexEnv(home string, extra ...string) []string {
	env := append(BaseEnv(home), CodexKeyEnv+"=agenttest-key")
	return append(env, extra...)
}

// WriteCodexConfig writes home/.codex/config.toml: the model and a model
// provider "agenttest" on s's Responses API, then extra TOML lines (top
// level keys, such as model_auto_compact_token_limit = 100000).
func (s *Server) WriteCodexConfig(home, model string, extra ...string) error {
	dir := filepath.Join(home, ".codex")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "model = %q\nmodel_provider = \"agenttest\"\n", model)
	for _, line := range extra {
		b.WriteString(line + "\n")
	}
	fmt.Fprintf(&b, "\n[model_providers.agenttest]\nname = \"agenttest\"\nbase_url = %q\nenv_key = %q\nwire_api = \"responses\"\n",
		s.URL()+"/v1", CodexKeyEnv)
	return os.WriteFile(filepath.Join(dir, "config.toml"), []byte(b.String()), 0o600)
}

// CodexCompactionPrompt starts the prompt Codex sends the model for a
// local compaction (its core/src/compact.rs, 0.169.0).
const CodexCompactionPrompt = "You are performing a CONTEXT CHECKPOINT COMPACTION"

// IsCodexCompaction reports whether r is Codex asking for a compaction
// summary: its last user message is the compaction prompt.
func IsCodexCompaction(r *Request) bool {
	return r.Protocol == "openai-responses" && strings.Contains(r.LastUserText(), CodexCompactionPrompt)
}
