package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentledger/ledger/store/storetest"
)

// agentsTestdata is testdata/agents: real sessions of Gemini CLI, Qwen
// Code and Copilot CLI, and the hook payloads each sent.
var agentsTestdata = filepath.Join("..", "..", "testdata", "agents")

// agentFixture is one agent's recorded session: where the agent keeps
// it (under a home), where it was recorded, and its session id.
type agentFixture struct {
	agent, dir, file, home, recorded, session, cwd string
}

var agentFixtures = []agentFixture{
	{"gemini", "gemini-0.61.0", "session-2026-11-26T07-33-43a4cd49.jsonl",
		".gemini/tmp/proj/chats/session-2026-11-26T07-33-43a4cd49.jsonl",
		"/tmp/ledger-fixtures/gemini/home/.gemini/tmp/proj/chats/session-2026-11-26T07-33-43a4cd49.jsonl",
		"43a4cd49-8852-46d6-9a9b-e46d6b0404f9", "/tmp/ledger-fixtures/gemini/proj"},
	{"qwen", "qwen-0.24.4", "2b788ca2-da3e-4837-8559-64db64b96aa9.jsonl",
		".qwen/projects/-tmp-ledger-fixtures-qwen-proj/chats/2b788ca2-da3e-4837-8559-64db64b96aa9.jsonl",
		"/tmp/ledger-fixtures/qwen/home/.qwen/projects/-tmp-ledger-fixtures-qwen-proj/chats/2b788ca2-da3e-4837-8559-64db64b96aa9.jsonl",
		"2b788ca2-da3e-4837-8559-64db64b96aa9", "/tmp/ledger-fixtures/qwen/proj"},
	{"copilot", "copilot-1.0.102", "session-state/66fcbb38-f834-48de-bcfa-712cc7192b3c/events.jsonl",
		".copilot/session-state/66fcbb38-f834-48de-bcfa-712cc7192b3c/events.jsonl",
		"/tmp/ledger-fixtures/copilot/home/.copilot/session-state/66fcbb38-f834-48de-bcfa-712cc7192b3c/events.jsonl",
		"66fcbb38-f834-48de-bcfa-712cc7192b3c", "/tmp/ledger-fixtures/copilot/proj"},
}

// lines are the fixture's lines, each with its newline.
func (f agentFixture) lines(t *testing.T) [][]byte {
	t.Helper()
	return splitLines(t, filepath.Join(agentsTestdata, f.dir, f.file))
}

// place writes the fixture's first n lines (all for n < 0) where the
// agent keeps it under home, and returns that path.
func (f agentFixture) place(t *testing.T, home string, n int) string {
	t.Helper()
	lines := f.lines(t)
	if n >= 0 {
		lines = lines[:n]
	}
	path := filepath.Join(home, filepath.FromSlash(f.home))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// payload is a recorded hook payload (hooks/<name>.json), its transcript
// path moved to path.
func (f agentFixture) payload(t *testing.T, name, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(agentsTestdata, f.dir, "hooks", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), f.recorded, path)
}

