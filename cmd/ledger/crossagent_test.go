package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/store/storetest"
)

// TestCrossAgentResume hands a Claude Code session to Codex and a Codex
// session to Claude Code: the prompt says where it comes from, maps the
// tools, carries the task list (fenced: its items are recorded data) as a
// plan in order, and holds the fenced resume context; handoff --to prints a command line that runs.
func TestCrossAgentResume(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	claude := filepath.Join("..", "..", "testdata", "handoff", "claude-tasks", "transcript.jsonl")
	codex := filepath.Join("..", "..", "testdata", "handoff", "codex-plan", "rollout.jsonl")
	if r := runCmd(t, home, "", "--db", db, "ingest", claude, codex); r.code != 0 {
		t.Fatalf("ingest: %s", r.stderr)
	}
	for _, c := range []struct {
		session, to string
		want        []string
	}{
		{"5b3e9c1a", "codex", []string{"Carry on the work of a Claude Code session (5b3e9c1a-", "Edit, MultiEdit, Write (file edits) → apply_patch",
			"to record first as your plan with update_plan:\n<ledger-record", "\">\n1. [completed] Add toCsv serializer with tests\n2. [completed] Add visible-range selector to the readings store\n3. [in_progress] Add Download CSV item to the chart overflow menu\n4. [pending] Document the CSV export in the README\n",
			"<ledger-record", "## Next steps"}},
		{"019f5a2e", "claude", []string{"Carry on the work of a Codex session (019f5a2e-", "apply_patch (file edits) → Edit, MultiEdit or Write",
			"update_plan (the plan) → TodoWrite", "your plan with TodoWrite:\n<ledger-record", "\">\n1. [completed] Move the date helpers", "5. [in_progress] Document the accepted date formats", "<ledger-record"}},
	} {
		r := runCmd(t, home, "", "--db", db, "resume", "--for", c.to, c.session)
		if r.code != 0 {
			t.Fatalf("resume --for %s: %s", c.to, r.stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("resume --for %s %s lacks %q:\n%s", c.to, c.session, w, r.stdout)
			}
		}
		if strings.Contains(r.stdout, "→") && !strings.Contains(r.stdout, "whose tools have other names here") {
			t.Error("mapping without its heading")
		}
		var doc map[string]any
		j := runCmd(t, home, "", "--db", db, "resume", "--for", c.to, c.session, "--format", "json")
		decodeJSON(t, j.stdout, &doc)
		if doc["to"] != c.to || doc["prompt"] != r.stdout || !strings.HasPrefix(doc["session"].(string), c.session) {
			t.Errorf("--format json: %v", doc)
		}
	}
	// The same agent: no tool mapping.
	if r := runCmd(t, home, "", "--db", db, "resume", "--for", "claude", "5b3e9c1a"); strings.Contains(r.stdout, "other names") {
		t.Error("a Claude session resumed for Claude maps tools")
	}
	if r := runCmd(t, home, "", "--db", db, "resume", "--for", "cursor", "5b3e9c1a"); r.code != 2 {
		t.Errorf("--for cursor: exit %d", r.code)
	}

	// handoff --to prints a command line; run it with a stand-in codex that
	// prints its first argument.
	r := runCmd(t, home, "", "--db", db, "handoff", "--to", "codex", "5b3e9c1a")
	line := strings.TrimSpace(r.stdout)
	if r.code != 0 || !strings.HasPrefix(line, "cd /home/nadia/code/tidepool && codex \"$(") || !strings.Contains(line, "resume --for codex 5b3e9c1a-7d24-4f6e-b0a8-2c91e4d7f3a6") {
		t.Fatalf("handoff --to codex: exit %d, %q (%s)", r.code, line, r.stderr)
	}
	bin := filepath.Join(home, "bin")
	os.MkdirAll(bin, 0o700)
	os.WriteFile(filepath.Join(bin, "codex"), []byte("#!/bin/sh\nprintf '%s' \"$1\"\n"), 0o700)
	proj := t.TempDir()
	runnable := strings.Replace(line, "cd /home/nadia/code/tidepool", "cd "+proj, 1)
	sh := exec.Command("sh", "-c", runnable)
	sh.Env = []string{"HOME=" + home, "PATH=" + bin + ":" + os.Getenv("PATH")}
	out, err := sh.Output()
	if err != nil || !strings.HasPrefix(string(out), "Carry on the work of a Claude Code session") {
		t.Errorf("the printed command line gave codex %.200q (%v)", out, err)
	}
	if r := runCmd(t, home, "", "--db", db, "handoff", "5b3e9c1a"); r.code != 2 {
		t.Errorf("handoff SESSION without --to: exit %d", r.code)
	}
	if r := runCmd(t, home, "", "--db", db, "handoff", "list"); r.code != 0 || strings.Contains(r.stdout, "Usage") {
		t.Errorf("handoff list broke: %d %s", r.code, r.stderr)
	}
}

