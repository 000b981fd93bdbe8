package handoff

import (
	"reflect"
	"testing"
)

func TestFileChanges(t *testing.T) {
	run := func(c conversation, id, cmd string) conversation {
		return c.call("Bash", id, bash(cmd)).result(id, "", false)
	}
	edit := func(c conversation, id, p string) conversation {
		return c.call("Edit", id, map[string]any{"file_path": p, "old_string": "a", "new_string": "b"}).
			result(id, "The file "+p+" has been updated successfully.", false)
	}
	write := func(c conversation, id, p string) conversation {
		return c.call("Write", id, map[string]any{"file_path": p, "content": "x"}).
			result(id, "File created successfully at: "+p, false)
	}
	tests := []struct {
		name string
		msgs conversation
		want []FileChange
	}{
		{"edit, then mv: shown at the new path, moved from the old",
			run(edit(nil, "1", "/p/a.go"), "2", "mv a.go b.go"),
			[]FileChange{{Path: "/p/b.go", Status: FileMoved, From: "/p/a.go"}}},
		{"git mv of a file the session did not touch",
			run(nil, "1", "git mv internal/old/x.go internal/new/x.go"),
			[]FileChange{{Path: "/p/internal/new/x.go", Status: FileMoved, From: "/p/internal/old/x.go", Git: GitUncommitted}}},
		{"mv into a folder",
			run(edit(nil, "1", "/p/a.go"), "2", "mkdir -p pkg && mv a.go pkg/"),
			[]FileChange{{Path: "/p/pkg/a.go", Status: FileMoved, From: "/p/a.go"}}},
		{"a new file renamed is still new",
			run(write(nil, "1", "/p/a.go"), "2", "mv a.go b.go"),
			[]FileChange{{Path: "/p/b.go", Status: FileAdded}}},
		{"rm and git rm: deleted",
			run(run(nil, "1", "rm -f old.go"), "2", "git rm -q legacy/x.go"),
			[]FileChange{{Path: "/p/old.go", Status: FileDeleted, Git: GitUncommitted}, {Path: "/p/legacy/x.go", Status: FileDeleted, Git: GitUncommitted}}},
		{"rm -r of a folder deletes the known files under it",
			run(edit(edit(nil, "1", "/p/tmpl/a.html"), "2", "/p/tmpl/b.html"), "3", "rm -rf tmpl"),
			[]FileChange{{Path: "/p/tmpl/a.html", Status: FileDeleted}, {Path: "/p/tmpl/b.html", Status: FileDeleted}}},
		{"created then deleted: nothing changed",
			run(write(nil, "1", "/p/scratch.txt"), "2", "rm scratch.txt"),
			nil},
		{"git rm --cached untracks, does not delete",
			run(nil, "1", "git rm --cached secrets.env"),
			nil},
		{"sed -i, perl -pi, redirections, tee, cp, touch",
			run(run(run(run(run(nil, "1", "sed -i 's/old/new/g' a.go b.go"), "2", "perl -pi -e 's/x/y/' c.go"),
				"3", "go run ./gen > gen.go 2>/dev/null"), "4", "echo x | tee -a notes.md"), "5", "cp tmpl.yml ci.yml && touch .keep"),
			[]FileChange{{Path: "/p/a.go", Status: FileModified}, {Path: "/p/b.go", Status: FileModified}, {Path: "/p/c.go", Status: FileModified},
				{Path: "/p/gen.go", Status: FileModified}, {Path: "/p/notes.md", Status: FileModified}, {Path: "/p/ci.yml", Status: FileModified},
				{Path: "/p/.keep", Status: FileAdded}}},
		{"a heredoc writes its file, and its body is not read as commands",
			run(nil, "1", "cat > doc.md <<'EOF'\nmv a b\nrm -rf /\nEOF\necho done"),
			[]FileChange{{Path: "/p/doc.md", Status: FileModified}}},
		{"files outside the project are not the project's",
			run(nil, "1", "echo x > /tmp/out.txt && rm -f /tmp/cache.db"),
			nil},
		{"a failed command changes nothing",
			conversation{}.call("Bash", "1", bash("mv a.go b.go")).result("1", "Exit code 1\nmv: cannot stat 'a.go': No such file or directory", true),
			nil},
		{"a leading cd moves relative paths",
			run(nil, "1", "cd web && rm old.css"),
			[]FileChange{{Path: "/p/web/old.css", Status: FileDeleted}}},
		{"apply_patch: add, update, move, delete",
			conversation{}.call("apply_patch", "1", "*** Begin Patch\n*** Add File: n.rs\n+x\n*** Update File: a.rs\n*** Move to: b.rs\n@@\n-x\n+y\n*** Delete File: c.rs\n*** End Patch").
				result("1", "Exit code: 0\nOutput:\nSuccess. Updated the following files:\nA n.rs\nM b.rs\nD c.rs", false),
			[]FileChange{{Path: "/p/n.rs", Status: FileAdded}, {Path: "/p/b.rs", Status: FileMoved, From: "/p/a.rs"}, {Path: "/p/c.rs", Status: FileDeleted}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Extract(tc.msgs, ExtractOptions{Project: "/p"})
			if !reflect.DeepEqual(d.Files, tc.want) {
				t.Errorf("Files\n got %+v\nwant %+v", d.Files, tc.want)
			}
			var paths []string
			for _, f := range tc.want {
				paths = append(paths, f.Path)
			}
			if !reflect.DeepEqual(d.FilesModified, paths) {
				t.Errorf("FilesModified = %q, want %q", d.FilesModified, paths)
			}
		})
	}
}

