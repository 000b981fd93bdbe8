package transcript

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestSessionHint(t *testing.T) {
	tests := []struct{ path, want string }{
		{"/x/rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl", "019c8a59-e9dd-71f0-9ae3-4079fe9726a9"},
		{"258c7280-ae70-4798-800f-63464d01a85d.jsonl", "258c7280-ae70-4798-800f-63464d01a85d"},
		{"/p/spotter-258c7280-ae70-4798-800f-63464d01a85d.subagents.agent-acompact-fffbd0.jsonl", "258c7280-ae70-4798-800f-63464d01a85d"},
		{"/home/u/.claude/projects/258c7280-ae70-4798-800f-63464d01a85d/notes.jsonl", ""},
		{"session.jsonl", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := SessionHint(tt.path); got != tt.want {
			t.Errorf("SessionHint(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

func TestWalk(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links")
	}
	root := t.TempDir()
	outside := t.TempDir()
	mk := func(path string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		t.Helper()
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	mk(filepath.Join(root, "b", "2.jsonl"))
	mk(filepath.Join(root, "b", "1.jsonl"))
	mk(filepath.Join(root, "a.jsonl"))
	mk(filepath.Join(root, "notes.txt"))
	mk(filepath.Join(root, "c", "d", "deep.jsonl"))
	mk(filepath.Join(outside, "out.jsonl"))
	link(root, filepath.Join(root, "c", "loop"))                             // a loop back to the root
	link(outside, filepath.Join(root, "ext"))                                // a directory elsewhere
	link(filepath.Join(root, "a.jsonl"), filepath.Join(root, "alias.jsonl")) // the same file again
	link(filepath.Join(root, "gone"), filepath.Join(root, "dangling.jsonl")) // a broken link
	if err := os.Mkdir(filepath.Join(root, "z.jsonl"), 0o755); err != nil {  // a directory named .jsonl
		t.Fatal(err)
	}
	mk(filepath.Join(root, "z.jsonl", "inner.jsonl"))
	single := filepath.Join(outside, "single.log")
	mk(single)

	var got []string
	err := Walk(context.Background(), []string{root, single}, func(p string) error {
		got = append(got, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		filepath.Join(root, "a.jsonl"),
		filepath.Join(root, "b", "1.jsonl"),
		filepath.Join(root, "b", "2.jsonl"),
		filepath.Join(root, "c", "d", "deep.jsonl"),
		filepath.Join(root, "ext", "out.jsonl"),
		filepath.Join(root, "z.jsonl", "inner.jsonl"),
		single,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Walk yielded\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestWalkErrors(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(root, "nope")
	called := false
	err := Walk(context.Background(), []string{root, missing}, func(string) error { called = true; return nil })
	if !errors.Is(err, fs.ErrNotExist) || err.Error() != missing+": no such file or directory" || called {
		t.Errorf("missing root: %v (called %v)", err, called)
	}

	stop := errors.New("stop")
	if err := Walk(context.Background(), []string{root}, func(string) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("callback error: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Walk(ctx, []string{root}, func(string) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