// TestSessionStartOffersOtherAgentsHandoff: a brand-new Claude Code
// session in a project whose latest work ran in Codex is offered that
// handoff (which agent, when); a Codex session there is not (its own
// agent's work is for --startup or resume), nor is a project ledger has not
// seen.
func TestSessionStartOffersOtherAgentsHandoff(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	path := codexRollout(t, home)
	if r := runCmd(t, home, "", "--db", db, "ingest", path); r.code != 0 {
		t.Fatalf("ingest: %s", r.stderr)
	}
	start := func(agent, cwd string) result {
		in := hookJSON(t, map[string]any{"session_id": "11111111-0000-4000-8000-000000000000", "cwd": cwd,
			"transcript_path": filepath.Join(home, "new.jsonl"), "hook_event_name": "SessionStart", "source": "startup"})
		r := runHookEnv(t, home, in, nil, "--agent", agent, "--db", db)
		if r.code != 0 {
			t.Fatalf("%s SessionStart: exit %d %s", agent, r.code, r.stderr)
		}
		return r
	}
	r := start("claude", "/home/dev/src/shop")
	var out engine.SessionStartOutput
	decodeJSON(t, r.stdout, &out)
	ctx := out.HookSpecificOutput.AdditionalContext
	for _, w := range []string{"latest work is a Codex session (019e5a10", "last active", "(2026-11-20 10:00 UTC)", "no handoff written yet", "ledger resume --for claude 019e5a10"} {
		if !strings.Contains(ctx, w) {
			t.Errorf("offer lacks %q: %s", w, ctx)
		}
	}
	if r := start("codex", "/home/dev/src/shop"); r.stdout != "" {
		t.Errorf("Codex offered its own agent's session: %s", r.stdout)
	}
	if r := start("claude", "/home/dev/src/elsewhere"); r.stdout != "" {
		t.Errorf("offer in a project ledger has not seen: %s", r.stdout)
	}
	// Once the session has a handoff, the offer says when it was written;
	// with --startup the whole context comes, with the same line first.
	if r := runCmd(t, home, "", "--db", db, "compact", codexSession); r.code != 0 {
		t.Fatalf("compact: %s", r.stderr)
	}
	in := hookJSON(t, map[string]any{"session_id": "22222222-0000-4000-8000-000000000000", "cwd": "/home/dev/src/shop",
		"hook_event_name": "SessionStart", "source": "startup"})
	r = runHookEnv(t, home, in, nil, "--startup", "--db", db)
	decodeJSON(t, r.stdout, &out)
	ctx = out.HookSpecificOutput.AdditionalContext
	if !strings.HasPrefix(ctx, "ledger: this project's latest work is a Codex session") || !strings.Contains(ctx, "handoff written ") || !strings.Contains(ctx, "## Next steps") {
		t.Errorf("--startup context:\n%.600s", ctx)
	}
}
