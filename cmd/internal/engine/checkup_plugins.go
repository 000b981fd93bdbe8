package engine

import (
	"context"
	"os"
	"path/filepath"

	"github.com/agentledger/ledger/cmd/internal/agentconfig"
	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/transcript"
)

// pluginAgents are the agents that take ledger's plugin file, whose
// set-up doctor reports when the user has them (their config folder, or
// their sessions, exist).
var pluginAgents = []string{"pi", "opencode", "kilo"}

// pluginSetups are the plugin agents' ledger plugins: for each agent whose
// config folder exists, whether ledger's plugin file is in it (Events: the
// events it runs ledger at; none when it is not there) and which ledger
// binary it runs. A user without the agent hears nothing of it.
func pluginSetups(o CheckupOptions, c *Checkup) []HookSetup {
	if o.Getenv == nil {
		return nil
	}
	var out []HookSetup
	for _, agent := range pluginAgents {
		path, err := agentconfig.PluginPath(agent, "user", o.Home, "", o.Getenv)
		if err != nil {
			continue
		}
		// ~/.config/opencode, ~/.pi/agent: the agent's own folder.
		if _, err := os.Stat(filepath.Dir(filepath.Dir(path))); err != nil {
			continue
		}
		hs := HookSetup{Agent: agent, File: path, Events: []string{}}
		if b, err := os.ReadFile(path); err == nil && agentconfig.IsLedgerPlugin(b) {
			for _, ev := range PluginHookEvents() {
				hs.Events = append(hs.Events, ev.Name)
			}
			if prog := agentconfig.PluginProgram(b); !sameFile(prog, o.Exe) {
				hs.Elsewhere = append(hs.Elsewhere, prog)
				c.Problems = append(c.Problems, agent+"'s ledger plugin runs another ledger binary than "+o.Exe+" (ledger hooks install --agent "+agent+")")
			}
		}
		out = append(out, hs)
	}
	return out
}

// pluginTranscripts are the plugin agents' sessions that exist: Pi's
// folder (as the other agents' folders are reported), and OpenCode's and
// Kilo's database, behind when it changed since the last ingest of all of
// it.
func pluginTranscripts(ctx context.Context, o CheckupOptions, cursors map[string]store.Cursor) []TranscriptFolder {
	if o.Getenv == nil {
		return nil
	}
	var out []TranscriptFolder
	for _, agent := range pluginAgents {
		a, ok := AgentBySource(agent)
		if !ok {
			continue
		}
		for _, p := range a.Transcripts(o.Home, o.Getenv) {
			fi, err := os.Stat(p)
			switch {
			case err != nil:
			case fi.IsDir():
				if tf, err := transcriptFolder(ctx, agent, p, cursors); err == nil {
					out = append(out, tf)
				}
			case fi.Mode().IsRegular():
				tf := TranscriptFolder{Agent: agent, Path: p, Found: true, Files: 1}
				if _, isDB := transcript.DatabaseFormat(p); isDB {
					size, mtime, err := dbStamp(p)
					c, seen := cursors[AbsPath(p)]
					if err == nil && (!seen || c.Size != size || c.ModTime != mtime) {
						// What the database and its WAL grew by since the
						// last ingest of all of it.
						tf.Behind, tf.Bytes = 1, size
						if seen && size > c.Size {
							tf.Bytes = size - c.Size
						}
						mt := fi.ModTime().UTC()
						tf.Oldest = &mt
					}
				}
				out = append(out, tf)
			}
		}
	}
	return out
}