// TestIngestFindsEveryAgentsFolder: `ledger ingest` with no path reads
// each agent's own sessions folder that exists (moved by the agent's own
// environment variable where one is set), and each session is listed,
// filtered and searched under its agent.
func TestIngestFindsEveryAgentsFolder(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	for _, f := range agentFixtures {
		f.place(t, home, -1)
	}
	claude := filepath.Join(home, ".claude", "projects", "-home-dev-src-payments", "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57.jsonl")
	os.MkdirAll(filepath.Dir(claude), 0o700)
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sample", "claude", "-home-dev-src-payments", "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(claude, b, 0o600)

	r := runCmd(t, home, "", "--db", db, "ingest", "--json")
	if r.code != 0 {
		t.Fatalf("ingest: exit %d: %s", r.code, r.stderr)
	}
	var sum struct {
		Sessions, Compactions int
		Folders               []struct{ Agent, Path string }
		Unrecognized          []string
	}
	decodeJSON(t, r.stdout, &sum)
	var agents []string
	for _, f := range sum.Folders {
		agents = append(agents, f.Agent)
	}
	if strings.Join(agents, ",") != "claude,gemini,qwen,copilot" || sum.Sessions != 4 || sum.Compactions != 6 || len(sum.Unrecognized) != 0 {
		t.Errorf("ingest read folders %v: %d sessions, %d compactions, unrecognized %v; want claude,gemini,qwen,copilot, 4 sessions, 6 compactions",
			agents, sum.Sessions, sum.Compactions, sum.Unrecognized)
	}
	if r := runCmd(t, home, "", "--db", db, "ingest"); r.code != 0 || !strings.Contains(r.stdout, filepath.Join(home, ".gemini", "tmp")+" (Gemini CLI)") ||
		!strings.Contains(r.stdout, "0 sessions, 0 messages, 0 compactions added") {
		t.Errorf("second ingest: exit %d, %q", r.code, r.stdout)
	}

	var list []struct{ ID, Source, Project string }
	decodeJSON(t, runCmd(t, home, "", "--db", db, "sessions", "--json").stdout, &list)
	got := map[string]string{}
	for _, s := range list {
		got[s.Source] = s.ID + " " + s.Project
	}
	for _, f := range agentFixtures {
		if got[f.agent] != f.session+" "+f.cwd {
			t.Errorf("%s session: %q, want %s in %s", f.agent, got[f.agent], f.session, f.cwd)
		}
	}
	for _, f := range agentFixtures {
		var only []struct{ ID, Source string }
		decodeJSON(t, runCmd(t, home, "", "--db", db, "sessions", "--agent", f.agent, "--json").stdout, &only)
		if len(only) != 1 || only[0].ID != f.session {
			t.Errorf("sessions --agent %s: %+v", f.agent, only)
		}
		var hits []struct{ Session string }
		decodeJSON(t, runCmd(t, home, "", "--db", db, "search", "notes-2.txt", "--agent", f.agent, "--json").stdout, &hits)
		if len(hits) == 0 {
			t.Errorf("search --agent %s found nothing", f.agent)
		}
		for _, h := range hits {
			if h.Session != f.session {
				t.Errorf("search --agent %s: a hit of session %s", f.agent, h.Session)
			}
		}
	}
	for _, args := range [][]string{{"sessions", "--agent", "cursor"}, {"search", "x", "--agent", "cursor"}} {
		if r := runCmd(t, home, "", append([]string{"--db", db}, args...)...); r.code != 2 || !strings.Contains(r.stderr, "gemini, qwen, copilot") {
			t.Errorf("%v: exit %d, %q", args, r.code, r.stderr)
		}
	}

	// Each agent's own variable moves its folder.
	moved := t.TempDir()
	f := agentFixtures[2]
	f.home = "state/session-state/" + f.session + "/events.jsonl"
	f.place(t, moved, -1)
	r = execLedger(t, home, "", "", []string{"COPILOT_HOME=" + filepath.Join(moved, "state")}, "--db", filepath.Join(moved, "l.db"), "ingest", "--json")
	decodeJSON(t, r.stdout, &sum)
	if r.code != 0 || len(sum.Folders) != 4 || sum.Folders[3].Path != filepath.Join(moved, "state", "session-state") {
		t.Errorf("COPILOT_HOME: exit %d, folders %+v (%s)", r.code, sum.Folders, r.stderr)
	}
}

