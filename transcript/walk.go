package transcript

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
)

// uuidPattern matches a UUID as Claude Code and Codex put them in file
// names. It is compiled on first use: every package's variables are set up
// at each start of the binary, which `ledger version` pays for.
var uuidPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
})

// SessionHint returns the first UUID in the base name of path: the session
// id Claude Code (<session>.jsonl) and Codex (rollout-<time>-<session>.jsonl)
// name their files after. It returns "" when the name holds none.
func SessionHint(path string) string {
	return uuidPattern().FindString(filepath.Base(path))
}

// Walk calls fn for every transcript under roots: a root that is a file is
// yielded whatever its name; a root that is a directory is walked
// recursively for *.jsonl files (but the agents' prompt histories,
// notTranscripts) and OpenCode's and Kilo's databases, in lexical order,
// following symbolic links to directories without ever entering one
// directory twice. A file reached
// twice (through a link, or named by two roots) is yielded once. A root
// that does not exist is an error (wrapping fs.ErrNotExist), reported
// before any file is yielded. Walk stops at the first error of fn or of
// ctx and returns it.
func Walk(ctx context.Context, roots []string, fn func(path string) error) error {
	infos := make([]os.FileInfo, len(roots))
	for i, root := range roots {
		info, err := os.Stat(root)
		if err != nil {
			if os.IsNotExist(err) {
				return fmt.Errorf("%s: %w", root, syscall.ENOENT)
			}
			return fmt.Errorf("walk %s: %w", root, err)
		}
		infos[i] = info
	}
	w := walker{ctx: ctx, fn: fn, seenDirs: map[fileKey]bool{}, seenFiles: map[fileKey]bool{}}
	for i, root := range roots {
		var err error
		if infos[i].IsDir() {
			err = w.dir(root, infos[i])
		} else {
			err = w.file(root, infos[i])
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// walked tells whether a folder's walk yields the file of this name: a
// JSONL transcript, or an OpenCode or Kilo database (DatabaseFormat).
func walked(name string) bool {
	if strings.HasSuffix(name, ".jsonl") {
		return true
	}
	_, ok := DatabaseFormat(name)
	return ok
}

// fileKey identifies a file or directory whatever the path to it.
type fileKey struct {
	dev, ino uint64
	path     string // when the system gives no inode
}

type walker struct {
	ctx       context.Context
	fn        func(path string) error
	seenDirs  map[fileKey]bool
	seenFiles map[fileKey]bool
}

func (w *walker) file(path string, info os.FileInfo) error {
	k := keyOf(path, info)
	if w.seenFiles[k] {
		return nil
	}
	w.seenFiles[k] = true
	if err := w.ctx.Err(); err != nil {
		return err
	}
	return w.fn(path)
}

// notTranscripts are the JSONL files the agents keep beside their
// transcripts that are none: a walk passes them over in silence (named
// as a root, one is read, and found to be no transcript). history.jsonl
// is the prompt history of Claude Code (~/.claude) and of Codex
// (~/.codex): a user who ingests the agent's whole folder was warned
// about it at every run.
var notTranscripts = map[string]bool{"history.jsonl": true}

func (w *walker) dir(path string, info os.FileInfo) error {
	k := keyOf(path, info)
	if w.seenDirs[k] {
		return nil
	}
	w.seenDirs[k] = true
	entries, err := os.ReadDir(path) // sorted by name
	if err != nil {
		return fmt.Errorf("walk %s: %w", path, err)
	}
	for _, e := range entries {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		p := filepath.Join(path, e.Name())
		mode := e.Type()
		if mode&fs.ModeSymlink == 0 && !mode.IsDir() && !mode.IsRegular() {
			continue // sockets, devices, pipes
		}
		if !mode.IsDir() && mode&fs.ModeSymlink == 0 && !walked(e.Name()) || notTranscripts[e.Name()] {
			continue
		}
		info, err := os.Stat(p) // follows links
		if err != nil {
			if mode&fs.ModeSymlink != 0 {
				continue // a dangling link is no transcript
			}
			return fmt.Errorf("walk %s: %w", p, err)
		}
		switch {
		case info.IsDir():
			err = w.dir(p, info)
		case info.Mode().IsRegular() && walked(e.Name()):
			err = w.file(p, info)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
