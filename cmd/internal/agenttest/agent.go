package agenttest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Agent is a coding agent's command-line client, as its npm package
// publishes it, pinned to one version: formats change between releases,
// so a test runs the version ledger was checked against.
type Agent struct {
	// Name is the agent's short name ("claude", "codex").
	Name string
	// Package is the npm package; Version its pinned version.
	Package, Version string
	// Bin is the command the package installs (node_modules/.bin/Bin).
	Bin string
	// VersionArgs print the version (Bin VersionArgs...), whose output
	// must contain Version.
	VersionArgs []string
	// Env is environment every run of the agent gets, its version check
	// included (set by each agent's ...Env): what keeps it to one process.
	Env []string
	// CacheEnv names the variable of the cache folder the agent unpacks
	// itself into on its first run ("" for none): Copilot CLI's native
	// package unpacks 235 MB of JavaScript into $XDG_CACHE_HOME/copilot.
	// Every run of the agent, its version check included, gets CacheDir
	// there, so that it unpacks once, not in each test's fake HOME.
	CacheEnv string
}

// The agents the end-to-end tests run, at the versions ledger is tested
// with. This is the one place their versions are written: .ci/run installs
// them through TestInstallAgents.
var (
	ClaudeCode = Agent{Name: "claude", Package: "@anthropic-ai/claude-code", Version: "2.1.328", Bin: "claude",
		VersionArgs: []string{"--version"}}
	Codex = Agent{Name: "codex", Package: "@openai/codex", Version: "0.169.0", Bin: "codex",
		VersionArgs: []string{"--version"}}
	// Gemini CLI and Qwen Code start themselves again with a bigger heap
	// (Qwen Code twice), a Node start each time, unless told not to.
	GeminiCLI = Agent{Name: "gemini", Package: "@google/gemini-cli", Version: "0.61.0", Bin: "gemini",
		VersionArgs: []string{"--version"}, Env: []string{"GEMINI_CLI_NO_RELAUNCH=1"}}
	QwenCode = Agent{Name: "qwen", Package: "@qwen-code/qwen-code", Version: "0.24.4", Bin: "qwen",
		VersionArgs: []string{"--version"}, Env: []string{"QWEN_CODE_NO_RELAUNCH=true"}}
	Pi = Agent{Name: "pi", Package: "@mariozechner/pi-coding-agent", Version: "0.73.1", Bin: "pi",
		VersionArgs: []string{"--version"}}
	CopilotCLI = Agent{Name: "copilot", Package: "@github/copilot", Version: "1.0.102", Bin: "copilot",
		VersionArgs: []string{"--version"}, CacheEnv: "XDG_CACHE_HOME"}
	// OpenCode and Kilo CLI (Bun programs of 170 MB) do at every start
	// work a headless run here has no use for, each with a switch a user
	// can set too (their flags, read at start): they fetch the models
	// list and updates; watch the project's files (_FILEWATCHER);
	// load their default plugins, the providers' sign-in helpers, not
	// ledger's plugin from the config folder (_DEFAULT_PLUGINS); read
	// Claude Code's and other agents' skills and prompts (_CLAUDE_CODE,
	// _EXTERNAL_SKILLS); serve their web UI (_EMBEDDED_WEB_UI). Kilo
	// also shares, ingests, indexes, reports presence and sends telemetry
	// (KILO_TELEMETRY_LEVEL other than "all": off), which it flushes to
	// an unreachable host until a timeout at exit. None of them changes
	// the session database ledger reads or the plugin's events; together
	// with "snapshot": false (WriteOpenCodeConfig) they take a Kilo run
	// from about 38 CPU-seconds to 23 on a loaded 2-core machine.
	OpenCode = Agent{Name: "opencode", Package: "opencode-ai", Version: "1.18.33", Bin: "opencode",
		VersionArgs: []string{"--version"}, Env: []string{"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1",
			"OPENCODE_EXPERIMENTAL_DISABLE_FILEWATCHER=1", "OPENCODE_DISABLE_DEFAULT_PLUGINS=1", "OPENCODE_DISABLE_CLAUDE_CODE=1",
			"OPENCODE_DISABLE_EXTERNAL_SKILLS=1", "OPENCODE_DISABLE_EMBEDDED_WEB_UI=1"}}
	KiloCLI = Agent{Name: "kilo", Package: "@kilocode/cli", Version: "7.7.7", Bin: "kilo",
		VersionArgs: []string{"--version"}, Env: []string{"KILO_DISABLE_MODELS_FETCH=1", "KILO_DISABLE_AUTOUPDATE=1",
			"KILO_DISABLE_SHARE=1", "KILO_DISABLE_SESSION_INGEST=1", "KILO_DISABLE_LSP_DOWNLOAD=1",
			"KILO_DISABLE_CODEBASE_INDEXING=1", "KILO_DISABLE_PRESENCE=1", "KILO_TELEMETRY_LEVEL=off",
			"KILO_EXPERIMENTAL_DISABLE_FILEWATCHER=1", "KILO_DISABLE_DEFAULT_PLUGINS=1", "KILO_DISABLE_CLAUDE_CODE=1",
			"KILO_DISABLE_EXTERNAL_SKILLS=1", "KILO_DISABLE_EMBEDDED_WEB_UI=1"}}
)

