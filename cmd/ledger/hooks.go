package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// hookEvents are the Claude Code events ledger hooks, in the order they
// are written to settings.json.
var hookEvents = []string{"SessionStart", "PreCompact", "PostToolUse", "Stop", "SessionEnd"}

// hookTimeouts are the timeouts (seconds) written with each hook. ledger
// keeps its own, shorter deadlines inside them (hookDeadline).
var hookTimeouts = map[string]int{"SessionStart": 10, "PreCompact": 60, "PostToolUse": 5, "Stop": 15, "SessionEnd": 5}

type hookSpec struct {
	Matcher string
	Entry   hookEntry
}

type hooksOptions struct {
	Install bool
	Scope   string
	Mode    string
	Startup bool
	JSON    bool
}

func newHooksCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "Install or remove ledger's Claude Code hooks",
		Long: `Add ledger's hooks to Claude Code's settings.json, or take them out again.
Every other setting and every other hook is kept as it was; a second install
changes nothing. The previous file is kept as settings.json.bak.

Installed, ledger writes a handoff before each compaction, ingests the
transcript when a turn or session ends, suggests a handoff and /clear when the
context fills, and injects the handoff when a session resumes after /compact
or /clear. See 'ledger hook --help' for what happens at each event.`,
		Example: `  ledger hooks install
  ledger hooks install --mode clear --scope project
  ledger hooks uninstall`,
		Args: argsUsage(cobra.NoArgs),
	}
	for _, install := range []bool{true, false} {
		opts := &hooksOptions{Install: install}
		use, short := "install", "Add ledger's hooks to settings.json"
		if !install {
			use, short = "uninstall", "Remove ledger's hooks from settings.json (and nothing else)"
		}
		sub := &cobra.Command{
			Use:   use,
			Short: short,
			Args:  argsUsage(cobra.NoArgs),
			RunE: func(cmd *cobra.Command, args []string) error {
				return runHooks(cmd.Context(), app, opts)
			},
		}
		sub.Flags().StringVar(&opts.Scope, "scope", "user", "`user` (~/.claude/settings.json) or project (.claude/settings.json here)")
		if install {
			sub.Flags().StringVar(&opts.Mode, "mode", "assist", "`assist` (handoff before each compaction) or clear (block auto-compaction once the handoff is written, so you /clear instead)")
			sub.Flags().BoolVar(&opts.Startup, "startup", false, "also inject the project's latest handoff into brand-new sessions")
		}
		jsonFlag(sub, &opts.JSON)
		cmd.AddCommand(sub)
	}
	return cmd
}

// settingsPath is the settings.json of a scope.
func settingsPath(app *App, scope string) (string, error) {
	switch scope {
	case "user":
		home := app.Getenv("HOME")
		if home == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				return "", err
			}
			home = h
		}
		return filepath.Join(home, ".claude", "settings.json"), nil
	case "project":
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		return filepath.Join(wd, ".claude", "settings.json"), nil
	}
	return "", usagef("--scope %q: want user or project", scope)
}

// hookCommand is the command line written into settings.json: this very
// binary, by absolute path, so hooks work whatever PATH Claude Code has.
func hookCommand(app *App, mode string, startup bool) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the ledger binary: %w", err)
	}
	if abs, err := filepath.EvalSymlinks(exe); err == nil {
		exe = abs
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		// `go run` builds into a temporary folder that is gone when it exits:
		// hooks pointing there would all fail (quietly: hooks fail open).
		return "", fmt.Errorf("ledger is running from a temporary build (%s), which hooks cannot call later: install it first (go install ./cmd/ledger) and run the installed ledger", exe)
	}
	parts := []string{shellQuote(exe), "hook"}
	if mode == "clear" {
		parts = append(parts, "--mode", "clear")
	}
	if startup {
		parts = append(parts, "--startup")
	}
	if app.dbFlag != "" {
		parts = append(parts, "--db", shellQuote(absPath(app.dbFlag)))
	}
	return strings.Join(parts, " "), nil
}

// shellQuote quotes s for sh when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func runHooks(ctx context.Context, app *App, opts *hooksOptions) error {
	if opts.Install && opts.Mode != "assist" && opts.Mode != "clear" {
		return usagef("--mode %q: want assist or clear", opts.Mode)
	}
	path, err := settingsPath(app, opts.Scope)
	if err != nil {
		return err
	}
	old, err := os.ReadFile(path)
	perm := fs.FileMode(0o600)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		old = nil
	case err != nil:
		return fmt.Errorf("read %s: %w", path, err)
	default:
		if fi, err := os.Stat(path); err == nil {
			perm = fi.Mode().Perm()
		}
	}
	var add map[string]hookSpec
	if opts.Install {
		command, err := hookCommand(app, opts.Mode, opts.Startup)
		if err != nil {
			return err
		}
		add = map[string]hookSpec{}
		for _, ev := range hookEvents {
			add[ev] = hookSpec{Matcher: "", Entry: hookEntry{Type: "command", Command: command, Timeout: hookTimeouts[ev]}}
		}
	}
	updated, err := applyHooks(old, add)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	changed := !sameJSON(old, updated) && !(old == nil && add == nil)
	if changed {
		if err := writeAtomic(path, updated, perm); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if opts.JSON {
		return writeJSON(app.Stdout, struct {
			Settings string `json:"settings"`
			Changed  bool   `json:"changed"`
		}{path, changed})
	}
	switch {
	case !changed && opts.Install:
		fmt.Fprintf(app.Stdout, "ledger's hooks are already installed in %s (nothing changed)\n", path)
	case !changed:
		fmt.Fprintf(app.Stdout, "no ledger hooks in %s (nothing changed)\n", path)
	case opts.Install:
		fmt.Fprintf(app.Stdout, "installed ledger's hooks (%s mode) in %s; previous file kept as %s.bak\n", opts.Mode, path, filepath.Base(path))
	default:
		fmt.Fprintf(app.Stdout, "removed ledger's hooks from %s; previous file kept as %s.bak\n", path, filepath.Base(path))
	}
	return nil
}
