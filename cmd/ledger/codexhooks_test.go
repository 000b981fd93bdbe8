package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/store/storetest"
)

const codexSession = "019e5a10-7c2b-7d41-9a8e-3f6b2c1d0e9a"

// codexUserHooks is a user's own ~/.codex/hooks.json, in an indentation
// and key order of its own, with no final line break.
const codexUserHooks = `{
    "hooks": {
        "PreToolUse": [ { "matcher": "^Bash$", "hooks": [ { "type": "command", "command": "python3 ~/.codex/guard.py", "statusMessage": "checking" } ] } ],
        "Stop": [ { "hooks": [ { "type": "command", "command": "notify-send \"codex done\"", "timeout": 5 } ] } ]
    }
}`

// codexRollout writes the fixture rollout, as Codex keeps it under
// $HOME/.codex/sessions, with the given session_meta changes (old → new
// text) and returns its path.
func codexRollout(t *testing.T, home string, edits ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "codex-hooks", "rollout-turn1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(edits); i += 2 {
		if !bytes.Contains(b, []byte(edits[i])) {
			t.Fatalf("fixture has no %q", edits[i])
		}
		b = bytes.Replace(b, []byte(edits[i]), []byte(edits[i+1]), 1)
	}
	path := filepath.Join(home, ".codex", "sessions", "2026", "11", "20", "rollout-2026-11-20T10-00-00-"+codexSession+".jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// codexPayload is the fixture hook input of an event, for the rollout at
// path, with extra fields set.
func codexPayload(t *testing.T, name, path string, extra map[string]any) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "codex-hooks", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	m["transcript_path"], m["cwd"] = path, "/home/dev/src/shop"
	for k, v := range extra {
		m[k] = v
	}
	return hookJSON(t, m)
}

// runHookEnv runs `ledger hook` in-process with extra environment
// variables.
func runHookEnv(t *testing.T, home, stdin string, env []string, args ...string) result {
	t.Helper()
	return newCmd(home, stdin, env...).run(append([]string{"hook"}, args...)...)
}