// Agents lists every pinned agent.
func Agents() []Agent {
	return []Agent{ClaudeCode, Codex, GeminiCLI, QwenCode, CopilotCLI, Pi, OpenCode, KiloCLI}
}

// Environment variables the agent tests read.
const (
	// EnvDir is the folder agents are installed in (default: ledger/agents
	// under the user's cache folder).
	EnvDir = "LEDGER_AGENTS_DIR"
	// EnvRequire, set to 1, makes a client that is not there (or cannot be
	// installed) a failure rather than a skip: CI sets it.
	EnvRequire = "LEDGER_REQUIRE_AGENTS"
)

// Dir is the folder agents are installed in: $LEDGER_AGENTS_DIR, else
// ledger/agents in the user's cache folder.
func Dir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		return filepath.Abs(d)
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find the cache folder (set %s): %w", EnvDir, err)
	}
	return filepath.Join(c, "ledger", "agents"), nil
}

// prefix is the npm prefix the agent is installed under.
func (a Agent) prefix(dir string) string {
	return filepath.Join(dir, strings.NewReplacer("@", "", "/", "-").Replace(a.Package)+"@"+a.Version)
}

// Path is where the agent's command is once installed in dir.
func (a Agent) Path(dir string) string {
	return filepath.Join(a.prefix(dir), "node_modules", ".bin", a.Bin)
}

// CacheDir is the cache folder of the agent's runs (see CacheEnv): in
// its install folder.
func (a Agent) CacheDir() (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(a.prefix(dir), "cache"), nil
}

// runEnv is the environment every run of the agent gets: Env, and the
// entry that points it at CacheDir.
func (a Agent) runEnv() []string {
	env := append([]string(nil), a.Env...)
	if a.CacheEnv == "" {
		return env
	}
	if d, err := a.CacheDir(); err == nil {
		env = append(env, a.CacheEnv+"="+d)
	}
	return env
}

// installs keeps one install per agent and folder in this process.
var installs sync.Map // prefix -> *installOnce

type installOnce struct {
	once sync.Once
	path string
	err  error
}

// Require returns the agent's command, installing it with npm into Dir
// when it is not there yet (once: later runs reuse it). When the agent
// cannot be had (no npm, no registry), the test is skipped, or fails
// when $LEDGER_REQUIRE_AGENTS is 1.
func (a Agent) Require(t testing.TB) string {
	t.Helper()
	path, err := a.Install(context.Background())
	if err != nil {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("agenttest: %s %s is required (%s=1): %v", a.Package, a.Version, EnvRequire, err)
		}
		t.Skipf("agenttest: %s %s is not installed and could not be: %v (set %s to where it is, or let npm install it)",
			a.Package, a.Version, err, EnvDir)
	}
	return path
}

// Install makes sure the agent is installed in Dir and answers to its
// version, installing it with npm when it is not, and returns its
// command. An install goes to a temporary folder renamed into place, so
// that processes installing at once leave one whole copy.
func (a Agent) Install(ctx context.Context) (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	v, _ := installs.LoadOrStore(a.prefix(dir), &installOnce{})
	once := v.(*installOnce)
	once.once.Do(func() { once.path, once.err = a.install(ctx, dir) })
	return once.path, once.err
}

