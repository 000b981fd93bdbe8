package gitrepo

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// State is what resume needs of a git checkout: where it is, which
// repository it belongs to (worktrees of one repository share a common
// dir), its branch and HEAD commit.
type State struct {
	Root      string // the checkout's top folder
	CommonDir string // the repository's .git folder, shared by its worktrees
	Branch    string // "" when HEAD is detached
	Head      string // the commit HEAD points at, "" when unknown
}

// Read finds the checkout that holds dir, if any, and reads its state.
func Read(dir string) (State, bool) {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		fi, err := os.Stat(dotgit)
		if err == nil {
			gitDir := dotgit
			if !fi.IsDir() {
				// a worktree (or submodule): .git is a file "gitdir: PATH"
				b, err := readFile(dotgit)
				if err != nil {
					return State{}, false
				}
				p, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
				if !ok {
					return State{}, false
				}
				if !filepath.IsAbs(p) {
					p = filepath.Join(d, p)
				}
				gitDir = filepath.Clean(p)
			}
			return readDir(d, gitDir), true
		}
		if parent := filepath.Dir(d); parent == d {
			return State{}, false
		}
	}
}

func readDir(root, gitDir string) State {
	g := State{Root: root, CommonDir: gitDir}
	if b, err := readFile(filepath.Join(gitDir, "commondir")); err == nil {
		p := strings.TrimSpace(string(b))
		if !filepath.IsAbs(p) {
			p = filepath.Join(gitDir, p)
		}
		g.CommonDir = filepath.Clean(p)
	}
	head, err := readFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return g
	}
	h := strings.TrimSpace(string(head))
	ref, isRef := strings.CutPrefix(h, "ref: ")
	if !isRef {
		g.Head = h
		return g
	}
	g.Branch = strings.TrimPrefix(ref, "refs/heads/")
	g.Head = resolveRef(gitDir, g.CommonDir, ref)
	return g
}

// resolveRef reads a ref from the worktree's git dir, the common dir, or
// the common dir's packed-refs.
func resolveRef(gitDir, commonDir, ref string) string {
	for _, d := range []string{gitDir, commonDir} {
		if b, err := readFile(filepath.Join(d, filepath.FromSlash(ref))); err == nil {
			return strings.TrimSpace(string(b))
		}
	}
	f, err := openRegular(filepath.Join(commonDir, "packed-refs"))
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if sha, name, ok := strings.Cut(line, " "); ok && name == ref {
			return sha
		}
	}
	return ""
}

// Worktrees lists the checkouts of the repository whose common dir is
// given: the main one and every linked worktree.
func Worktrees(commonDir string) []string {
	var out []string
	if filepath.Base(commonDir) == ".git" {
		out = append(out, filepath.Dir(commonDir))
	}
	entries, err := os.ReadDir(filepath.Join(commonDir, "worktrees"))
	if err != nil {
		return out
	}
	for _, e := range entries {
		b, err := readFile(filepath.Join(commonDir, "worktrees", e.Name(), "gitdir"))
		if err != nil {
			continue
		}
		// gitdir holds the path of the worktree's .git file
		out = append(out, filepath.Dir(strings.TrimSpace(string(b))))
	}
	return out
}

// ShortHash is the first 10 characters of a commit hash, as people quote it.
func ShortHash(s string) string {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}

// maxGitFile bounds what is read of a small git file (HEAD, a ref, a
// gitdir link): they are a line.
const maxGitFile = 64 << 10

// openRegular opens path if it is a regular file. The folder is the
// project a transcript names, which anyone may have written: a FIFO in
// place of .git/HEAD would block a read forever.
func openRegular(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return os.Open(path)
}

// readFile reads a small git file (see openRegular), at most maxGitFile.
func readFile(path string) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxGitFile))
}