func TestFileCommits(t *testing.T) {
	edit := func(c conversation, id, p string) conversation {
		return c.call("Edit", id, map[string]any{"file_path": p}).result(id, "ok", false)
	}
	commit := func(c conversation, id, cmd string) conversation {
		return c.call("Bash", id, bash(cmd)).result(id, "[main 1a2b3c4] feat: x\n 2 files changed, 10 insertions(+)", false)
	}
	gitOf := func(d Doc) map[string]string {
		m := map[string]string{}
		for _, f := range d.Files {
			m[f.Path] = f.Git
		}
		return m
	}
	tests := []struct {
		name string
		msgs conversation
		want map[string]string
	}{
		{"git add -A && git commit takes every change so far",
			edit(commit(edit(edit(nil, "1", "/p/a.go"), "2", "/p/b.go"), "3", `git add -A && git commit -m "feat: x"`), "4", "/p/c.go"),
			map[string]string{"/p/a.go": GitCommitted, "/p/b.go": GitCommitted, "/p/c.go": GitUncommitted}},
		{"git add of some files commits those",
			commit(edit(edit(nil, "1", "/p/a.go"), "2", "/p/b.go"), "3", `git add a.go && git commit -m "$(cat <<'EOF'\nfeat: a\nEOF\n)"`),
			map[string]string{"/p/a.go": GitCommitted, "/p/b.go": GitUncommitted}},
		{"staged earlier, committed later",
			commit(edit(nil, "1", "/p/a.go").call("Bash", "2", bash("git add a.go")).result("2", "", false), "3", "git commit -m wip"),
			map[string]string{"/p/a.go": GitCommitted}},
		{"git commit -am",
			commit(edit(nil, "1", "/p/a.go"), "2", "git commit -am wip"),
			map[string]string{"/p/a.go": GitCommitted}},
		{"a commit a hook rejected commits nothing",
			edit(nil, "1", "/p/a.go").call("Bash", "2", bash("git add -A && git commit -m x")).
				result("2", "Pre-commit validation failed:\n[FORMAT] not formatted", true),
			map[string]string{"/p/a.go": GitUncommitted}},
		{"changed again after the commit",
			edit(commit(edit(nil, "1", "/p/a.go"), "2", "git commit -am x"), "3", "/p/a.go"),
			map[string]string{"/p/a.go": GitUncommitted}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := gitOf(Extract(tc.msgs, ExtractOptions{Project: "/p"})); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("git state %v, want %v", got, tc.want)
			}
		})
	}
	// Without a sign of git (no branch, no git command), no state is claimed.
	d := Extract(edit(nil, "1", "/p/a.go"), ExtractOptions{Project: "/p"})
	if d.Files[0].Git != "" {
		t.Errorf("git state %q claimed without git", d.Files[0].Git)
	}
}

func TestWorkTreeWins(t *testing.T) {
	msgs := conversation{}.
		call("Edit", "1", map[string]any{"file_path": "/p/a.go"}).result("1", "ok", false).
		call("Edit", "2", map[string]any{"file_path": "/p/b.go"}).result("2", "ok", false).
		call("Edit", "3", map[string]any{"file_path": "/p/c.go"}).result("3", "ok", false)
	wt := &WorkTree{Changed: []FileChange{{Path: "/p/a.go", Status: FileModified}, {Path: "/p/gen/out.go", Status: FileAdded}},
		Committed: []string{"/p/b.go"}}
	d := Extract(msgs, ExtractOptions{Project: "/p", Branch: "main", WorkTree: wt})
	want := []FileChange{{Path: "/p/a.go", Status: FileModified, Git: GitUncommitted}, {Path: "/p/b.go", Status: FileModified, Git: GitCommitted},
		{Path: "/p/gen/out.go", Status: FileAdded, Git: GitUncommitted}}
	if !reflect.DeepEqual(d.Files, want) {
		t.Errorf("Files\n got %+v\nwant %+v (c.go was changed and changed back)", d.Files, want)
	}
}
