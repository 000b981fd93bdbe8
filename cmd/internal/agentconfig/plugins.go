package agentconfig

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

// OpenCode, Kilo CLI and Pi run no hook commands: they load JS/TS plugins
// from folders of their own. For them ledger writes one plugin file (and
// removes it again), which runs `ledger hook --agent AGENT` at the events
// ledger handles, with the event as JSON on stdin.
//
//	agent     user scope                               project scope
//	opencode  $XDG_CONFIG_HOME/opencode/plugin/ledger.js  .opencode/plugin/ledger.js
//	kilo      $XDG_CONFIG_HOME/kilo/plugin/ledger.js      .kilo/plugin/ledger.js
//	pi        $PI_CODING_AGENT_DIR/extensions/ledger.js   .pi/extensions/ledger.js
//	          (~/.pi/agent by default)
//
// OpenCode and Kilo load every *.js and *.ts in a plugin/ (or plugins/)
// folder of each of their config folders; Pi every *.ts and *.js in its extensions
// folders. The file is ledger's alone: its first line says so, install
// replaces only a file that carries it and never another one, and
// uninstall removes it and the folders install made for it (when they are
// empty), so that nothing else is left changed.

//go:embed plugins/opencode.js plugins/pi.js
var pluginFS embed.FS

// pluginMarker starts the first line of every plugin file ledger writes.
const pluginMarker = "// ledger: plugin written by `ledger hooks install --agent "

// createdPrefix starts the second line when install made folders for the
// file: the topmost one it made.
const createdPrefix = "// ledger made the folder "

// IsPluginAgent tells whether the agent takes ledger's plugin file rather
// than hook commands.
func IsPluginAgent(agent string) bool {
	switch agent {
	case "opencode", "kilo", "pi":
		return true
	}
	return false
}

// PluginPath is where ledger's plugin file for agent goes: scope "user"
// (the agent's own config folder, moved by its environment as the agent
// moves it; getenv reads it) or "project" (the agent's folder in wd).
func PluginPath(agent, scope, home, wd string, getenv func(string) string) (string, error) {
	if !IsPluginAgent(agent) {
		return "", fmt.Errorf("agent %q takes no plugin", agent)
	}
	if scope == "project" {
		if wd == "" {
			return "", errors.New("no working folder for --scope project")
		}
		switch agent {
		case "pi":
			return filepath.Join(wd, ".pi", "extensions", "ledger.js"), nil
		case "kilo":
			return filepath.Join(wd, ".kilo", "plugin", "ledger.js"), nil
		}
		return filepath.Join(wd, ".opencode", "plugin", "ledger.js"), nil
	}
	if scope != "user" {
		return "", fmt.Errorf("scope %q: want user or project", scope)
	}
	abs := func(name, def string) string {
		if v := getenv(name); v != "" && filepath.IsAbs(v) {
			return filepath.Clean(v)
		}
		return def
	}
	if home == "" && (agent == "pi" && getenv("PI_CODING_AGENT_DIR") == "" || agent != "pi" && getenv("XDG_CONFIG_HOME") == "") {
		return "", errors.New("no home folder to install the plugin in")
	}
	if agent == "pi" {
		return filepath.Join(abs("PI_CODING_AGENT_DIR", filepath.Join(home, ".pi", "agent")), "extensions", "ledger.js"), nil
	}
	return filepath.Join(abs("XDG_CONFIG_HOME", filepath.Join(home, ".config")), agent, "plugin", "ledger.js"), nil
}

// PluginOptions make ledger's plugin file.
type PluginOptions struct {
	Agent string // opencode, kilo or pi
	Name  string // the agent's name for people
	// Exe is the ledger binary (absolute) the plugin runs; "ledger" on PATH
	// when that file is gone.
	Exe string
	// Args follow "hook --agent AGENT": --db, --startup.
	Args []string
	// Timeouts are each event's timeout in seconds, by hook event name.
	Timeouts map[string]int
}

