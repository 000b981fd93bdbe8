package agenttest

import "strings"

// GitHub Copilot CLI, as it runs headless here (AGENTS.md): offline, no
// GitHub sign-in, its model a provider's Chat Completions: `copilot -p
// PROMPT --allow-all-tools --output-format json`; `--continue` continues
// the latest session, and `-p /compact` compacts it.

// CopilotKey is the provider key Copilot CLI is given: a long unique
// string, since Copilot CLI masks the key wherever it appears in its
// output (a short one would mask common words).
const CopilotKey = "agenttest-copilot-key-4f1d0c7e9b2a"

// CopilotEnv is the environment that runs Copilot CLI against s with home
// as its HOME, model as its model and maxPrompt the prompt tokens it may
// send (its compaction point follows from it). extra is appended.
func (s *Server) CopilotEnv(home, model string, maxPrompt int, extra ...string) []string {
	env := append(BaseEnv(home),
		"COPILOT_OFFLINE=true",
		"COPILOT_PROVIDER_BASE_URL="+s.URL()+"/v1",
		"COPILOT_PROVIDER_API_KEY="+CopilotKey,
		"COPILOT_MODEL="+model,
		"COPILOT_AUTO_UPDATE=false",
		"COPILOT_PROVIDER_MAX_PROMPT_TOKENS="+itoa(maxPrompt),
		"NO_COLOR=1",
	)
	env = append(env, CopilotCLI.runEnv()...)
	return append(env, extra...)
}

// CopilotCompactionPrompt starts the request Copilot CLI sends for a
// compaction summary (automatic or /compact), read from its runtime
// (1.0.102); the request still offers the tools.
const CopilotCompactionPrompt = "Please create a detailed summary of the conversation so far."

// IsCopilotCompaction reports whether r is Copilot CLI asking for a
// compaction summary.
func IsCopilotCompaction(r *Request) bool {
	return r.Protocol == "openai-chat" && strings.Contains(r.LastUserText(), CopilotCompactionPrompt)
}
