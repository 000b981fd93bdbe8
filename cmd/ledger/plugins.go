package main

import (
	"context"
	"fmt"

	"github.com/agentledger/ledger/cmd/internal/agentconfig"
	"github.com/agentledger/ledger/cmd/internal/engine"
)

// runPluginHooks is `ledger hooks install|uninstall --agent opencode|kilo|pi`:
// ledger's plugin file written into (or removed from) the agent's plugin
// folder (agentconfig.PluginPath), with nothing else changed. The plugin
// runs this very binary by absolute path (EvalSymlinks'd, as the hooks of
// Claude Code and Codex do), or `ledger` from PATH when that file is gone
// (a reinstall elsewhere): the path keeps working across PATH changes the
// agent's environment may have, and the fallback keeps it working after a
// move.
func runPluginHooks(ctx context.Context, app *App, opts *hooksOptions) error {
	switch {
	case opts.Install && opts.Mode == "clear":
		return usagef("--mode clear: %s's plugin cannot block a compaction; use assist", engine.AgentName(opts.Agent))
	case opts.StatusLine:
		return usagef("--statusline: %s has no status line command; it is Claude Code's", engine.AgentName(opts.Agent))
	case opts.Scope != "user" && opts.Scope != "project":
		return usagef("--scope %q: want user or project", opts.Scope)
	}
	home, herr := app.home()
	wd, werr := app.Getwd()
	switch {
	case opts.Scope == "project" && werr != nil:
		return werr
	case opts.Scope == "user" && herr != nil:
		home = ""
	}
	path, err := agentconfig.PluginPath(opts.Agent, opts.Scope, home, wd, app.Getenv)
	if err != nil {
		if herr != nil {
			return herr
		}
		return err
	}
	// A checkout's link must not take the plugin out of it (into the
	// user's own configuration, making it every project's).
	if root := scopeRoot(app, opts.Scope); root != "" {
		if _, err := agentconfig.RealFile(path, root); err != nil {
			return err
		}
	}
	var changed bool
	if opts.Install {
		exe, err := app.executable()
		if err != nil {
			return fmt.Errorf("find the ledger binary: %w", err)
		}
		var args []string
		if opts.Startup {
			args = append(args, "--startup")
		}
		if app.dbFlag != "" {
			args = append(args, "--db", engine.AbsPath(app.dbFlag))
		}
		timeouts := map[string]int{}
		for _, ev := range engine.PluginHookEvents() {
			timeouts[ev.Name] = ev.Timeout
		}
		o := agentconfig.PluginOptions{Agent: opts.Agent, Name: engine.AgentName(opts.Agent), Exe: exe, Args: args, Timeouts: timeouts}
		changed, err = agentconfig.InstallPlugin(path, func(created string) ([]byte, error) { return agentconfig.PluginSource(o, created) })
		if err != nil {
			return err
		}
	} else if changed, err = agentconfig.UninstallPlugin(path); err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(app.Stdout, struct {
			Settings string `json:"settings"`
			Changed  bool   `json:"changed"`
		}{path, changed})
	}
	name := engine.AgentName(opts.Agent)
	switch {
	case !changed && opts.Install:
		fmt.Fprintf(app.Stdout, "ledger's %s plugin is already installed: %s (nothing changed)\n", name, path)
	case !changed:
		fmt.Fprintf(app.Stdout, "no ledger plugin for %s at %s (nothing changed)\n", name, path)
	case opts.Install:
		fmt.Fprintf(app.Stdout, "installed ledger's %s plugin: %s\n%s loads it at its next start.\n", name, path, name)
	default:
		fmt.Fprintf(app.Stdout, "removed ledger's %s plugin: %s\n", name, path)
	}
	return nil
}
