package engine

import "path/filepath"

// Gemini CLI, Qwen Code and GitHub Copilot CLI: where each keeps its
// sessions and what its tools are called, read from each one's npm package
// (@google/gemini-cli 0.61.0, @qwen-code/qwen-code 0.24.4, @github/copilot
// 1.0.102) and the tool lists they send their model.

// geminiAgent keeps its sessions in ~/.gemini/tmp/<project>/chats
// ($GEMINI_CLI_HOME replaces the home folder).
var geminiAgent = Agent{Source: "gemini", Name: "Gemini CLI", Command: "gemini",
	Transcripts: func(home string, getenv func(string) string) []string {
		return []string{filepath.Join(envOr(getenv, "GEMINI_CLI_HOME", home), ".gemini", "tmp")}
	},
	Tools: AgentTools{Edit: "write_file, replace", Shell: "run_shell_command", Read: "read_file, read_many_files, grep_search, glob",
		Plan: "write_todos", Web: "google_web_search, web_fetch"}}

// qwenAgent keeps its sessions in ~/.qwen/projects/<project>/chats
// ($QWEN_RUNTIME_DIR, else $QWEN_HOME, instead of ~/.qwen). A prompt given
// as an argument runs once and exits: -i keeps the session open.
var qwenAgent = Agent{Source: "qwen", Name: "Qwen Code", Command: "qwen -i",
	Transcripts: func(home string, getenv func(string) string) []string {
		base := envOr(getenv, "QWEN_HOME", filepath.Join(home, ".qwen"))
		return []string{filepath.Join(envOr(getenv, "QWEN_RUNTIME_DIR", base), "projects")}
	},
	Tools: AgentTools{Edit: "write_file, edit", Shell: "run_shell_command", Read: "read_file, grep_search, glob",
		Plan: "todo_write", Web: "web_fetch, web_search"}}

// copilotAgent keeps its sessions in ~/.copilot/session-state/<session>
// ($COPILOT_HOME instead of ~/.copilot). It has no task-list tool of its
// own.
var copilotAgent = Agent{Source: "copilot", Name: "Copilot CLI", Command: "copilot -i",
	Transcripts: func(home string, getenv func(string) string) []string {
		return []string{filepath.Join(envOr(getenv, "COPILOT_HOME", filepath.Join(home, ".copilot")), "session-state")}
	},
	Tools: AgentTools{Edit: "create, edit", Shell: "bash", Read: "view, grep, glob"}}
