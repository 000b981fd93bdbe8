package gitrepo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// gitIn runs git in dir for a test's setup, with no configuration but the
// repository's.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// plant lays out in dir a repository whose own configuration names, for
// each way git can be made to run a program at status or log time, a
// program that leaves a file named after that way in marks: an fsmonitor,
// a clean filter and a filter process (for every file, under a driver name
// with a dot, set by an included file), hooks, pagers, gpg.program for a
// signed commit with log.showSignature, an external diff and textconv, and
// a submodule with a clean filter of its own. a.txt is committed and then
// changed, new.txt is not committed. It returns the time before the first
// commit.
func plant(t *testing.T, dir, marks string) time.Time {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	mark := func(name string) string { return "touch '" + filepath.Join(marks, name) + "'" }
	sub := filepath.Join(t.TempDir(), "sub")
	os.MkdirAll(sub, 0o755)
	gitIn(t, sub, "init", "-q")
	write(t, filepath.Join(sub, ".gitattributes"), "* filter=subevil\n")
	write(t, filepath.Join(sub, "s.txt"), "s\n")
	gitIn(t, sub, "add", ".")
	gitIn(t, sub, "commit", "-qm", "sub")

	since := time.Now().Add(-time.Minute)
	gitIn(t, dir, "init", "-q")
	write(t, filepath.Join(dir, ".gitattributes"), "*.txt filter=ev.il diff=evil\n*.md filter=pro\n")
	write(t, filepath.Join(dir, "a.txt"), "one\n")
	write(t, filepath.Join(dir, "b.md"), "b\n")
	gitIn(t, dir, "add", ".")
	gitIn(t, dir, "commit", "-qm", "one")
	gitIn(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "sub")
	gitIn(t, dir, "commit", "-qm", "sub")
	// A signed commit (the signature is never checked but by gpg.program).
	tree := gitIn(t, dir, "rev-parse", "HEAD^{tree}")
	obj := filepath.Join(t.TempDir(), "commit")
	write(t, obj, "tree "+tree+"\nparent "+gitIn(t, dir, "rev-parse", "HEAD")+"\nauthor t <t@example.com> "+
		strconv.FormatInt(time.Now().Unix(), 10)+" +0000\ncommitter t <t@example.com> "+strconv.FormatInt(time.Now().Unix(), 10)+" +0000\n"+
		"gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\nsigned\n")
	gitIn(t, dir, "update-ref", "HEAD", gitIn(t, dir, "hash-object", "-t", "commit", "-w", obj))

	hook := "#!/bin/sh\n" + mark("hook") + "\n"
	for _, h := range []string{"post-index-change", "reference-transaction", "post-checkout"} {
		write(t, filepath.Join(dir, ".git", "hooks", h), hook)
		os.Chmod(filepath.Join(dir, ".git", "hooks", h), 0o755)
	}
	included := filepath.Join(dir, ".git", "more.config")
	write(t, included, "[filter \"ev.il\"]\n\tclean = "+mark("clean")+"; cat\n\trequired = true\n"+
		"[filter \"pro\"]\n\tprocess = sh -c \\\""+mark("process")+"\\\"\n\trequired = true\n")
	for _, kv := range [][2]string{
		{"include.path", included},
		{"core.fsmonitor", mark("fsmonitor") + "; false"},
		{"core.pager", mark("pager")},
		{"pager.status", "true"},
		{"pager.log", "true"},
		{"gpg.program", filepath.Join(dir, ".git", "hooks", "post-checkout")},
		{"log.showSignature", "true"},
		{"diff.external", filepath.Join(dir, ".git", "hooks", "post-checkout")},
		{"diff.evil.textconv", mark("textconv") + "; cat"},
		{"diff.evil.command", mark("diffcommand")},
		{"status.submoduleSummary", "true"},
	} {
		gitIn(t, dir, "config", kv[0], kv[1])
	}
	gitIn(t, filepath.Join(dir, "sub"), "config", "filter.subevil.clean", mark("subclean")+"; cat")
	write(t, filepath.Join(dir, "a.txt"), "two\n")
	write(t, filepath.Join(dir, "new.txt"), "new\n")
	// Older times than the index holds: git must read the files again
	// (and would run their filters).
	old := time.Now().Add(-time.Hour)
	for _, f := range []string{"a.txt", "b.md", filepath.Join("sub", "s.txt")} {
		os.Chtimes(filepath.Join(dir, f), old, old)
	}
	return since
}

