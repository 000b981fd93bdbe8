package agenttest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// RunResult is what an agent run printed, its exit code and how long it took.
type RunResult struct {
	Stdout, Stderr string
	Code           int
	Took           time.Duration
}

// Cmd is one run of an agent's command.
type Cmd struct {
	// Path is the command (Agent.Require's); Args its arguments.
	Path string
	Args []string
	// Dir is the folder it runs in (the project).
	Dir string
	// Env is its whole environment (nothing of the test's is inherited).
	Env []string
	// Stdin is what it reads ("" for an empty input: an agent that reads
	// its prompt from stdin when stdin is not a terminal must see it end).
	Stdin string
	// Timeout bounds the run (default 90 s); the process group is killed
	// past it.
	Timeout time.Duration
}

// Run runs c and returns its result. A run that could not start, or ran
// past its timeout, fails the test; a non-zero exit is the caller's to
// judge (RunResult.Code).
func (c Cmd) Run(t testing.TB) RunResult {
	t.Helper()
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 90 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Path, c.Args...)
	cmd.Dir, cmd.Env = c.Dir, c.Env
	cmd.Stdin = strings.NewReader(c.Stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	// Its own process group, killed whole at the timeout: agents start
	// hooks, MCP servers and shells of their own.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	r := RunResult{Stdout: out.String(), Stderr: errb.String(), Took: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("agenttest: %s %s ran past %v\nstdout:\n%s\nstderr:\n%s", c.Path, strings.Join(c.Args, " "), timeout, tail(r.Stdout, 4000), tail(r.Stderr, 4000))
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
	case err != nil:
		t.Fatalf("agenttest: run %s: %v", c.Path, err)
	}
	return r
}

// BaseEnv is the environment every agent run starts from: HOME, the
// test's PATH (Codex's command is a Node script) and TMPDIR, nothing else
// of the test's environment (no API keys, no CI markers, no user config).
func BaseEnv(home string) []string {
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	if tmp := os.Getenv("TMPDIR"); tmp != "" {
		env = append(env, "TMPDIR="+tmp)
	}
	return env
}

func itoa(n int) string { return strconv.Itoa(n) }