// codexOutput checks stdout against what Codex accepts (its output
// structs deny unknown fields; empty stdout is a no-op) and decodes it.
type codexOutput struct {
	Continue           *bool   `json:"continue"`
	StopReason         *string `json:"stopReason"`
	SystemMessage      *string `json:"systemMessage"`
	SuppressOutput     *bool   `json:"suppressOutput"`
	Decision           *string `json:"decision"`
	Reason             *string `json:"reason"`
	HookSpecificOutput *struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

func decodeCodexOutput(t *testing.T, event, stdout string) (codexOutput, bool) {
	t.Helper()
	var out codexOutput
	if strings.TrimSpace(stdout) == "" {
		return out, false
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("%s: stdout is not output Codex accepts: %v\n%s", event, err, stdout)
	}
	if !strings.HasPrefix(event, "session-start") && event != "SessionStart" && out.HookSpecificOutput != nil {
		t.Errorf("%s: hookSpecificOutput is SessionStart's only here", event)
	}
	return out, true
}

func hooksLog(t *testing.T, home, db string, args ...string) []map[string]any {
	t.Helper()
	r := runCmd(t, home, "", append([]string{"--db", db, "hooks", "log", "--json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("hooks log: exit %d: %s", r.code, r.stderr)
	}
	var list []map[string]any
	decodeJSON(t, r.stdout, &list)
	return list
}

// TestCodexHooksInstallRoundTrip installs ledger's Codex hooks beside a
// user's own and uninstalls them: the file comes back byte for byte; a
// hooks.json install created is removed again.
func TestCodexHooksInstallRoundTrip(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	path := filepath.Join(home, ".codex", "hooks.json")
	os.MkdirAll(filepath.Dir(path), 0o700)
	if err := os.WriteFile(path, []byte(codexUserHooks), 0o644); err != nil {
		t.Fatal(err)
	}
	hooks := func(args ...string) result {
		t.Helper()
		r := runCmd(t, home, "", append([]string{"hooks"}, args...)...)
		if r.code != 0 {
			t.Fatalf("hooks %v: exit %d: %s", args, r.code, r.stderr)
		}
		return r
	}
	r := hooks("install", "--agent", "codex")
	if !strings.Contains(r.stdout, "/hooks") {
		t.Errorf("install does not tell the user to trust the hooks in /hooks:\n%s", r.stdout)
	}
	s := readSettings(t, path)
	for _, ev := range engine.CodexHookEvents() {
		cmds := hookCommands(s, ev.Name)
		last := cmds[len(cmds)-1]
		if !strings.HasSuffix(last, " hook --agent codex") {
			t.Errorf("%s: ledger's hook is %q, want ... hook --agent codex", ev.Name, last)
		}
	}
	if got := hookCommands(s, "Stop"); got[0] != `notify-send "codex done"` || len(got) != 2 {
		t.Errorf("the user's Stop hook is gone or moved: %v", got)
	}
	if got := hookCommands(s, "PreToolUse"); len(got) != 1 {
		t.Errorf("PreToolUse changed: %v", got)
	}
	if bak, _ := os.ReadFile(path + ".bak"); string(bak) != codexUserHooks {
		t.Errorf("the .bak is not the previous file:\n%s", bak)
	}
	before, _ := os.ReadFile(path)
	if r := hooks("install", "--agent", "codex", "--json"); !strings.Contains(r.stdout, `"changed": false`) {
		t.Errorf("second install changed the file: %s", r.stdout)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("second install changed bytes")
	}
	hooks("install", "--agent", "codex", "--mode", "clear")
	if got := hookCommands(readSettings(t, path), "Stop"); len(got) != 2 || !strings.HasSuffix(got[1], "hook --agent codex --mode clear") {
		t.Errorf("clear mode not installed in place of assist: %v", got)
	}
	hooks("uninstall", "--agent", "codex")
	if got, _ := os.ReadFile(path); string(got) != codexUserHooks {
		t.Errorf("uninstall did not give the file back byte for byte:\n%s", got)
	}
	// Claude Code's settings are untouched by all this.
	if _, err := os.Stat(filepath.Join(home, ".claude", "settings.json")); err == nil {
		t.Error("a Codex install wrote Claude Code's settings.json")
	}

	// Project scope, a file install creates: uninstall removes it.
	proj := t.TempDir()
	r = runCmdIn(t, home, proj, "", "hooks", "install", "--agent", "codex", "--scope", "project")
	ppath := filepath.Join(proj, ".codex", "hooks.json")
	if r.code != 0 {
		t.Fatalf("project install: %s", r.stderr)
	}
	if got := hookCommands(readSettings(t, ppath), "SessionStart"); len(got) != 1 {
		t.Fatalf("project hooks.json: %v", got)
	}
	runCmdIn(t, home, proj, "", "hooks", "uninstall", "--agent", "codex", "--scope", "project")
	if _, err := os.Stat(ppath); err == nil {
		t.Error("uninstall left the hooks.json install created")
	}

	// $CODEX_HOME is where Codex's user files are.
	ch := filepath.Join(home, "codexhome")
	if r := newCmd(home, "", "CODEX_HOME="+ch).run("hooks", "install", "--agent", "codex"); r.code != 0 {
		t.Fatalf("install with CODEX_HOME: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(ch, "hooks.json")); err != nil {
		t.Errorf("CODEX_HOME not honoured: %v", err)
	}
	// A hooks.json that is not JSON: one error line, the file as it was.
	os.WriteFile(path, []byte("{\"hooks\": {"), 0o600)
	r = runCmd(t, home, "", "hooks", "install", "--agent", "codex")
	if got, _ := os.ReadFile(path); r.code != 1 || string(got) != "{\"hooks\": {" || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("broken hooks.json: exit %d, stderr %q, file %q", r.code, r.stderr, got)
	}
	bad := runCmd(t, home, "", "hooks", "install", "--agent", "cursor")
	if bad.code != 2 || strings.Count(strings.TrimSpace(bad.stderr), "\n") != 0 {
		t.Errorf("unknown agent: exit %d, %q", bad.code, bad.stderr)
	}
}

// TestCodexHookEvents drives the binary with Codex's hook inputs for each
// event over a rollout: Stop ingests, PreCompact writes the handoff and
// the record, PostCompact's `compacted` line completes it, SessionStart
// resume injects the context in a shape Codex accepts, and each run leaves
// a receipt that `hooks log` shows.
func TestCodexHookEvents(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	path := codexRollout(t, home)
	hook := func(event string, extra map[string]any) (result, codexOutput, bool) {
		t.Helper()
		r := runHookEnv(t, home, codexPayload(t, event, path, extra), nil, "--agent", "codex", "--db", db)
		if r.code != 0 {
			t.Fatalf("%s: exit %d (a Codex hook must exit 0): %s", event, r.code, r.stderr)
		}
		out, ok := decodeCodexOutput(t, event, r.stdout)
		return r, out, ok
	}
	if _, _, ok := hook("session-start-startup", nil); ok {
		t.Error("SessionStart startup printed something without --startup")
	}
	if r, _, ok := hook("stop", nil); ok || r.stderr != "" {
		t.Errorf("Stop printed %q / %q, want nothing", r.stdout, r.stderr)
	}
	if _, _, ok := hook("pre-compact", nil); ok {
		t.Error("PreCompact printed something")
	}
	rows := auditRows(t, home, db)
	if len(rows) != 1 || rows[0].Source != "hook" || rows[0].HandoffID == nil || rows[0].Session != codexSession {
		t.Fatalf("after PreCompact: audit %+v, want one hook record with a handoff", rows)
	}
	comp, err := os.ReadFile(filepath.Join("..", "..", "testdata", "codex-hooks", "rollout-compacted.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.Write(comp)
	f.Close()
	hook("post-compact", nil)
	rows = auditRows(t, home, db)
	if len(rows) != 1 || rows[0].Summary == 0 || rows[0].PreTokens == nil || *rows[0].PreTokens != 225000 {
		t.Errorf("after PostCompact: audit %+v, want the one record completed (summary, 225000 pre-tokens)", rows)
	}
	_, out, ok := hook("session-start-resume", nil)
	if !ok || out.HookSpecificOutput == nil || out.HookSpecificOutput.HookEventName != "SessionStart" ||
		!strings.Contains(out.HookSpecificOutput.AdditionalContext, "rounding") {
		t.Errorf("SessionStart resume: %+v, want the resume context", out)
	}
	if _, _, ok := hook("session-end", nil); ok {
		t.Error("SessionEnd printed something")
	}
	// codex exec --ephemeral: transcript_path is null; quietly nothing.
	eph := strings.Replace(codexPayload(t, "stop", path, nil), `"transcript_path":"`+path+`"`, `"transcript_path":null`, 1)
	if !strings.Contains(eph, `"transcript_path":null`) {
		t.Fatalf("payload: %s", eph)
	}
	if r := runHookEnv(t, home, eph, nil, "--agent", "codex", "--db", db); r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Errorf("ephemeral Stop: exit %d, stdout %q, stderr %q; want a quiet nothing", r.code, r.stdout, r.stderr)
	}
	if log := hooksLog(t, home, db, "--limit", "1"); log[0]["outcome"] != "nothing" || !strings.Contains(log[0]["detail"].(string), "ephemeral") {
		t.Errorf("ephemeral receipt: %v", log[0])
	}

	log := hooksLog(t, home, db, "--session", codexSession[:8])
	var events []string
	for _, r := range log {
		events = append(events, r["event"].(string))
		if !strings.HasPrefix(r["detail"].(string), "codex: ") {
			t.Errorf("receipt %v does not say it is Codex's", r)
		}
	}
	want := "Stop SessionEnd SessionStart PostCompact PreCompact Stop SessionStart"
	if got := strings.Join(events, " "); got != want {
		t.Errorf("hooks log events = %s, want %s", got, want)
	}
	if len(hooksLog(t, home, db, "--session", "nosuchsession")) != 0 {
		t.Error("hooks log of another session is not empty")
	}
	text := runCmd(t, home, "", "--db", db, "hooks", "log")
	if !strings.Contains(text.stdout, "PreCompact") || !strings.Contains(text.stdout, "OUTCOME") {
		t.Errorf("hooks log text:\n%s", text.stdout)
	}
}

// TestClearModeStop is clear mode at Stop: it blocks once per threshold
// crossing, and never a headless run, a subagent, a session at its hard
// limit or a turn a Stop hook already continued; each decision is a
// receipt.
func TestClearModeStop(t *testing.T) {
	t.Parallel()
	type tc struct {
		name      string
		edits     []string
		extra     map[string]any
		env       []string
		wantBlock bool
		why       string
	}
	cases := []tc{
		{name: "interactive", wantBlock: true, why: "asked the agent"},
		{name: "codex exec", edits: []string{`"originator":"codex-tui"`, `"originator":"codex_exec"`, `"source":"cli"`, `"source":"exec"`}, why: "headless"},
		{name: "codex subagent", edits: []string{`"source":"cli"`, `"source":{"subagent":{"thread_spawn":{"parent_thread_id":"019e5a0f-0000-7000-8000-000000000001","depth":1}}}`}, why: "subagent"},
		{name: "agent_id", extra: map[string]any{"agent_id": "019e5a11-0000-7000-8000-000000000002"}, why: "subagent"},
		{name: "claude -p", env: []string{"CLAUDE_CODE_ENTRYPOINT=sdk-cli"}, why: "headless"},
		{name: "hard limit", edits: []string{`"last_token_usage":{"input_tokens":225000`, `"last_token_usage":{"input_tokens":250000`}, why: "hard limit"},
		{name: "under threshold", edits: []string{`"last_token_usage":{"input_tokens":225000`, `"last_token_usage":{"input_tokens":100000`}, why: "under the threshold"},
		{name: "stop hook active", extra: map[string]any{"stop_hook_active": true}, why: "already made the agent go on"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
			path := codexRollout(t, home, c.edits...)
			// Ingested first, by the built binary (the setup; the hook runs
			// in-process): the decision is the test's, not how much of the
			// rollout a loaded machine reads within Stop's budget.
			if r := runBin(t, home, "", "--db", db, "ingest", path); r.code != 0 {
				t.Fatalf("ingest: %s", r.stderr)
			}
			r := runHookEnv(t, home, codexPayload(t, "stop", path, c.extra), c.env, "--agent", "codex", "--mode", "clear", "--db", db)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			out, printed := decodeCodexOutput(t, "Stop", r.stdout)
			blocked := printed && out.Decision != nil && *out.Decision == "block"
			if blocked != c.wantBlock {
				t.Fatalf("blocked = %v, want %v (stdout %q)", blocked, c.wantBlock, r.stdout)
			}
			if blocked && (out.Reason == nil || !strings.Contains(*out.Reason, " --db "+db+" compact "+codexSession) || out.SystemMessage == nil || !strings.Contains(*out.SystemMessage, "/clear")) {
				t.Errorf("block without the instructions: %+v", out)
			}
			if blocked {
				// The agent runs what it is asked to: the handoff is written.
				_, rest, _ := strings.Cut(*out.Reason, "run `")
				command, _, _ := strings.Cut(rest, "`")
				sh := exec.Command("sh", "-c", command)
				sh.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
				if b, err := sh.CombinedOutput(); err != nil {
					t.Fatalf("%s: %v\n%s", command, err, b)
				}
				if r := runCmd(t, home, "", "--db", db, "handoff", "list", codexSession[:8], "--json"); !strings.Contains(r.stdout, codexSession) {
					t.Errorf("no handoff after %s: %s", command, r.stdout)
				}
			}
			log := hooksLog(t, home, db)
			if len(log) != 1 || !strings.Contains(log[0]["detail"].(string), c.why) {
				t.Errorf("receipt %v, want one saying %q", log, c.why)
			}
			if c.wantBlock && log[0]["outcome"] != "blocked" {
				t.Errorf("receipt outcome %v, want blocked", log[0]["outcome"])
			}
			if !c.wantBlock {
				return
			}
			// A second Stop for the same crossing passes, and says why.
			r = runHookEnv(t, home, codexPayload(t, "stop", path, nil), c.env, "--agent", "codex", "--mode", "clear", "--db", db)
			if out, printed := decodeCodexOutput(t, "Stop", r.stdout); printed && out.Decision != nil {
				t.Errorf("second Stop blocked again: %s", r.stdout)
			}
			if log := hooksLog(t, home, db); !strings.Contains(log[0]["detail"].(string), "already asked once") {
				t.Errorf("second receipt %v", log[0])
			}
		})
	}
}

// TestClearModePreCompactSafe: Claude Code's clear mode blocks an auto
// compaction (exit 2) once; the second attempt for the same crossing
// passes, and a headless run (claude -p) or a subagent is never blocked.
func TestClearModePreCompactSafe(t *testing.T) {
	t.Parallel()
	src := filepath.Join("..", "..", "testdata", "transcript", "claude-session", "transcript.jsonl")
	const session = "7d1c2a90-5b7e-4c11-9a3e-2f6b8d0c4e15"
	in := func(path string, extra map[string]any) string {
		m := map[string]any{"session_id": session, "transcript_path": path, "cwd": "/home/dev/src/parser",
			"hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""}
		for k, v := range extra {
			m[k] = v
		}
		return hookJSON(t, m)
	}
	for _, c := range []struct {
		name  string
		env   []string
		extra map[string]any
		codes []int
	}{
		{"interactive", nil, nil, []int{2, 0}},
		{"claude -p", []string{"CLAUDE_CODE_ENTRYPOINT=sdk-cli"}, nil, []int{0}},
		{"subagent", nil, map[string]any{"agent_id": "a043f0a6f6c9270c8", "agent_type": "Explore"}, []int{0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
			b, _ := os.ReadFile(src)
			path := filepath.Join(home, "t.jsonl")
			os.WriteFile(path, b, 0o600)
			for i, want := range c.codes {
				r := runHookEnv(t, home, in(path, c.extra), c.env, "--mode", "clear", "--db", db)
				if r.code != want {
					t.Fatalf("attempt %d: exit %d, want %d (%s)", i+1, r.code, want, r.stderr)
				}
			}
			log := hooksLog(t, home, db)
			if c.codes[0] == 0 && !strings.Contains(log[0]["detail"].(string), "compaction not blocked") {
				t.Errorf("receipt does not say why it did not block: %v", log[0])
			}
		})
	}
}

// TestCodexHooksOnCorpus drives the Codex hooks over the corpus's real
// rollouts (Codex Desktop, 0.104): the turns before a `compacted` line,
// Stop, PreCompact, then the rest and PostCompact, then SessionStart
// resume. Every run exits 0 with output Codex accepts; a compaction ends
// as one record, written by the hook and completed from the rollout.
func TestCodexHooksOnCorpus(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(corpusDir(t), "codex", "*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no Codex rollouts in the corpus")
	}
	for _, src := range files {
		t.Run(filepath.Base(src), func(t *testing.T) {
			lines := splitLines(t, src)
			cut := len(lines)
			for i, l := range lines {
				if strings.Contains(string(l), `"type":"compacted"`) {
					cut = i
					break
				}
			}
			var meta struct {
				Payload struct{ ID, Cwd string } `json:"payload"`
			}
			if err := json.Unmarshal(lines[0], &meta); err != nil {
				t.Fatal(err)
			}
			home := t.TempDir()
			db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
			path := filepath.Join(home, filepath.Base(src))
			if err := os.WriteFile(path, bytes.Join(lines[:cut], nil), 0o600); err != nil {
				t.Fatal(err)
			}
			hook := func(event string, fields map[string]any) codexOutput {
				t.Helper()
				m := map[string]any{"session_id": meta.Payload.ID, "transcript_path": path, "cwd": meta.Payload.Cwd,
					"hook_event_name": event, "model": "gpt-5.3-codex", "turn_id": "019c8a60-0000-7000-8000-000000000001"}
				for k, v := range fields {
					m[k] = v
				}
				r := runHookEnv(t, home, hookJSON(t, m), nil, "--agent", "codex", "--mode", "clear", "--db", db)
				if r.code != 0 || r.stderr != "" {
					t.Fatalf("%s: exit %d, stderr %q", event, r.code, r.stderr)
				}
				out, _ := decodeCodexOutput(t, event, r.stdout)
				return out
			}
			hook("Stop", map[string]any{"permission_mode": "default", "stop_hook_active": false, "last_assistant_message": "ok"})
			hook("PreCompact", map[string]any{"trigger": "auto"})
			f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			f.Write(bytes.Join(lines[cut:], nil))
			f.Close()
			hook("PostCompact", map[string]any{"trigger": "auto"})
			rows := auditRows(t, home, db)
			if len(rows) != 1 || rows[0].Source != "hook" || rows[0].HandoffID == nil {
				t.Fatalf("audit %+v, want the one record PreCompact wrote", rows)
			}
			if cut < len(lines) && rows[0].Summary == 0 {
				t.Errorf("the rollout's compaction did not complete the record: %+v", rows[0])
			}
			out := hook("SessionStart", map[string]any{"source": "resume", "permission_mode": "default"})
			if out.HookSpecificOutput == nil || !strings.Contains(out.HookSpecificOutput.AdditionalContext, meta.Payload.ID) {
				t.Errorf("SessionStart resume injected %+v", out)
			}
			for _, rc := range hooksLog(t, home, db) {
				if rc["outcome"] == "failed" || rc["outcome"] == "timeout" {
					t.Errorf("receipt %v", rc)
				}
			}
		})
	}
}
