package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// gitState is what resume needs of a git checkout: where it is, which
// repository it belongs to (worktrees of one repository share a common
// dir), its branch and HEAD commit. It is read from the files under .git
// rather than by running git: resume runs at every session start, and two
// git processes would cost more than the rest of it.
type gitState struct {
	Root      string // the checkout's top folder
	CommonDir string // the repository's .git folder, shared by its worktrees
	Branch    string // "" when HEAD is detached
	Head      string // the commit HEAD points at, "" when unknown
}

// readGit finds the checkout that holds dir, if any.
func readGit(dir string) (gitState, bool) {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		fi, err := os.Stat(dotgit)
		if err == nil {
			gitDir := dotgit
			if !fi.IsDir() {
				// a worktree (or submodule): .git is a file "gitdir: PATH"
				b, err := os.ReadFile(dotgit)
				if err != nil {
					return gitState{}, false
				}
				p, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
				if !ok {
					return gitState{}, false
				}
				if !filepath.IsAbs(p) {
					p = filepath.Join(d, p)
				}
				gitDir = filepath.Clean(p)
			}
			return readGitDir(d, gitDir), true
		}
		if parent := filepath.Dir(d); parent == d {
			return gitState{}, false
		}
	}
}

func readGitDir(root, gitDir string) gitState {
	g := gitState{Root: root, CommonDir: gitDir}
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		p := strings.TrimSpace(string(b))
		if !filepath.IsAbs(p) {
			p = filepath.Join(gitDir, p)
		}
		g.CommonDir = filepath.Clean(p)
	}
	head, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
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
		if b, err := os.ReadFile(filepath.Join(d, filepath.FromSlash(ref))); err == nil {
			return strings.TrimSpace(string(b))
		}
	}
	f, err := os.Open(filepath.Join(commonDir, "packed-refs"))
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

// worktrees lists the checkouts of the repository whose common dir is
// given: the main one and every linked worktree.
func worktrees(commonDir string) []string {
	var out []string
	if filepath.Base(commonDir) == ".git" {
		out = append(out, filepath.Dir(commonDir))
	}
	entries, err := os.ReadDir(filepath.Join(commonDir, "worktrees"))
	if err != nil {
		return out
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(commonDir, "worktrees", e.Name(), "gitdir"))
		if err != nil {
			continue
		}
		// gitdir holds the path of the worktree's .git file
		out = append(out, filepath.Dir(strings.TrimSpace(string(b))))
	}
	return out
}

func shortSHA(s string) string {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}
