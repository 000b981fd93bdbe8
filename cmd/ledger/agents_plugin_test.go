package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/store/storetest"
)

// pluginFixture is a file of testdata/agents.
func pluginFixture(parts ...string) string {
	return filepath.Join(append([]string{"..", "..", "testdata", "agents"}, parts...)...)
}

// piFixtureName is the real Pi session of testdata/agents/pi-0.73.1.
const piFixtureName = "2026-11-26T07-29-37-590Z_01a216c2-8921-7397-bbc1-38fa2acd5419.jsonl"

// copyTo copies a file to dst, making its folder.
func copyTo(t *testing.T, src, dst string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// pluginAgentsHome is a home where Pi, OpenCode and Kilo have each kept a
// real session, where the agents keep them.
func pluginAgentsHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	copyTo(t, pluginFixture("pi-0.73.1", piFixtureName), filepath.Join(home, ".pi", "agent", "sessions", "--work-agents-cache-proj-pi--", piFixtureName))
	copyTo(t, pluginFixture("opencode-1.18.33", "opencode.db"), filepath.Join(home, ".local", "share", "opencode", "opencode.db"))
	copyTo(t, pluginFixture("kilo-7.7.7", "kilo.db"), filepath.Join(home, ".local", "share", "kilo", "kilo.db"))
	return home
}

