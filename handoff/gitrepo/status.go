package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
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
// and not committed, untracked files included (submodules' new commits,
// not their own changes: git would run each submodule's own filters). It
// and CommittedSince are the one place ledger runs git, for a handoff
// written while the work is on this machine, with guardOptions.
func Status(ctx context.Context, root string) ([]Change, error) {
	out, err := run(ctx, root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=dirty")
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
	out, err := run(ctx, root, "log", "--no-merges", "--name-only", "--format=", "--no-ext-diff", "--no-textconv",
		"--since="+t.UTC().Format(time.RFC3339), "HEAD")
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
	guard, err := guardOptions(ctx, root)
	if err != nil {
		return nil, err
	}
	out, err := git(ctx, root, append(guard, args...)...)
	if err != nil {
		return nil, fmt.Errorf("git %s: %w", args[0], err)
	}
	return out, nil
}

// guardOptions are the options that keep git from running any program
// the checkout names. The checkout is the transcript's cwd: anyone who can
// write a transcript, or a folder with a .git in it, picks it, and its
// .git/config can name a program for git to run at status or log time:
// core.fsmonitor, a clean filter or filter process (for each file whose
// stat changed), a post-index-change hook, a pager, gpg.program for
// log.showSignature, a remote's ext:: command or core.sshCommand for a
// partial clone's lazy fetch. So: no fsmonitor, no hooks, no pager, no
// signatures, no transport at all (every protocol.<name>.allow named in any
// configuration is overridden too, since it outranks protocol.allow), no
// credential helper, no automatic gc; and every filter driver the
// repository's own configuration (not the user's global or the system's)
// touches is emptied, which git takes as no filter. A key git cannot be
// given on its command line (a driver name holding '='): then ledger does
// not run git.
func guardOptions(ctx context.Context, root string) ([]string, error) {
	opts := []string{"--no-pager", "--no-optional-locks",
		"-c", "core.fsmonitor=false", "-c", "core.hooksPath=" + os.DevNull, "-c", "core.quotepath=off",
		"-c", "log.showSignature=false", "-c", "protocol.allow=never", "-c", "credential.helper=",
		"-c", "gc.auto=0", "-c", "maintenance.auto=false", "-c", "status.submoduleSummary=false"}
	out, err := git(ctx, root, "config", "--show-scope", "--includes", "--null", "--get-regexp", `^(filter|protocol)\.`)
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) { // 1: no such key
		return nil, fmt.Errorf("git config: %w", err)
	}
	seen := map[string]bool{}
	fields := bytes.Split(out, []byte{0})
	for i := 0; i+1 < len(fields); i += 2 {
		scope := string(fields[i])
		key, _, _ := strings.Cut(string(fields[i+1]), "\n")
		if strings.Contains(key, "=") {
			return nil, fmt.Errorf("git config: %q cannot be overridden", key)
		}
		section, rest, _ := strings.Cut(key, ".")
		dot := strings.LastIndexByte(rest, '.')
		if dot < 0 {
			continue // protocol.allow itself, overridden above
		}
		name := rest[:dot]
		switch {
		case section == "protocol":
			opts = append(opts, "-c", "protocol."+name+".allow=never")
		case section == "filter" && scope != "system" && scope != "global" && !seen[name]:
			seen[name] = true
			for _, v := range []string{"clean=", "smudge=", "process=", "required=false"} {
				opts = append(opts, "-c", "filter."+name+"."+v)
			}
		}
	}
	return opts, nil
}

// git runs git in root with an environment of none of the caller's GIT_
// variables (they could point git at another repository or configuration,
// or name programs), and returns its output.
func git(ctx context.Context, root string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", root}, args...)...)
	env := []string{"GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "GIT_NO_LAZY_FETCH=1", "LC_ALL=C"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(strings.ToUpper(kv), "GIT_") && !strings.HasPrefix(kv, "LC_ALL=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
