package engine

import (
	"context"
	"os"

	"github.com/agentledger/ledger/cmd/internal/agentconfig"
	"github.com/agentledger/ledger/store"
)

// checkupAgents are the agents whose set-up doctor reports beside Claude
// Code's and Codex's, when the user has them: their settings file exists,
// or their sessions folder.
var checkupAgents = []string{"gemini", "qwen", "copilot"}

// agentHookSetups are the hooks of the other agents whose user settings
// exist. A user without Gemini CLI hears nothing of it.
func agentHookSetups(o CheckupOptions, c *Checkup) []HookSetup {
	if o.Getenv == nil {
		return nil
	}
	var out []HookSetup
	for _, agent := range checkupAgents {
		file, err := agentconfig.AgentHooksPath(agent, "user", o.Home, "", o.Getenv)
		if err != nil {
			continue
		}
		if _, err := os.Stat(file); err != nil {
			continue
		}
		hs, err := hookSetup(agent, file, o.Exe)
		if err != nil {
			c.Problems = append(c.Problems, err.Error())
			continue
		}
		if len(hs.Elsewhere) > 0 {
			c.Problems = append(c.Problems, agent+" hooks run another ledger binary than "+o.Exe+" (ledger hooks install --agent "+agent+")")
		}
		out = append(out, hs)
	}
	return out
}

// agentTranscriptFolders are the other agents' sessions folders that
// exist, and how far the ledger is behind each.
func agentTranscriptFolders(ctx context.Context, o CheckupOptions, cursors map[string]store.Cursor) ([]TranscriptFolder, error) {
	if o.Getenv == nil {
		return nil, nil
	}
	var out []TranscriptFolder
	for _, agent := range checkupAgents {
		a, ok := AgentBySource(agent)
		if !ok {
			continue
		}
		for _, dir := range a.Transcripts(o.Home, o.Getenv) {
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				continue
			}
			tf, err := transcriptFolder(ctx, agent, dir, cursors)
			if err != nil {
				return nil, err
			}
			out = append(out, tf)
		}
	}
	return out, nil
}