// TestIngestDiscoversPluginAgents: `ledger ingest` with no path reads Pi's
// sessions folder and OpenCode's and Kilo's databases where the agents
// keep them, and says which it read.
func TestIngestDiscoversPluginAgents(t *testing.T) {
	t.Parallel()
	home := pluginAgentsHome(t)
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	r := runCmd(t, home, "", "--db", db, "ingest", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var got struct {
		ingestJSON
		Folders []struct{ Agent, Path string } `json:"folders"`
	}
	decodeJSON(t, r.stdout, &got)
	if got.Files != 3 || got.Sessions != 3 || got.Compactions != 3 || got.Messages != 17+16+17 || len(got.Folders) != 3 {
		t.Fatalf("ingest %+v (stderr %s)", got, r.stderr)
	}
	want := map[string]string{
		"pi":       filepath.Join(home, ".pi", "agent", "sessions"),
		"opencode": filepath.Join(home, ".local", "share", "opencode", "opencode.db"),
		"kilo":     filepath.Join(home, ".local", "share", "kilo", "kilo.db"),
	}
	for _, f := range got.Folders {
		if want[f.Agent] != f.Path {
			t.Errorf("folder %+v, want %s", f, want[f.Agent])
		}
	}
	r = runCmd(t, home, "", "--db", db, "sessions", "--json")
	var sessions []struct{ ID, Source string }
	decodeJSON(t, r.stdout, &sessions)
	sources := map[string]int{}
	for _, s := range sessions {
		sources[s.Source]++
	}
	if len(sessions) != 3 || sources["pi"] != 1 || sources["opencode"] != 1 || sources["kilo"] != 1 {
		t.Errorf("sessions %+v", sessions)
	}
	// Each agent's own, by --agent.
	for _, agent := range []string{"pi", "opencode", "kilo"} {
		r = runCmd(t, home, "", "--db", db, "sessions", "--agent", agent, "--json")
		var only []struct{ Source string }
		decodeJSON(t, r.stdout, &only)
		if len(only) != 1 || only[0].Source != agent {
			t.Errorf("sessions --agent %s: %+v", agent, only)
		}
		r = runCmd(t, home, "", "--db", db, "search", "notes", "--agent", agent, "--json")
		var hits []struct{ Session string }
		decodeJSON(t, r.stdout, &hits)
		if len(hits) == 0 {
			t.Errorf("search --agent %s found nothing", agent)
		}
		for _, h := range hits {
			if !strings.HasPrefix(h.Session, map[string]string{"pi": "01a216c2", "opencode": "ses_de942", "kilo": "ses_de93d"}[agent]) {
				t.Errorf("search --agent %s: a hit of session %s", agent, h.Session)
			}
		}
	}
	// Where the agents' environment moves them.
	moved := t.TempDir()
	copyTo(t, pluginFixture("opencode-1.18.33", "opencode.db"), filepath.Join(moved, "data", "opencode", "other.db"))
	env := map[string]string{"HOME": home, "XDG_DATA_HOME": filepath.Join(moved, "data"), "OPENCODE_DB": "other.db"}
	folders := engineFolders(home, env)
	if folders["opencode"] != filepath.Join(moved, "data", "opencode", "other.db") || folders["kilo"] != filepath.Join(moved, "data", "kilo", "kilo.db") {
		t.Errorf("moved folders %v", folders)
	}
}

// engineFolders is the engine's discovery table for an environment, by agent.
func engineFolders(home string, env map[string]string) map[string]string {
	out := map[string]string{}
	for _, f := range engine.TranscriptFolders(home, func(k string) string { return env[k] }) {
		out[f.Agent] = f.Path
	}
	return out
}

// TestCrossAgentPluginAgents hands sessions between Claude Code and the
// plugin agents: the prompt names the agent it comes from, maps the tools
// by role (Claude Code's Edit to OpenCode's edit, write; Pi's bash to
// Claude Code's Bash), carries the task list with the receiving agent's plan
// tool (or as a plain plan for Pi, which has none); handoff --to prints the
// agent's own start command.
func TestCrossAgentPluginAgents(t *testing.T) {
	t.Parallel()
	home := pluginAgentsHome(t)
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	claude := filepath.Join("..", "..", "testdata", "handoff", "claude-tasks", "transcript.jsonl")
	if r := runCmd(t, home, "", "--db", db, "ingest", claude); r.code != 0 {
		t.Fatalf("ingest: %s", r.stderr)
	}
	if r := runCmd(t, home, "", "--db", db, "ingest"); r.code != 0 {
		t.Fatalf("ingest: %s", r.stderr)
	}
	for _, c := range []struct {
		session, to string
		want, not   []string
	}{
		{"5b3e9c1a", "opencode", []string{"Carry on the work of a Claude Code session (5b3e9c1a-", "whose tools have other names here",
			"Edit, MultiEdit, Write (file edits) → edit, write", "Bash (the shell) → bash", "TodoWrite (the task list) → todowrite",
			"to record first as your plan with todowrite:\n", "1. [completed] Add toCsv serializer with tests", "<ledger-record"}, nil},
		{"5b3e9c1a", "pi", []string{"Carry on the work of a Claude Code session", "Bash (the shell) → bash", "Its task list, to keep as your plan:\n", "1. [completed] Add toCsv serializer"},
			[]string{"TodoWrite (the task list) →"}},
		{"ses_de942ed7", "claude", []string{"Carry on the work of a OpenCode session (ses_de942ed70ffeMnYg4uqeokH7Or", "edit, write (file edits) → Edit, MultiEdit, Write",
			"bash (the shell) → Bash", "<ledger-record", "notes-"}, nil},
		{"01a216c2", "kilo", []string{"Carry on the work of a Pi session (01a216c2-", "<ledger-record",
			"read (grep, find, ls when enabled) (reading and searching files) → read, grep, glob"}, []string{"bash (the shell) →", "(file edits) →"}},
		{"ses_de93d91f", "opencode", []string{"Carry on the work of a Kilo CLI session"}, []string{"→"}},
	} {
		r := runCmd(t, home, "", "--db", db, "resume", "--for", c.to, c.session)
		if r.code != 0 {
			t.Fatalf("resume --for %s %s: %s", c.to, c.session, r.stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("resume --for %s %s lacks %q:\n%s", c.to, c.session, w, r.stdout)
			}
		}
		for _, w := range c.not {
			if strings.Contains(r.stdout, w) {
				t.Errorf("resume --for %s %s has %q:\n%s", c.to, c.session, w, r.stdout)
			}
		}
	}
	for _, c := range []struct{ to, session, want string }{
		{"opencode", "01a216c2", `cd /work/agents-cache/proj-pi && opencode --prompt "$(`},
		{"kilo", "5b3e9c1a", `cd /home/nadia/code/tidepool && kilo --prompt "$(`},
		{"pi", "ses_de942ed7", `cd /work/agents-cache/proj-oc && pi "$(`},
	} {
		r := runCmd(t, home, "", "--db", db, "handoff", "--to", c.to, c.session)
		if r.code != 0 || !strings.HasPrefix(r.stdout, c.want) || !strings.Contains(r.stdout, " resume --for "+c.to+" ") {
			t.Errorf("handoff --to %s %s: exit %d %q %s", c.to, c.session, r.code, r.stdout, r.stderr)
		}
	}
	if r := runCmd(t, home, "", "--db", db, "resume", "--for", "crush", "5b3e9c1a"); r.code != 2 || !strings.Contains(r.stderr, "opencode") {
		t.Errorf("--for crush: exit %d %s", r.code, r.stderr)
	}
}

// TestDoctorPluginAgents: doctor reports, for each plugin agent the user
// has, whether ledger's plugin is installed and runs this binary, and its
// sessions not ingested yet; an agent the user does not have is not named.
func TestDoctorPluginAgents(t *testing.T) {
	t.Parallel()
	home := pluginAgentsHome(t)
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	for _, a := range []string{"pi", "opencode"} {
		if r := runCmd(t, home, "", "--db", db, "hooks", "install", "--agent", a); r.code != 0 {
			t.Fatalf("install %s: %s", a, r.stderr)
		}
	}
	doctor := func() (out struct {
		Hooks []struct {
			Agent, File       string
			Events, Elsewhere []string
		} `json:"hooks"`
		Transcripts []struct {
			Agent, Path string
			Found       bool
			Behind      int `json:"files_behind"`
		} `json:"transcripts"`
	}) {
		r := runCmd(t, home, "", "--db", db, "doctor", "--json")
		decodeJSON(t, r.stdout, &out)
		return out
	}
	out := doctor()
	hooks := map[string]int{}
	for _, h := range out.Hooks {
		hooks[h.Agent] = len(h.Events)
		if len(h.Elsewhere) > 0 {
			t.Errorf("%s's plugin runs %v", h.Agent, h.Elsewhere)
		}
	}
	if hooks["pi"] != 5 || hooks["opencode"] != 5 {
		t.Errorf("plugins %+v", out.Hooks)
	}
	if _, ok := hooks["kilo"]; ok {
		t.Errorf("kilo reported without its config folder: %+v", out.Hooks)
	}
	behind := map[string]int{}
	for _, tf := range out.Transcripts {
		behind[tf.Agent] = tf.Behind
	}
	if behind["pi"] != 1 || behind["opencode"] != 1 || behind["kilo"] != 1 {
		t.Errorf("transcripts %+v", out.Transcripts)
	}
	if r := runCmd(t, home, "", "--db", db, "ingest"); r.code != 0 {
		t.Fatalf("ingest: %s", r.stderr)
	}
	for _, tf := range doctor().Transcripts {
		if tf.Behind != 0 {
			t.Errorf("after ingest %+v", tf)
		}
	}
}
