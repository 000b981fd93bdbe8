package agentconfig

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
)

// CodexHooksPath is Codex's hooks.json of a scope: "user" (hooks.json in
// $CODEX_HOME, default ~/.codex) or "project" (.codex/hooks.json in the
// folder wd, which Codex loads only when it trusts the project).
func CodexHooksPath(scope, home, wd, codexHome string) (string, error) {
	switch scope {
	case "user":
		if codexHome == "" {
			codexHome = filepath.Join(home, ".codex")
		}
		return filepath.Join(codexHome, "hooks.json"), nil
	case "project":
		return filepath.Join(wd, ".codex", "hooks.json"), nil
	}
	return "", fmt.Errorf("--scope %q: want user or project", scope)
}

// InstallCodexHooks returns Codex's hooks.json with ledger's hooks
// replaced by hooks. Codex's hooks.json has the shape of Claude Code's
// "hooks" object ({"hooks": {"Stop": [{"matcher": …, "hooks": [{"type":
// "command", "command": …, "timeout": …}]}]}}), so it is edited the same
// way: everything not ledger's is kept byte for byte, and a second install
// changes nothing.
func InstallCodexHooks(doc []byte, hooks []Hook) ([]byte, error) {
	return InstallClaudeHooks(doc, hooks)
}

// UninstallCodexHooks returns hooks.json without ledger's hooks,
// everything else byte for byte; nil (remove the file) when nothing but an
// empty object is left of it: a hooks.json that configures nothing is one
// install made.
func UninstallCodexHooks(doc []byte) ([]byte, error) {
	out, err := UninstallClaudeHooks(doc)
	if err != nil || bytes.Equal(out, doc) {
		return out, err
	}
	if t := bytes.TrimSpace(out); len(t) == 0 || bytes.Equal(t, []byte("{}")) {
		return nil, nil
	}
	return out, nil
}

// AgentStartCommand is the shell command line that starts agent ("claude"
// or "codex") in the folder project with the resume context of session as
// its first prompt, which the ledger binary at exe prints (`resume --for`,
// after flags such as --db).
func AgentStartCommand(agent, exe, session, project string, flags ...string) string {
	return AgentCommandLine(agent, agent, exe, session, project, flags...)
}

// AgentCommandLine is AgentStartCommand for an agent started by command
// (its program and the flags that take a first prompt and stay open:
// "qwen -i"), agent being its name for `resume --for`.
func AgentCommandLine(command, agent, exe, session, project string, flags ...string) string {
	arg := shellQuote(session)
	if strings.HasPrefix(session, "-") {
		// An id from a transcript is never taken for a flag
		// (--cpuprofile=FILE would write FILE).
		arg = "-- " + arg
	}
	resume := LedgerCommand(exe, flags...) + " resume --for " + shellQuote(agent) + " " + arg
	line := command + ` "$(` + resume + `)"`
	if project != "" {
		line = "cd " + shellQuote(project) + " && " + line
	}
	return line
}

// LedgerCommand is the ledger binary at exe (absolute) with flags, quoted
// for sh where they need it.
func LedgerCommand(exe string, flags ...string) string {
	if abs, err := filepath.EvalSymlinks(exe); err == nil {
		exe = abs
	}
	c := shellQuote(exe)
	for _, f := range flags {
		c += " " + shellQuote(f)
	}
	return c
}
