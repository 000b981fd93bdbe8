package engine

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentledger/ledger/cmd/internal/agentconfig"
)

// copyFile copies a test input where a test needs it, making its folder.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCheckupPluginAgents: doctor's set-up check of the agents that take
// ledger's plugin file: an agent whose folder exists is reported, with the
// events its ledger plugin runs at and a plugin that runs another ledger
// binary named as a problem; one with no plugin has no events; an agent
// not there is not mentioned. Pi's sessions folder and OpenCode's
// database are reported, the database behind until it is ingested.
func TestCheckupPluginAgents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _, home := hookEngine(t)
	getenv := func(string) string { return "" }
	agents := filepath.Join("..", "..", "..", "testdata", "agents")
	pi, err := agentconfig.PluginPath("pi", "user", home, "", getenv)
	if err != nil {
		t.Fatal(err)
	}
	timeouts := map[string]int{}
	for _, ev := range PluginHookEvents() {
		timeouts[ev.Name] = ev.Timeout
	}
	if _, err := agentconfig.InstallPlugin(pi, func(created string) ([]byte, error) {
		return agentconfig.PluginSource(agentconfig.PluginOptions{Agent: "pi", Name: "Pi", Exe: "/opt/other/ledger", Timeouts: timeouts}, created)
	}); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(agents, "pi-0.73.1", "2026-11-26T07-29-37-590Z_01a216c2-8921-7397-bbc1-38fa2acd5419.jsonl"),
		filepath.Join(home, ".pi", "agent", "sessions", "--tmp-proj--", "s.jsonl"))
	if err := os.MkdirAll(filepath.Join(home, ".config", "opencode"), 0o700); err != nil {
		t.Fatal(err)
	}
	db := AgentDatabase("opencode", home, getenv)
	if want := filepath.Join(home, ".local", "share", "opencode", "opencode.db"); db != want {
		t.Fatalf("AgentDatabase(opencode) = %s, want %s", db, want)
	}
	if AgentDatabase("claude", home, getenv) != "" {
		t.Error("AgentDatabase(claude): want none")
	}
	copyFile(t, filepath.Join(agents, "opencode-1.18.33", "opencode.db"), db)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o := CheckupOptions{Home: home, Getenv: getenv, Exe: exe, ClaudeDir: filepath.Join(home, ".claude"), CodexHome: filepath.Join(home, ".codex")}
	c, err := e.Checkup(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	hooks := map[string]HookSetup{}
	for _, h := range c.Hooks {
		hooks[h.Agent] = h
	}
	var names []string
	for _, ev := range PluginHookEvents() {
		names = append(names, ev.Name)
	}
	if h := hooks["pi"]; h.File != pi || !slices.Equal(h.Events, names) || !slices.Equal(h.Elsewhere, []string{"/opt/other/ledger"}) {
		t.Errorf("pi's plugin: %+v; want %s running at %v, another binary", h, pi, names)
	}
	if h, ok := hooks["opencode"]; !ok || len(h.Events) != 0 {
		t.Errorf("opencode with no plugin: %+v (reported %v)", h, ok)
	}
	if h, ok := hooks["kilo"]; ok {
		t.Errorf("kilo, not installed, reported: %+v", h)
	}
	if !slices.ContainsFunc(c.Problems, func(p string) bool { return strings.HasPrefix(p, "pi's ledger plugin runs another ledger binary") }) {
		t.Errorf("problems %q: want pi's plugin running another binary", c.Problems)
	}
	folder := func(c Checkup, agent string) TranscriptFolder {
		for _, f := range c.Transcripts {
			if f.Agent == agent {
				return f
			}
		}
		return TranscriptFolder{}
	}
	if f := folder(c, "pi"); !f.Found || f.Files != 1 || f.Behind != 1 {
		t.Errorf("pi's sessions: %+v; want one file, behind", f)
	}
	if f := folder(c, "opencode"); f.Path != db || f.Behind != 1 || f.Bytes <= 0 || f.Oldest == nil {
		t.Errorf("opencode's database before an ingest: %+v; want it behind", f)
	}
	if _, err := e.Ingest(ctx, []string{db}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	if c, err = e.Checkup(ctx, o); err != nil {
		t.Fatal(err)
	}
	if f := folder(c, "opencode"); f.Behind != 0 || f.Bytes != 0 {
		t.Errorf("opencode's database after an ingest: %+v; want nothing behind", f)
	}
}

// TestPluginSessionStartSource: OpenCode's plugin cannot tell a new
// session from one continued (its SessionStart names no source): the hook
// reads the session from OpenCode's database and takes it as a resume
// when its model has replied, as a start when the session has nothing.
func TestPluginSessionStartSource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _, home := hookEngine(t)
	e.hookScale = 60
	db := filepath.Join(home, ".local", "share", "opencode", "opencode.db")
	copyFile(t, filepath.Join("..", "..", "..", "testdata", "agents", "opencode-1.18.33", "opencode.db"), db)
	o := HookOptions{Agent: "opencode", Database: db, StateDir: filepath.Join(home, "state")}
	for _, tc := range []struct{ session, want string }{
		{"ses_de942ed70ffeMnYg4uqeokH7Or", "OpenCode session start, taken as resume"},
		{"ses_nothing_here", "OpenCode session start, taken as startup"},
	} {
		in := `{"agent":"opencode","hook_event_name":"SessionStart","session_id":"` + tc.session + `","cwd":"/work/agents-cache/proj-oc","source":""}`
		run := e.RunHook(ctx, strings.NewReader(in), o)
		if !strings.Contains(run.Receipt.Detail, tc.want) {
			t.Errorf("%s: receipt %+v (warning %q); want %q", tc.session, run.Receipt, run.Warning, tc.want)
		}
	}
}
