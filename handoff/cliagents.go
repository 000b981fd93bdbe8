package handoff

// The tools of Gemini CLI (0.61.0), Qwen Code (0.24.4) and GitHub Copilot
// CLI (1.0.102) that a handoff reads, from each one's tool list and
// results, beside Claude Code's and Codex's in extract.go:
//
//	tool                 agents           reads
//	-------------------  ---------------  ------------------------------------
//	write_file           Gemini, Qwen     {file_path, content}: a file written
//	replace              Gemini           {file_path, old_string, new_string}
//	edit                 Qwen, Copilot    {file_path} (Qwen), {path} (Copilot)
//	create               Copilot          {path, file_text}: a file created
//	run_shell_command    Gemini, Qwen     {command}
//	bash                 Copilot          {command}
//	write_todos          Gemini           {todos: [{description, status}]}
//	todo_write           Qwen             {todos: [{content, status, id}]}
//
// Their file tools flag a failed call (the readers set is_error from the
// call's status), so no flag means success, as with Claude Code's.

import (
	"strings"
	"sync"

	"github.com/agentledger/ledger/compact"
)

// cliFileTools are the file-changing tools of Gemini CLI, Qwen Code and
// Copilot CLI.
var cliFileTools = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"write_file": true, "replace": true, "edit": true, "create": true}
})

// cliTodos is a whole task list written at once: Gemini CLI's write_todos
// (items' text in "description") or Qwen Code's todo_write ("content").
func cliTodos(x *extractor, u *use, b compact.Block) {
	if !u.main {
		return
	}
	text := "content"
	if b.ToolName == "write_todos" {
		text = "description"
	}
	x.tracker.todo = x.tracker.wholeList(x.tracker.todo, u.input, "todos", text, TrackerTodo, x.seq)
}

// cliFileCreated tells whether a file tool's result says it made a new
// file: Gemini CLI's and Qwen Code's "Successfully created and wrote to
// new file", Copilot CLI's "Created file".
func cliFileCreated(tool, text string) bool {
	switch tool {
	case "write_file":
		return strings.Contains(text, "Successfully created and wrote to new file")
	case "create":
		return strings.HasPrefix(strings.TrimSpace(text), "Created file ")
	}
	return false
}

// cliAgentFile tells these agents' own files (their plans, todos and
// memories, kept in their home folders) from the work's.
func cliAgentFile(p string) bool {
	return strings.Contains(p, "/.gemini/") || strings.Contains(p, "/.qwen/") || strings.Contains(p, "/.copilot/")
}