// TestCrossAgentNewAgents: a session of one agent handed to another, the
// tool names translated from the source's to the target's, the target's
// own command line.
func TestCrossAgentNewAgents(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	for _, f := range agentFixtures {
		f.place(t, home, -1)
	}
	if r := runCmd(t, home, "", "--db", db, "ingest"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	sample := filepath.Join("..", "..", "testdata", "sample")
	if r := runCmd(t, home, "", "--db", db, "ingest", sample); r.code != 0 {
		t.Fatal(r.stderr)
	}
	tests := []struct {
		session, to string
		want        []string
		not         []string
	}{
		// Claude Code's tools in Gemini CLI's names.
		{"7c1d9e42", "gemini", []string{"Carry on the work of a Claude Code session", "- Edit, MultiEdit, Write (file edits) → write_file, replace",
			"- Bash (the shell) → run_shell_command", "to record first as your plan with write_todos"}, nil},
		// Gemini CLI's in Claude Code's.
		{"43a4cd49", "claude", []string{"Carry on the work of a Gemini CLI session", "- write_file, replace (file edits) → Edit, MultiEdit, Write",
			"- run_shell_command (the shell) → Bash"}, nil},
		{"2b788ca2", "copilot", []string{"a Qwen Code session", "- write_file, edit (file edits) → create, edit", "- run_shell_command (the shell) → bash"}, []string{"the web"}},
		{"66fcbb38", "codex", []string{"a Copilot CLI session", "- create, edit (file edits) → apply_patch"}, nil},
		{"43a4cd49", "gemini", []string{"a Gemini CLI session"}, []string{"other names"}},
	}
	for _, tc := range tests {
		r := runCmd(t, home, "", "--db", db, "resume", "--for", tc.to, tc.session)
		if r.code != 0 {
			t.Fatalf("resume --for %s %s: %s", tc.to, tc.session, r.stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("resume --for %s %s lacks %q:\n%s", tc.to, tc.session, w, r.stdout)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(r.stdout, n) {
				t.Errorf("resume --for %s %s has %q", tc.to, tc.session, n)
			}
		}
	}
	// A session of these agents is exported as Claude Code's JSONL, never
	// restored as if it were one of its agent's own.
	if r := runCmd(t, home, "", "--db", db, "export", "43a4cd49", "--restore"); r.code != 1 || !strings.Contains(r.stderr, "not Gemini CLI's") {
		t.Errorf("export --restore of a Gemini session: exit %d, %q", r.code, r.stderr)
	}
	if r := runCmd(t, home, "", "--db", db, "export", "66fcbb38"); r.code != 0 || !strings.Contains(r.stdout, `"type":"user"`) {
		t.Errorf("export of a Copilot session: exit %d, %.200q (%s)", r.code, r.stdout, r.stderr)
	}
	for _, c := range []struct{ to, start string }{{"gemini", "&& gemini \"$("}, {"qwen", "&& qwen -i \"$("}, {"copilot", "&& copilot -i \"$("}} {
		r := runBin(t, home, "", "--db", db, "handoff", "--to", c.to, "7c1d9e42")
		if r.code != 0 || !strings.Contains(r.stdout, c.start) || !strings.Contains(r.stdout, "resume --for "+c.to+" 7c1d9e42-") {
			t.Errorf("handoff --to %s: exit %d, %q", c.to, r.code, r.stdout)
		}
	}
}

// TestIngestAgentLogsAsTheyGrow: each agent's session file ingested as it
// grew, a cut at every few lines, keeps what one ingest of the whole file
// keeps; a Gemini CLI log rewritten from its head (as Gemini CLI rewrites
// one it cannot read: its header, then the messages as it holds them) is
// read again from its start and adds nothing.
func TestIngestAgentLogsAsTheyGrow(t *testing.T) {
	t.Parallel()
	for _, f := range agentFixtures {
		t.Run(f.agent, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			whole := storetest.MigratedFile(t, filepath.Join(home, "whole.db"))
			f.place(t, home, -1)
			if r := runCmd(t, home, "", "--db", whole, "ingest"); r.code != 0 {
				t.Fatal(r.stderr)
			}
			want := runCmd(t, home, "", "--db", whole, "export", f.session, "--format", "md").stdout
			wantAudit := auditRows(t, home, whole)

			grown := storetest.MigratedFile(t, filepath.Join(home, "grown.db"))
			lines := f.lines(t)
			for n := 1; n <= len(lines); n += 4 {
				f.place(t, home, n)
				if r := runCmd(t, home, "", "--db", grown, "ingest"); r.code != 0 {
					t.Fatalf("%d lines: %s", n, r.stderr)
				}
			}
			f.place(t, home, -1)
			runCmd(t, home, "", "--db", grown, "ingest")
			if got := runCmd(t, home, "", "--db", grown, "export", f.session, "--format", "md").stdout; got != want {
				t.Errorf("ingested as it grew:\n%s\nwant\n%s", got, want)
			}
			if got := auditRows(t, home, grown); len(got) != len(wantAudit) {
				t.Errorf("%d compactions as it grew, want %d", len(got), len(wantAudit))
			}
			if f.agent != "gemini" {
				return
			}
			// Rewritten from its head: the header, then each message once,
			// as Gemini CLI's rewriteConversationFile writes it.
			var kept [][]byte
			seen := map[string]int{}
			for _, l := range lines {
				var m struct {
					ID *string `json:"id"`
				}
				json.Unmarshal(l, &m)
				switch {
				case len(kept) == 0:
					kept = append(kept, l)
				case m.ID != nil:
					if i, ok := seen[*m.ID]; ok {
						kept[i] = l // the last copy wins
					} else {
						seen[*m.ID] = len(kept)
						kept = append(kept, l)
					}
				}
			}
			path := filepath.Join(home, filepath.FromSlash(f.home))
			os.WriteFile(path, bytes.Join(kept, nil), 0o600)
			var sum struct{ Files, Sessions, Messages, Compactions int }
			decodeJSON(t, runCmd(t, home, "", "--db", grown, "ingest", "--json").stdout, &sum)
			if sum.Files != 1 || sum.Sessions != 0 || sum.Messages != 0 || sum.Compactions != 0 {
				t.Errorf("the rewritten log: %+v, want it read again and nothing added", sum)
			}
		})
	}
}
