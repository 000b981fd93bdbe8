package gitrepo

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// write creates path (and its folders) holding s.
func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

const (
	mainHead   = "1111111111111111111111111111111111111111"
	packedHead = "2222222222222222222222222222222222222222"
	detached   = "3333333333333333333333333333333333333333"
)

// repo lays out, as git would, a repository at root/app with a loose ref
// (main), a packed one (release), and a linked worktree at root/wt on a
// detached HEAD; it returns root.
func repo(t *testing.T) string {
	root := t.TempDir()
	dotgit := filepath.Join(root, "app", ".git")
	write(t, filepath.Join(dotgit, "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(dotgit, "refs", "heads", "main"), mainHead+"\n")
	write(t, filepath.Join(dotgit, "packed-refs"), "# pack-refs with: peeled fully-peeled sorted\n"+packedHead+" refs/heads/release\n")
	wtGit := filepath.Join(dotgit, "worktrees", "wt")
	write(t, filepath.Join(wtGit, "HEAD"), detached+"\n")
	write(t, filepath.Join(wtGit, "commondir"), "../..\n")
	write(t, filepath.Join(wtGit, "gitdir"), filepath.Join(root, "wt", ".git")+"\n")
	write(t, filepath.Join(root, "wt", ".git"), "gitdir: "+wtGit+"\n")
	if err := os.MkdirAll(filepath.Join(root, "app", "pkg", "auth"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestRead(t *testing.T) {
	root := repo(t)
	app, wt := filepath.Join(root, "app"), filepath.Join(root, "wt")
	common := filepath.Join(app, ".git")
	tests := []struct {
		name string
		dir  string
		head string // HEAD's content, "" to leave it
		want State
	}{
		{"main checkout, loose ref", app, "", State{Root: app, CommonDir: common, Branch: "main", Head: mainHead}},
		{"a folder below the top", filepath.Join(app, "pkg", "auth"), "", State{Root: app, CommonDir: common, Branch: "main", Head: mainHead}},
		{"packed ref", app, "ref: refs/heads/release\n", State{Root: app, CommonDir: common, Branch: "release", Head: packedHead}},
		{"unborn branch", app, "ref: refs/heads/new\n", State{Root: app, CommonDir: common, Branch: "new"}},
		{"linked worktree, detached", wt, "", State{Root: wt, CommonDir: common, Head: detached}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.head != "" {
				write(t, filepath.Join(common, "HEAD"), tc.head)
				t.Cleanup(func() { write(t, filepath.Join(common, "HEAD"), "ref: refs/heads/main\n") })
			}
			got, ok := Read(tc.dir)
			if !ok || got != tc.want {
				t.Errorf("Read(%s) = %+v, %v; want %+v", tc.dir, got, ok, tc.want)
			}
		})
	}
	if got, ok := Read(t.TempDir()); ok {
		t.Errorf("Read(a folder outside any checkout) = %+v, true; want false", got)
	}
}

func TestWorktrees(t *testing.T) {
	root := repo(t)
	got := Worktrees(filepath.Join(root, "app", ".git"))
	want := []string{filepath.Join(root, "app"), filepath.Join(root, "wt")}
	if !slices.Equal(got, want) {
		t.Errorf("Worktrees = %v, want %v", got, want)
	}
}

func TestShortHash(t *testing.T) {
	if got := ShortHash(mainHead); got != "1111111111" {
		t.Errorf("ShortHash = %q", got)
	}
	if got := ShortHash("abc"); got != "abc" {
		t.Errorf("ShortHash(short) = %q", got)
	}
}
