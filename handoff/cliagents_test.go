package handoff

import (
	"reflect"
	"strings"
	"testing"
)

// TestExtractCLIAgentTools: the handoff of a Gemini CLI, Qwen Code or
// Copilot CLI session knows their tools: the files they wrote and edited
// (and created), the commands they ran, their task lists, their failures;
// their own files (plans, memory) are not the work's.
func TestExtractCLIAgentTools(t *testing.T) {
	t.Parallel()
	msgs := conversation{}.
		// Gemini CLI
		call("write_file", "g1", map[string]any{"file_path": "/p/notes-1.txt", "content": "alpha\n"}).
		result("g1", "Successfully created and wrote to new file: /p/notes-1.txt. Here is the updated code:\nalpha\n", false).
		call("replace", "g2", map[string]any{"file_path": "/p/main.go", "old_string": "a", "new_string": "b"}).
		result("g2", "Failed to edit, 0 occurrences found for old_string in /p/main.go", true).
		call("run_shell_command", "g3", map[string]any{"command": "go test ./..."}).result("g3", "ok  \tx\t0.1s", false).
		call("write_todos", "g4", map[string]any{"todos": []map[string]string{{"description": "write notes", "status": "completed"}, {"description": "ship it", "status": "in_progress"}}}).
		result("g4", "updated", false).
		call("write_file", "g5", map[string]any{"file_path": "/home/u/.gemini/tmp/p/plans/plan.md", "content": "x"}).result("g5", "ok", false).
		// Qwen Code
		call("edit", "q1", map[string]any{"file_path": "/p/lib.go", "old_string": "x", "new_string": "y"}).result("q1", "The file: /p/lib.go has been updated.", false).
		call("todo_write", "q2", map[string]any{"todos": []map[string]string{{"content": "review", "status": "pending", "id": "1"}}}).result("q2", "ok", false).
		// Copilot CLI
		call("create", "c1", map[string]any{"path": "/p/new.md", "file_text": "# new"}).result("c1", "Created file /p/new.md with 5 characters", false).
		call("edit", "c2", map[string]any{"path": "/p/README.md", "old_str": "a", "new_str": "b"}).result("c2", "File /p/README.md updated", false).
		call("bash", "c3", map[string]any{"command": "make lint"}).result("c3", "lint: 2 problems", true)
	d := Extract(msgs, ExtractOptions{Project: "/p/"})
	if want := []string{"/p/notes-1.txt", "/p/lib.go", "/p/new.md", "/p/README.md"}; !reflect.DeepEqual(d.FilesModified, want) {
		t.Errorf("FilesModified = %q, want %q", d.FilesModified, want)
	}
	added := map[string]bool{}
	for _, f := range d.Files {
		if f.Status == FileAdded {
			added[f.Path] = true
		}
	}
	if !added["/p/notes-1.txt"] || !added["/p/new.md"] || added["/p/lib.go"] {
		t.Errorf("files added: %v (files %+v)", added, d.Files)
	}
	errs := strings.Join(d.Errors, "\n")
	if !strings.Contains(errs, "replace main.go") || !strings.Contains(errs, "make lint") {
		t.Errorf("Errors = %q, want the failed replace and make lint", d.Errors)
	}
	if len(d.TestsRun) != 1 || d.TestsRun[0].Command != "go test ./..." || d.TestsRun[0].Status != TestPassed {
		t.Errorf("TestsRun = %+v", d.TestsRun)
	}
	// A task list is written whole each time: Qwen Code's last one holds.
	if len(d.Tasks) != 1 || d.Tasks[0].Subject != "review" || d.Tasks[0].Status != TaskPending {
		t.Errorf("Tasks = %+v, want Qwen Code's list", d.Tasks)
	}
	var tasks []string
	for _, task := range Extract(msgs[:8], ExtractOptions{Project: "/p/"}).Tasks {
		tasks = append(tasks, task.Status+" "+task.Subject)
	}
	if want := "in_progress ship it|completed write notes"; strings.Join(tasks, "|") != want {
		t.Errorf("Gemini CLI's tasks = %q, want %q", tasks, want)
	}
}
