package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/renameio/v2"

	"github.com/agentledger/ledger/handoff/gitrepo"
)

// HandoffsDir is where handoff files of a project go by default:
// handoffs/<project> in the database's folder, never the project's working
// tree.
func HandoffsDir(dbPath, project string) string {
	return filepath.Join(filepath.Dir(dbPath), "handoffs", ProjectDirName(project))
}

// ProjectDirName spells a project's path as one folder name the way Claude
// Code names its transcript folders: every character but a letter or digit
// becomes "-" (/home/dev/src/app is -home-dev-src-app). A project with no
// path is "unknown-project".
func ProjectDirName(project string) string {
	if project == "" {
		return "unknown-project"
	}
	var b strings.Builder
	for _, r := range project {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// InProjectHandoffPath is the handoff file a user who wants handoffs in the
// project gets: .ledger/handoffs/<session>/<name> under the project, the
// session as IDName spells it.
func InProjectHandoffPath(project, session, name string) string {
	return filepath.Join(project, ".ledger", "handoffs", IDName(session), name)
}

// excludeFromGit keeps a handoff file the user asked for inside a git
// checkout out of `git status`: it adds a pattern to the repository's
// .git/info/exclude (shared by its worktrees), once. The pattern is the
// .ledger folder for files under it, else the file itself. It returns the
// pattern it added and the exclude file, or "" when it added nothing (the
// file is not in a checkout, or the pattern is there already).
func excludeFromGit(path string) (pattern, file string, err error) {
	abs := AbsPath(path)
	g, ok := gitrepo.Read(filepath.Dir(abs))
	if !ok {
		return "", "", nil
	}
	rel, err := filepath.Rel(g.Root, abs)
	if err != nil || rel == "." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", "", nil
	}
	rel = filepath.ToSlash(rel)
	if strings.HasPrefix(rel, ".ledger/") {
		pattern = "/.ledger/"
	} else {
		pattern = "/" + rel
	}
	file = filepath.Join(g.CommonDir, "info", "exclude")
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", "", fmt.Errorf("read %s: %w", file, err)
	}
	for _, line := range strings.Split(string(old), "\n") {
		if strings.TrimSpace(line) == pattern {
			return "", "", nil
		}
	}
	var b bytes.Buffer
	b.Write(old)
	if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
		b.WriteByte('\n')
	}
	b.WriteString("# ledger handoffs (added by ledger)\n" + pattern + "\n")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return "", "", fmt.Errorf("exclude handoffs from git: %w", err)
	}
	if err := renameio.WriteFile(file, b.Bytes(), 0o644); err != nil {
		return "", "", fmt.Errorf("exclude handoffs from git: %w", err)
	}
	return pattern, file, nil
}
