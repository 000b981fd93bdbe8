package main

import (
	"os"

	"github.com/agentledger/ledger/cmd/internal/agentconfig"
	"github.com/agentledger/ledger/cmd/internal/engine"
)

// cliAgent tells the agents whose hooks ledger writes in their own
// settings.json, each in its own shape: Gemini CLI, Qwen Code, Copilot CLI.
func cliAgent(agent string) bool {
	return agent == "gemini" || agent == "qwen" || agent == "copilot"
}

// agentHooksPath is the settings file of opts.Agent and scope.
func agentHooksPath(app *App, opts *hooksOptions) (string, error) {
	home, herr := app.home()
	wd, werr := app.Getwd()
	switch {
	case opts.Scope == "user" && herr != nil:
		return "", herr
	case opts.Scope == "project" && werr != nil:
		return "", werr
	case opts.Scope != "user" && opts.Scope != "project":
		return "", usagef("--scope %q: want user or project", opts.Scope)
	}
	return agentconfig.AgentHooksPath(opts.Agent, opts.Scope, home, wd, app.Getenv)
}

// editAgentSettings is the settings file of Gemini CLI, Qwen Code or
// Copilot CLI with ledger's hooks installed (this binary, by absolute
// path, with --agent, at every event of engine.AgentHookEvents; Copilot
// CLI's commands also name their event, which its input does not) or
// removed.
func editAgentSettings(app *App, opts *hooksOptions, old []byte) ([]byte, error) {
	if !opts.Install {
		if opts.Agent == "copilot" {
			return agentconfig.UninstallCopilotHooks(old)
		}
		return agentconfig.UninstallGroupHooks(old)
	}
	exe, err := hookProgram(app, opts)
	if err != nil {
		return nil, err
	}
	args := []string{"--agent", opts.Agent}
	if opts.Startup {
		args = append(args, "--startup")
	}
	if app.dbFlag != "" {
		args = append(args, "--db", engine.AbsPath(app.dbFlag))
	}
	events, _ := engine.AgentHookEvents(opts.Agent)
	var hooks []agentconfig.Hook
	for _, ev := range events {
		a := args
		if opts.Agent == "copilot" {
			a = append(args[:len(args):len(args)], "--event", ev.Name)
		}
		command, err := agentconfig.HookCommand(exe, a...)
		if err != nil {
			return nil, err
		}
		hooks = append(hooks, agentconfig.Hook{Event: ev.Name, Command: command, Timeout: ev.Timeout})
	}
	switch opts.Agent {
	case "gemini":
		return agentconfig.InstallGeminiHooks(old, hooks)
	case "qwen":
		return agentconfig.InstallQwenHooks(old, hooks)
	}
	return agentconfig.InstallCopilotHooks(old, hooks, opts.Scope == "project")
}

// agentInstallNote is what a user should know after installing the hooks
// of opts.Agent in the file at path, or "".
func agentInstallNote(opts *hooksOptions, path string) string {
	switch opts.Agent {
	case "gemini":
		if b, err := os.ReadFile(path); err == nil && agentconfig.GeminiHooksDisabled(b) {
			return "Gemini CLI's hooks are turned off in " + path + " (hooksConfig.enabled is false): ledger's run once you turn them on."
		}
		if opts.Scope == "project" {
			return "Gemini CLI loads a project's hooks only in a folder it trusts."
		}
	case "copilot":
		if opts.Scope == "project" {
			return "Copilot CLI loads a repository's hooks (.github/hooks) only in a folder it trusts."
		}
	}
	return ""
}