// PluginSource is the plugin file for o, made beside the folder created
// (the topmost folder install makes for it, "" for none), which the file
// records for uninstall.
func PluginSource(o PluginOptions, created string) ([]byte, error) {
	name := "opencode.js"
	if o.Agent == "pi" {
		name = "pi.js"
	}
	text, err := pluginFS.ReadFile("plugins/" + name)
	if err != nil {
		return nil, err
	}
	tmpl, err := template.New(name).Parse(string(text))
	if err != nil {
		return nil, err
	}
	exe := o.Exe
	if abs, err := filepath.EvalSymlinks(exe); err == nil {
		exe = abs
	}
	ms := map[string]int{}
	for ev, s := range o.Timeouts {
		ms[ev] = s * 1000
	}
	// JSON is JavaScript: each value goes in as a literal, escaped.
	lit := func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	}
	data := map[string]string{"Agent": o.Agent, "Name": o.Name}
	for k, v := range map[string]any{"Ledger": exe, "Args": append([]string{"hook", "--agent", o.Agent}, o.Args...), "AgentJS": o.Agent, "Timeouts": ms} {
		if data[k], err = lit(v); err != nil {
			return nil, err
		}
	}
	data["Created"] = "ledger made no folder for this file."
	if created != "" && !strings.ContainsAny(created, "\r\n\u2028\u2029") {
		// (A folder whose name has a line break is not recorded: uninstall
		// then leaves it, rather than read back another folder's name.)
		data["Created"] = strings.TrimPrefix(createdPrefix, "// ") + created + " for this file."
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// IsLedgerPlugin tells whether a file is a plugin ledger wrote.
func IsLedgerPlugin(b []byte) bool {
	return bytes.HasPrefix(b, []byte(pluginMarker))
}

// ErrNotLedgerPlugin is returned for a file at the plugin's path that
// ledger did not write: it is the user's, and left as it is.
var ErrNotLedgerPlugin = errors.New("a file ledger did not write is there: it is left as it is")

// InstallPlugin writes the plugin file made by src at path (src is given
// the topmost folder the install makes, "" when the folder exists). A
// file of ledger's there is replaced; any other file is an error
// (ErrNotLedgerPlugin) and left as it is. It reports whether the file
// changed.
func InstallPlugin(path string, src func(created string) ([]byte, error)) (bool, error) {
	old, err := os.ReadFile(path)
	switch {
	case err == nil && !IsLedgerPlugin(old):
		return false, fmt.Errorf("%s: %w", path, ErrNotLedgerPlugin)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	created := ""
	if err == nil {
		created = createdOf(old) // the same file again: what the first install made
	} else {
		created = firstMissing(filepath.Dir(path))
	}
	b, err := src(created)
	if err != nil {
		return false, err
	}
	if bytes.Equal(old, b) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	if err := writeAtomic(path, b, 0o644); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	return true, nil
}

// UninstallPlugin removes ledger's plugin file at path, and the folders its
// install made that are empty then; a file ledger did not write is an
// error (ErrNotLedgerPlugin) and stays. It reports whether anything was
// removed.
func UninstallPlugin(path string) (bool, error) {
	old, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read %s: %w", path, err)
	case !IsLedgerPlugin(old):
		return false, fmt.Errorf("%s: %w", path, ErrNotLedgerPlugin)
	}
	if err := os.Remove(path); err != nil {
		return false, fmt.Errorf("remove %s: %w", path, err)
	}
	if created := createdOf(old); created != "" {
		// From the file's folder up to the topmost one install made, each
		// while empty (os.Remove refuses a folder that is not).
		for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
			if !within(dir, created) || os.Remove(dir) != nil || dir == created {
				break
			}
		}
	}
	return true, nil
}

// createdOf is the folder a plugin file says its install made, "" for none.
func createdOf(b []byte) string {
	_, rest, ok := bytes.Cut(b, []byte("\n"))
	if !ok {
		return ""
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	dir, ok := strings.CutPrefix(string(line), createdPrefix)
	if !ok {
		return ""
	}
	dir = strings.TrimSuffix(dir, " for this file.")
	if !filepath.IsAbs(dir) {
		return ""
	}
	return filepath.Clean(dir)
}

// firstMissing is the topmost folder of dir's that does not exist yet ("" when
// dir exists).
func firstMissing(dir string) string {
	missing := ""
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			return missing
		}
		missing = d
		if filepath.Dir(d) == d {
			return missing
		}
	}
}

// within tells whether dir is top or a folder below it.
func within(dir, top string) bool {
	rel, err := filepath.Rel(top, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// PluginProgram is the ledger binary a plugin file of ledger's runs (its
// LEDGER constant), "" when b is not one.
func PluginProgram(b []byte) string {
	if !IsLedgerPlugin(b) {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, "const LEDGER")
		if !ok {
			continue
		}
		_, lit, ok := strings.Cut(rest, "= ")
		var prog string
		if ok && json.Unmarshal([]byte(strings.TrimSpace(lit)), &prog) == nil {
			return prog
		}
		return ""
	}
	return ""
}