// marked lists the marks left in dir.
func marked(t *testing.T, dir string) []string {
	t.Helper()
	es, _ := os.ReadDir(dir)
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// TestGitRunsNoRepositoryProgram: Status and CommittedSince in a checkout
// whose configuration names a program every way git allows run none of
// them, and still report the checkout's state; nor does the environment
// a hook inherits point git elsewhere.
func TestGitRunsNoRepositoryProgram(t *testing.T) {
	dir, marks := t.TempDir(), t.TempDir()
	since := plant(t, dir, marks)
	check := func(how string) {
		t.Helper()
		changes, err := Status(context.Background(), dir)
		want := []Change{{Path: filepath.Join(dir, "a.txt"), Status: "modified"}, {Path: filepath.Join(dir, "new.txt"), Status: "added"}}
		if err != nil || !slices.Equal(changes, want) {
			t.Errorf("%s: Status = %+v, %v; want %+v", how, changes, err, want)
		}
		files, err := CommittedSince(context.Background(), dir, since)
		if err != nil || !slices.Contains(files, filepath.Join(dir, "a.txt")) {
			t.Errorf("%s: CommittedSince = %v, %v; want a.txt among them", how, files, err)
		}
		if m := marked(t, marks); len(m) > 0 {
			t.Errorf("%s: git ran the repository's programs: %v", how, m)
		}
	}
	check("planted configuration")
	// What the agent's environment could carry: another configuration,
	// another repository, programs.
	t.Setenv("GIT_CONFIG_PARAMETERS", "'core.fsmonitor'='touch "+filepath.Join(marks, "env")+"; false'")
	t.Setenv("GIT_EXTERNAL_DIFF", filepath.Join(dir, ".git", "hooks", "post-checkout"))
	t.Setenv("GIT_DIR", filepath.Join(t.TempDir(), "nothing"))
	check("planted environment")
}

// TestGitFetchesNothing: a partial clone missing the trees git log needs,
// whose remote is an ext:: command allowed by its own configuration, is
// not fetched from (the command would run): CommittedSince fails instead.
func TestGitFetchesNothing(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root, marks := t.TempDir(), t.TempDir()
	src := filepath.Join(root, "src")
	os.MkdirAll(src, 0o755)
	gitIn(t, src, "init", "-q")
	for _, f := range []string{"a", "b"} {
		write(t, filepath.Join(src, f), f)
		gitIn(t, src, "add", ".")
		gitIn(t, src, "commit", "-qm", f)
	}
	gitIn(t, src, "config", "uploadpack.allowFilter", "true")
	gitIn(t, root, "clone", "-q", "--no-checkout", "--filter=tree:0", "file://"+src, "clone")
	clone := filepath.Join(root, "clone")
	gitIn(t, clone, "config", "remote.origin.url", "ext::sh -c touch% "+filepath.Join(marks, "ext")+"% ;false")
	gitIn(t, clone, "config", "protocol.ext.allow", "always")
	gitIn(t, clone, "config", "core.sshCommand", "touch "+filepath.Join(marks, "ssh"))

	if files, err := CommittedSince(context.Background(), clone, time.Now().Add(-time.Hour)); err == nil && len(files) > 0 {
		t.Logf("CommittedSince = %v (the trees were there)", files)
	}
	if m := marked(t, marks); len(m) > 0 {
		t.Errorf("git fetched through the repository's remote: %v", m)
	}
}
