package engine

import (
	"os"
	"path/filepath"
	"strings"
)

// Agent is a coding agent whose sessions ledger reads: one entry of the
// table below, which every front door consults (the --agent, --for and
// --to values, default discovery, cross-agent handoffs, names for people).
type Agent struct {
	// Source is its sessions' source in the ledger (a transcript.Format)
	// and its name on the command line: "claude", "codex", "gemini".
	Source string
	// Name is its name for people: "Claude Code".
	Name string
	// Transcripts are the folders it keeps its sessions in (or its
	// session database: OpenCode, Kilo), for a user
	// whose home is home and whose environment getenv reads (each agent's
	// own variables move them).
	Transcripts func(home string, getenv func(string) string) []string
	// Tools name its tools by what they do, for a handoff that crosses
	// agents ("" where it has none).
	Tools AgentTools
	// Command starts it with a first prompt: the prompt follows, quoted.
	Command string
}

// AgentTools are an agent's tool names by role, as its model sees them.
type AgentTools struct {
	Edit  string // writing and editing files
	Shell string // running commands
	Read  string // reading and searching files
	Plan  string // the task list
	Web   string // searching and fetching the web
}

// agents is every agent ledger reads, in the order they are listed to
// people. To add one: its transcript reader (transcript.Format), an entry
// here, and its hooks where it has them.
var agents = []Agent{
	{Source: "claude", Name: "Claude Code", Command: "claude",
		Transcripts: func(home string, getenv func(string) string) []string {
			return []string{filepath.Join(envOr(getenv, "CLAUDE_CONFIG_DIR", filepath.Join(home, ".claude")), "projects")}
		},
		Tools: AgentTools{Edit: "Edit, MultiEdit, Write", Shell: "Bash", Read: "Read, Grep, Glob", Plan: "TodoWrite", Web: "WebSearch, WebFetch"}},
	{Source: "codex", Name: "Codex", Command: "codex",
		Transcripts: func(home string, getenv func(string) string) []string {
			return []string{filepath.Join(envOr(getenv, "CODEX_HOME", filepath.Join(home, ".codex")), "sessions")}
		},
		Tools: AgentTools{Edit: "apply_patch", Shell: "exec_command (your shell)", Read: "your shell (cat, sed -n, rg)", Plan: "update_plan", Web: "web_search"}},
	geminiAgent,
	qwenAgent,
	copilotAgent,
	piAgent,
	openCodeAgent,
	kiloAgent,
}

// Agents is every agent ledger reads.
func Agents() []Agent { return agents }

// AgentBySource is the agent whose sessions have source s; ok is false
// for a source ledger does not know.
func AgentBySource(s string) (Agent, bool) {
	if s == "" {
		s = "claude"
	}
	for _, a := range agents {
		if a.Source == s {
			return a, true
		}
	}
	return Agent{}, false
}

// AgentSources lists the agents' sources ("claude, codex, gemini, ...")
// for a message that says which values a flag takes.
func AgentSources() string {
	names := make([]string, len(agents))
	for i, a := range agents {
		names[i] = a.Source
	}
	return strings.Join(names, ", ")
}

// AgentFolder is an agent's transcripts folder.
type AgentFolder struct {
	Agent string `json:"agent"`
	Path  string `json:"path"`
}

// TranscriptFolders are the folders where the agents keep their sessions
// (each agent's, moved by its own environment variables), whether or not
// they exist.
func TranscriptFolders(home string, getenv func(string) string) []AgentFolder {
	var out []AgentFolder
	for _, a := range agents {
		for _, dir := range a.Transcripts(home, getenv) {
			out = append(out, AgentFolder{Agent: a.Source, Path: dir})
		}
	}
	return out
}

// envOr is the environment variable name when it is set to an absolute
// path, else def: a relative path would depend on where ledger runs.
func envOr(getenv func(string) string, name, def string) string {
	if v := getenv(name); v != "" && filepath.IsAbs(v) {
		return filepath.Clean(v)
	}
	return def
}

// ExistingTranscriptFolders splits TranscriptFolders into those that are
// on this machine (a folder, or an agent's session database) and those
// that are not: what `ledger ingest` with no path reads, and what it says
// it looked for.
func ExistingTranscriptFolders(home string, getenv func(string) string) (found, missing []AgentFolder) {
	for _, f := range TranscriptFolders(home, getenv) {
		if fi, err := os.Stat(f.Path); err == nil && (fi.IsDir() || fi.Mode().IsRegular()) {
			found = append(found, f)
		} else {
			missing = append(missing, f)
		}
	}
	return found, missing
}