func (a Agent) install(ctx context.Context, dir string) (string, error) {
	path := a.Path(dir)
	if _, err := os.Stat(path); err == nil {
		return path, a.check(ctx, dir)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("%s is not in %s, and npm is not on the PATH to install it", a.Package, dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(dir, ".install-"+a.Name+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--no-save", "--prefix", tmp, a.Package+"@"+a.Version)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm install %s@%s: %v\n%s", a.Package, a.Version, err, tail(out.String(), 2000))
	}
	if err := os.Rename(tmp, a.prefix(dir)); err != nil {
		if _, serr := os.Stat(path); serr != nil {
			// Not another process's install that got there first either.
			return "", fmt.Errorf("install %s: %w", a.Package, err)
		}
	}
	return path, a.check(ctx, dir)
}

// check makes sure the agent installed in dir is the pinned version. The
// package's package.json must say Version, every time; and the command
// itself must print it, run once per install: the version it printed is
// kept in the install folder (checkStamp), keyed by the size and time of
// the command's file and of the install's lock file (npm's
// node_modules/.package-lock.json, which every install into the prefix
// rewrites), and later processes trust it while both are unchanged. A
// version check is a Node or Bun start of up to 2 CPU-seconds, which
// every test process paid for every agent before.
func (a Agent) check(ctx context.Context, dir string) error {
	prefix, path := a.prefix(dir), a.Path(dir)
	if err := a.checkPackage(prefix); err != nil {
		return err
	}
	key, err := installKey(prefix, path)
	if err != nil {
		return err
	}
	stamp := filepath.Join(prefix, checkStamp)
	if b, err := os.ReadFile(stamp); err == nil && string(b) == key+"\n"+a.Version+"\n" {
		return nil
	}
	if err := a.checkRun(ctx, path); err != nil {
		return err
	}
	// Written whole or not at all (a rename), so that processes checking
	// at once never read half of it; a stamp that cannot be written only
	// costs the next process a check.
	if f, err := os.CreateTemp(prefix, checkStamp+"-*"); err == nil {
		_, werr := f.WriteString(key + "\n" + a.Version + "\n")
		if cerr := f.Close(); werr == nil && cerr == nil && os.Rename(f.Name(), stamp) == nil {
			return nil
		}
		os.Remove(f.Name())
	}
	return nil
}

// checkStamp is the file, in an agent's install folder, that records the
// version its command printed (see check).
const checkStamp = ".version-checked"

// checkPackage reads the version of the agent's package.json under
// prefix: the one its command prints (each of the eight reads it there,
// or was built with it).
func (a Agent) checkPackage(prefix string) error {
	file := filepath.Join(prefix, "node_modules", filepath.FromSlash(a.Package), "package.json")
	b, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("read %s's package.json: %w", a.Package, err)
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		return fmt.Errorf("read %s: %w", file, err)
	}
	if pkg.Version != a.Version {
		return fmt.Errorf("%s is %s %s, not the pinned %s", file, a.Package, pkg.Version, a.Version)
	}
	return nil
}

// installKey names the install at prefix as it is on disk: the size and
// modification time of the command's file (the symlink resolved) and of
// npm's lock file of the install.
func installKey(prefix, path string) (string, error) {
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	var key strings.Builder
	for _, f := range []string{target, filepath.Join(prefix, "node_modules", ".package-lock.json")} {
		fi, err := os.Stat(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&key, "%s %d %d\n", f, fi.Size(), fi.ModTime().UnixNano())
	}
	return strings.TrimSuffix(key.String(), "\n"), nil
}

// checkRun runs the installed command for its version.
func (a Agent) checkRun(ctx context.Context, path string) error {
	// A Node program of tens of MB on a busy machine: a generous deadline.
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, a.VersionArgs...)
	cmd.Env = append(append(os.Environ(), "DISABLE_AUTOUPDATER=1"), a.runEnv()...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", path, strings.Join(a.VersionArgs, " "), err, tail(string(out), 500))
	}
	if !strings.Contains(string(out), a.Version) {
		return fmt.Errorf("%s is not version %s: it says %q", path, a.Version, strings.TrimSpace(string(out)))
	}
	return nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
