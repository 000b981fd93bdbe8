package engine

import (
	"path/filepath"

	"github.com/agentledger/ledger/transcript"
)

// Pi, OpenCode and Kilo CLI: the agents that take JS/TS plugins rather
// than hook commands (see plugins.go). Where each keeps its sessions and
// what its tools are called, read from each one's npm package
// (@mariozechner/pi-coding-agent 0.73.1, opencode-ai 1.18.33,
// @kilocode/cli 7.7.7) and the tool lists they send their model.

// piAgent keeps its sessions in ~/.pi/agent/sessions/--<cwd>--/
// ($PI_CODING_AGENT_DIR instead of ~/.pi/agent; $PI_CODING_AGENT_SESSION_DIR
// for the sessions alone). Its grep, find and ls tools are off unless
// enabled; it has no task list and no web tool.
var piAgent = Agent{Source: "pi", Name: "Pi", Command: "pi",
	Transcripts: func(home string, getenv func(string) string) []string {
		return []string{piSessionsDir(home, getenv)}
	},
	Tools: AgentTools{Edit: "edit, write", Shell: "bash", Read: "read (grep, find, ls when enabled)"}}

// openCodeAgent keeps every session in one SQLite database,
// $XDG_DATA_HOME/opencode/opencode.db ($OPENCODE_DB: another file, absolute
// or in that folder).
var openCodeAgent = Agent{Source: "opencode", Name: "OpenCode", Command: "opencode --prompt",
	Transcripts: func(home string, getenv func(string) string) []string {
		return []string{agentDatabase(home, getenv, transcript.FormatOpenCode)}
	},
	Tools: AgentTools{Edit: "edit, write", Shell: "bash", Read: "read, grep, glob", Plan: "todowrite", Web: "webfetch"}}

// kiloAgent is OpenCode's fork: $XDG_DATA_HOME/kilo/kilo.db ($KILO_DB).
var kiloAgent = Agent{Source: "kilo", Name: "Kilo CLI", Command: "kilo --prompt",
	Transcripts: func(home string, getenv func(string) string) []string {
		return []string{agentDatabase(home, getenv, transcript.FormatKilo)}
	},
	Tools: AgentTools{Edit: "edit, write", Shell: "bash", Read: "read, grep, glob", Plan: "todowrite", Web: "webfetch"}}

// piAgentDir is Pi's own folder: $PI_CODING_AGENT_DIR, else ~/.pi/agent.
func piAgentDir(home string, getenv func(string) string) string {
	return envOr(getenv, "PI_CODING_AGENT_DIR", filepath.Join(home, ".pi", "agent"))
}

// piSessionsDir is where Pi keeps its session files.
func piSessionsDir(home string, getenv func(string) string) string {
	return envOr(getenv, "PI_CODING_AGENT_SESSION_DIR", filepath.Join(piAgentDir(home, getenv), "sessions"))
}

// xdgDir is an XDG base folder: $name when absolute, else home/def.
func xdgDir(home string, getenv func(string) string, name, def string) string {
	return envOr(getenv, name, filepath.Join(home, def))
}

// agentDatabase is the session database OpenCode (or Kilo) uses, as it
// picks it for its release channel: $OPENCODE_DB ($KILO_DB), absolute or
// relative to its data folder, else <data>/opencode.db (kilo.db), the data
// folder being $XDG_DATA_HOME/opencode (kilo), ~/.local/share by default.
func agentDatabase(home string, getenv func(string) string, f transcript.Format) string {
	name, env := "opencode", "OPENCODE_DB"
	if f == transcript.FormatKilo {
		name, env = "kilo", "KILO_DB"
	}
	data := filepath.Join(xdgDir(home, getenv, "XDG_DATA_HOME", filepath.Join(".local", "share")), name)
	if v := getenv(env); v != "" && v != ":memory:" {
		if filepath.IsAbs(v) {
			return filepath.Clean(v)
		}
		return filepath.Join(data, filepath.Clean(v))
	}
	return filepath.Join(data, name+".db")
}
