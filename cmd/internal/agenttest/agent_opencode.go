package agenttest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// OpenCode and its fork Kilo CLI, as they run headless here (AGENTS.md):
// `opencode run --format json PROMPT` (`kilo run ...`), `-c` continuing
// the project's latest session, with a provider of their config file on
// the server's Chat Completions (@ai-sdk/openai-compatible). Each run
// asks for the session's title first (a request of its own, without
// tools), then the turn; a context past the model's window less its
// output compacts the session (a summary request), and the run goes on
// with a synthetic "Continue" prompt.

// OpenCodeProvider is the name of the provider WriteOpenCodeConfig writes.
const OpenCodeProvider = "agenttest"

// OpenCodeEnv is the environment that runs OpenCode with home as its
// HOME. extra is appended.
func (s *Server) OpenCodeEnv(home string, extra ...string) []string {
	env := append(BaseEnv(home), "NO_COLOR=1")
	env = append(env, OpenCode.runEnv()...)
	return append(env, extra...)
}

// KiloEnv is the environment that runs Kilo CLI with home as its HOME.
// extra is appended. At every start Kilo CLI 7.7.7 npm-installs
// @kilocode/plugin@7.7.7 beside ledger's plugin, which the registry does
// not have, and starts only once that install has failed: 2 s to 50 s on
// a busy machine. Its npm is pointed at a closed port, without retries,
// so that it fails at once: the same outcome, whatever the load.
func (s *Server) KiloEnv(home string, extra ...string) []string {
	env := append(BaseEnv(home), "NO_COLOR=1", "npm_config_registry=http://127.0.0.1:1/", "npm_config_fetch_retries=0")
	env = append(env, KiloCLI.runEnv()...)
	return append(env, extra...)
}

// WriteOpenCodeConfig writes the config file of a (OpenCode or KiloCLI)
// in home (~/.config/opencode/opencode.json, ~/.config/kilo/kilo.json):
// a provider OpenCodeProvider on s's Chat Completions with one model of
// window tokens and 1,000 of output, the model of every request (the
// title's too), every permission granted, so that a headless run
// never waits for a person, and no snapshots: the agent's own git
// repository of the project, written at every step for its undo (a git
// process or more per step), which ledger neither reads nor needs.
func (s *Server) WriteOpenCodeConfig(a Agent, home, model string, window int) error {
	cfg := map[string]any{
		"provider": map[string]any{OpenCodeProvider: map[string]any{
			"npm":     "@ai-sdk/openai-compatible",
			"options": map[string]any{"baseURL": s.URL() + "/v1", "apiKey": "agenttest-key"},
			"models":  map[string]any{model: map[string]any{"name": model, "limit": map[string]any{"context": window, "output": 1000}}},
		}},
		"model":       OpenCodeProvider + "/" + model,
		"small_model": OpenCodeProvider + "/" + model,
		"autoupdate":  false,
		"share":       "disabled",
		"snapshot":    false,
		"permission":  map[string]any{"edit": "allow", "bash": "allow", "webfetch": "allow", "external_directory": "allow"},
	}
	return writeSettings(filepath.Join(home, ".config", a.Name, a.Name+".json"), cfg)
}

// openCodeDeps is the one install of OpenCode's plugin dependencies in
// this process.
var openCodeDeps installOnce

// SeedOpenCodePlugin puts into home's OpenCode config folder the npm
// dependencies OpenCode installs there at its first start when it finds
// a plugin (@opencode-ai/plugin at OpenCode's version: package.json,
// package-lock.json, node_modules), hard-linked from one install in
// OpenCode's CacheDir, made once: OpenCode then finds them installed and
// starts at once, instead of spending 10 s or more on npm in every
// test's fake HOME. (Kilo CLI 7.7.7 asks for @kilocode/plugin@7.7.7,
// which the registry does not have: its install fails and the run goes
// on; see KiloEnv.)
func SeedOpenCodePlugin(home string) error {
	openCodeDeps.once.Do(func() { openCodeDeps.path, openCodeDeps.err = OpenCode.installPluginDeps(context.Background()) })
	if openCodeDeps.err != nil {
		return openCodeDeps.err
	}
	return linkTree(openCodeDeps.path, filepath.Join(home, ".config", "opencode"))
}

// pluginPackage is the npm package of the agent's plugin API, which it
// installs beside a plugin, as name and version.
func (a Agent) pluginPackage() (string, string) {
	return "@opencode-ai/plugin", a.Version
}

// installPluginDeps installs the agent's plugin dependencies into
// CacheDir/plugin-deps (once: later runs reuse it), as the agent does
// in its config folder: package.json naming the package, then npm
// install. It goes to a temporary folder renamed into place, so that
// processes installing at once leave one whole copy.
func (a Agent) installPluginDeps(ctx context.Context) (string, error) {
	cache, err := a.CacheDir()
	if err != nil {
		return "", err
	}
	dst := filepath.Join(cache, "plugin-deps")
	if _, err := os.Stat(filepath.Join(dst, "node_modules")); err == nil {
		return dst, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("npm is not on the PATH to install %s's plugin dependencies", a.Name)
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(cache, ".plugin-deps-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	name, version := a.pluginPackage()
	pkg := fmt.Sprintf("{\n  \"dependencies\": {\n    %q: %q\n  }\n}\n", name, version)
	if err := os.WriteFile(filepath.Join(tmp, "package.json"), []byte(pkg), 0o644); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--prefix", tmp)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm install %s@%s: %v\n%s", name, version, err, tail(out.String(), 2000))
	}
	if err := os.Rename(tmp, dst); err != nil {
		if _, serr := os.Stat(filepath.Join(dst, "node_modules")); serr != nil {
			return "", fmt.Errorf("install %s: %w", name, err)
		}
	}
	return dst, nil
}

// linkTree makes to a copy of the tree from, each file hard-linked (or
// copied where it cannot be), each folder made anew: the agent may add
// files to its own, never to the shared one.
func linkTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(target, dst)
		case !d.Type().IsRegular():
			return nil
		}
		if os.Link(path, dst) == nil {
			return nil
		}
		return copyFile(path, dst)
	})
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// OpenCodeCompactionPrompt starts the system prompt of OpenCode's (and
// Kilo CLI's) compaction summary request (its agent "compaction",
// 1.18.33).
const OpenCodeCompactionPrompt = "You are a context summarization agent"

// OpenCodeTitlePrompt starts the system prompt of OpenCode's request for
// a session's title (its agent "title"), sent without tools.
const OpenCodeTitlePrompt = "You are a title generator"

// IsOpenCodeCompaction reports whether r is OpenCode or Kilo CLI asking
// for a compaction summary.
func IsOpenCodeCompaction(r *Request) bool {
	return r.Protocol == "openai-chat" && strings.Contains(r.System, OpenCodeCompactionPrompt)
}

// IsOpenCodeTitle reports whether r is OpenCode or Kilo CLI asking for a
// session's title.
func IsOpenCodeTitle(r *Request) bool {
	return r.Protocol == "openai-chat" && strings.Contains(r.System, OpenCodeTitlePrompt)
}
