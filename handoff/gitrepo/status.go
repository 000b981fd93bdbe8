package gitrepo

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// A Change is one path git reports changed in a checkout and not committed.
type Change struct {
	// Path is absolute; From is the old path of a rename.
	Path, From string
	// Status is "added" (new, or untracked), "deleted", "moved" or "modified".
	Status string
}

// Status runs `git status` in the checkout rooted at root: what is changed
// and not committed, untracked files included. It is the one place ledger
// runs git, for a handoff written while the work is on this machine.
func Status(ctx context.Context, root string) ([]Change, error) {
	out, err := run(ctx, root, "status", "--porcelain=v1", "-z", "--untracked-files=all")
	if err != nil {
		return nil, err
	}
	var changes []Change
	fields := bytes.Split(out, []byte{0})
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 {
			continue
		}
		x, y, p := f[0], f[1], string(f[3:])
		c := Change{Path: filepath.Join(root, p), Status: "modified"}
		switch {
		case x == '?' || x == 'A':
			c.Status = "added"
		case x == 'D' || y == 'D':
			c.Status = "deleted"
		case x == 'R' || x == 'C':
			c.Status = "moved"
			if i+1 < len(fields) { // -z: the old path follows as its own field
				i++
				c.From = filepath.Join(root, string(fields[i]))
			}
		}
		changes = append(changes, c)
	}
	return changes, nil
}

// CommittedSince lists the files of the commits reachable from HEAD made
// since t, absolute.
func CommittedSince(ctx context.Context, root string, t time.Time) ([]string, error) {
	out, err := run(ctx, root, "log", "--no-merges", "--name-only", "--format=", "--since="+t.UTC().Format(time.RFC3339), "HEAD")
	if err != nil {
		return nil, err
	}
	var files []string
	seen := map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" && !seen[l] {
			seen[l] = true
			files = append(files, filepath.Join(root, l))
		}
	}
	return files, nil
}

func run(ctx context.Context, root string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", root, "-c", "core.quotepath=off"}, args...)...)
	cmd.Env = append(cmd.Environ(), "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
