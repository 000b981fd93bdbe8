package engine

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentledger/ledger/store"
)

const codexHookSession = "019e5a10-7c2b-7d41-9a8e-3f6b2c1d0e9a"

// codexHookInput is Codex's hook input name (testdata/codex-hooks) for
// the rollout at path.
func codexHookInput(t *testing.T, name, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "codex-hooks", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["transcript_path"], m["cwd"] = path, "/home/dev/src/shop"
	b, err = json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCodexHookEventsInProcess runs Codex's hooks over a rollout through
// RunHook, as `ledger hook --agent codex` does: Stop ingests, PreCompact
// writes the handoff and the record, PostCompact's compacted line
// completes it, SessionStart resume injects the context in Codex's shape,
// an ephemeral session (no transcript) is quietly nothing, and each
// receipt says it is Codex's. A test engine's budgets are sixty times the
// promised ones: what the hooks do is the subject here.
func TestCodexHookEventsInProcess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, s, home := hookEngine(t)
	e.hookScale = 60
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "codex-hooks", "rollout-turn1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(home, ".codex", "sessions", "2026", "11", "20", "rollout-2026-11-20T10-00-00-"+codexHookSession+".jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	o := HookOptions{Agent: "codex"}
	run := func(name string) HookRun {
		t.Helper()
		r := e.RunHook(ctx, strings.NewReader(codexHookInput(t, name, path)), o)
		if r.Err != nil || r.Warning != "" || !strings.HasPrefix(r.Receipt.Detail, "codex: ") {
			t.Fatalf("%s: %+v", name, r)
		}
		return r
	}
	if r := run("session-start-startup"); r.Output != nil {
		t.Errorf("SessionStart startup: %+v, want nothing without Startup", r.Output)
	}
	if r := run("stop"); r.Output != nil || r.Receipt.Outcome != store.OutcomeOK {
		t.Errorf("Stop: %+v", r)
	}
	if sess, err := s.Session(ctx, codexHookSession); err != nil || sess.Messages == 0 || sess.Source != "codex" {
		t.Fatalf("after Stop: %+v, %v", sess, err)
	}
	if r := run("pre-compact"); r.Output != nil {
		t.Errorf("PreCompact printed %+v", r.Output)
	}
	recs, err := s.Compactions(ctx, store.CompactionFilter{SessionID: codexHookSession})
	if err != nil || len(recs) != 1 || recs[0].HandoffID == nil || recs[0].Source != "hook" {
		t.Fatalf("after PreCompact: %+v, %v; want one hook record with a handoff", recs, err)
	}
	comp, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "codex-hooks", "rollout-compacted.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(comp)
	f.Close()
	run("post-compact")
	recs, err = s.Compactions(ctx, store.CompactionFilter{SessionID: codexHookSession})
	if err != nil || len(recs) != 1 || orZero(recs[0].PreTokens) != 225000 {
		t.Errorf("after PostCompact: %+v, %v; want the one record completed (225000 pre-tokens)", recs, err)
	}
	r := run("session-start-resume")
	out, err := json.Marshal(r.Output)
	if err != nil || !strings.Contains(string(out), `"hookEventName":"SessionStart"`) || !strings.Contains(string(out), "rounding") {
		t.Errorf("SessionStart resume: %s, want the resume context for Codex", out)
	}
	if r := run("session-end"); r.Output != nil {
		t.Errorf("SessionEnd printed %+v", r.Output)
	}
	eph := strings.Replace(codexHookInput(t, "stop", path), `"transcript_path":"`+path+`"`, `"transcript_path":null`, 1)
	if r := e.RunHook(ctx, strings.NewReader(eph), o); r.Output != nil || r.Warning != "" || r.Receipt.Outcome != store.OutcomeNothing || !strings.Contains(r.Receipt.Detail, "ephemeral") {
		t.Errorf("an ephemeral session's Stop: %+v", r)
	}
}

// TestCrossAgentInProcess: a Claude Code session resumed for Codex names
// Claude's tools in Codex's and fences the task list; for Claude, no
// mapping; an agent ledger does not know is refused. A brand-new Codex
// session in the same project is offered the Claude session's handoff.
func TestCrossAgentInProcess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _, home := hookEngine(t)
	e.hookScale = 60
	ingestSample(t, e, home)
	if _, err := e.WriteHandoff(ctx, sampleID, HandoffRequest{Trigger: "manual", Source: "cli"}); err != nil {
		t.Fatal(err)
	}
	cr, err := e.CrossResume(ctx, ResumeRequest{Session: sampleID[:8], Budget: 2000}, "codex")
	if err != nil || cr.From != "claude" || cr.To != "codex" || !strings.Contains(cr.Prompt, "Carry on the work of a Claude Code session") ||
		!strings.Contains(cr.Prompt, "other names here") || !strings.Contains(cr.Prompt, "Its handoff (written ") {
		t.Fatalf("resume --for codex: %v\n%s", err, cr.Prompt)
	}
	if same, err := e.CrossResume(ctx, ResumeRequest{Session: sampleID, Budget: 2000}, "claude"); err != nil || strings.Contains(same.Prompt, "other names") {
		t.Errorf("resume --for claude: %v, maps tools:\n%s", err, same.Prompt)
	}
	if _, err := e.CrossResume(ctx, ResumeRequest{Session: sampleID, Budget: 2000}, "cursor"); err == nil || !strings.Contains(err.Error(), `--for "cursor"`) {
		t.Errorf("resume --for cursor: %v", err)
	}

	in := `{"session_id":"019e5a10-0000-7000-8000-000000000001","transcript_path":null,"cwd":"/home/dev/src/payments","hook_event_name":"SessionStart","source":"startup"}`
	r := e.RunHook(ctx, strings.NewReader(in), HookOptions{Agent: "codex"})
	out, _ := json.Marshal(r.Output)
	if r.Warning != "" || !strings.Contains(string(out), "ledger resume --for codex 7c1d9e42") || !strings.Contains(r.Receipt.Detail, "offered the handoff of the Claude Code session") {
		t.Errorf("a new Codex session in the project: %+v\n%s", r, out)
	}
}

// TestClearModePreCompact: clear mode blocks an auto compaction once the
// handoff is written, saying to /clear, once per threshold crossing; a
// headless run (claude -p), a subagent or a manual compaction is never
// blocked, and the receipt says why.
func TestClearModePreCompact(t *testing.T) {
	t.Parallel()
	e, _, home := hookEngine(t)
	path := ingestSample(t, e, home)
	in := func(extra map[string]any) map[string]any {
		m := map[string]any{"session_id": sampleID, "transcript_path": path, "cwd": "/home/dev/src/payments",
			"hook_event_name": "PreCompact", "trigger": "auto"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	clear := HookOptions{Mode: "clear"}
	for _, c := range []struct {
		name  string
		o     HookOptions
		extra map[string]any
		why   string
	}{
		{"claude -p", HookOptions{Mode: "clear", Entrypoint: "sdk-cli"}, nil, "a headless run (CLAUDE_CODE_ENTRYPOINT=sdk-cli)"},
		{"subagent", clear, map[string]any{"agent_id": "a1"}, "a subagent (agent_id a1)"},
	} {
		r := event(t, e, c.o, in(c.extra))
		if r.err != nil || !strings.Contains(r.detail, "compaction not blocked, "+c.why) {
			t.Errorf("%s: %+v", c.name, r)
		}
	}
	r := event(t, e, clear, in(map[string]any{"custom_instructions": "keep the plan"}))
	var block BlockError
	if !errors.As(r.err, &block) || r.outcome != store.OutcomeBlocked || !strings.Contains(block.Error(), "run /clear") {
		t.Fatalf("an auto compaction in clear mode: %+v", r)
	}
	if r := event(t, e, clear, in(nil)); r.err != nil || !strings.Contains(r.detail, "blocked once already") {
		t.Errorf("the same crossing again: %+v", r)
	}
	if r := event(t, e, clear, in(map[string]any{"trigger": "manual"})); r.err != nil {
		t.Errorf("a manual compaction: %+v", r)
	}
}

// TestClearModeStopInProcess: Codex's Stop in clear mode blocks once per
// threshold crossing, asking for `ledger compact`, and never a headless
// run, a subagent, a session at its hard limit or under the threshold.
func TestClearModeStopInProcess(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		edits     []string
		wantBlock bool
		why       string
	}{
		{name: "interactive", wantBlock: true, why: "asked the agent"},
		{name: "codex exec", edits: []string{`"originator":"codex-tui"`, `"originator":"codex_exec"`}, why: "a headless run (codex exec)"},
		{name: "codex subagent", edits: []string{`"source":"cli"`, `"source":{"subagent":{"thread_spawn":{"depth":1}}}`}, why: "a subagent (codex)"},
		{name: "hard limit", edits: []string{`"last_token_usage":{"input_tokens":225000`, `"last_token_usage":{"input_tokens":250000`}, why: "hard limit"},
		{name: "under threshold", edits: []string{`"last_token_usage":{"input_tokens":225000`, `"last_token_usage":{"input_tokens":100000`}, why: "under the threshold"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e, _, home := hookEngine(t)
			e.hookScale = 60
			b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "codex-hooks", "rollout-turn1.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i+1 < len(c.edits); i += 2 {
				if !strings.Contains(string(b), c.edits[i]) {
					t.Fatalf("fixture has no %q", c.edits[i])
				}
				b = []byte(strings.Replace(string(b), c.edits[i], c.edits[i+1], 1))
			}
			path := filepath.Join(home, "rollout-2026-11-20T10-00-00-"+codexHookSession+".jsonl")
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := e.Ingest(ctx, []string{path}, IngestOptions{}); err != nil {
				t.Fatal(err)
			}
			o := HookOptions{Agent: "codex", Mode: "clear", Ledger: "ledger --db x.db"}
			r := e.RunHook(ctx, strings.NewReader(codexHookInput(t, "stop", path)), o)
			out, _ := r.Output.(StopOutput)
			if blocked := out.Decision == "block"; blocked != c.wantBlock || !strings.Contains(r.Receipt.Detail, c.why) {
				t.Fatalf("blocked %v, want %v; receipt %q, want %q", blocked, c.wantBlock, r.Receipt.Detail, c.why)
			}
			if !c.wantBlock {
				return
			}
			if !strings.Contains(out.Reason, "ledger --db x.db compact "+codexHookSession) || !strings.Contains(out.SystemMessage, "/clear") {
				t.Errorf("a block without the instructions: %+v", out)
			}
			again := e.RunHook(ctx, strings.NewReader(codexHookInput(t, "stop", path)), o)
			if again.Output != nil || !strings.Contains(again.Receipt.Detail, "already asked once") {
				t.Errorf("the same crossing again: %+v", again)
			}
		})
	}
}

// TestGeminiCompressionThreshold: Gemini CLI compresses at the project's
// model.compressionThreshold, else the user's, else half the window; a
// value out of (0, 1] or a settings file that is not a small regular
// file counts for nothing. A manual /compress is always due, and a
// session the ledger does not hold yet gets its handoff.
func TestGeminiCompressionThreshold(t *testing.T) {
	t.Parallel()
	e, _, home := hookEngine(t)
	proj := filepath.Join(home, "proj")
	write := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.geminiThreshold(proj); got != 0.5 {
		t.Errorf("no settings: %v, want 0.5", got)
	}
	write(filepath.Join(home, ".gemini", "settings.json"), `{"model": {"compressionThreshold": 0.7}}`)
	if got := e.geminiThreshold(proj); got != 0.7 {
		t.Errorf("the user's settings: %v, want 0.7", got)
	}
	write(filepath.Join(proj, ".gemini", "settings.json"), `{"model": {"compressionThreshold": 0.6}}`)
	if got := e.geminiThreshold(proj); got != 0.6 {
		t.Errorf("the project's settings: %v, want 0.6", got)
	}
	write(filepath.Join(proj, ".gemini", "settings.json"), `{"model": {"compressionThreshold": 7}}`)
	if got := e.geminiThreshold(proj); got != 0.7 {
		t.Errorf("a project threshold of 7: %v, want the user's 0.7", got)
	}
	if _, err := readSmall(proj, 1<<20); err == nil {
		t.Error("readSmall read a folder")
	}
	ctx := context.Background()
	if why := e.geminiCompressionDue(ctx, HookInput{SessionID: "x", Trigger: "manual", Cwd: proj}); why != "" {
		t.Errorf("a manual /compress: %q", why)
	}
	if why := e.geminiSkip(ctx, HookInput{SessionID: "not-in-the-ledger", Trigger: "auto", Cwd: proj}); why != "" {
		t.Errorf("a session not in the ledger: %q", why)
	}
	ingestSample(t, e, home)
	if why := e.geminiCompressionDue(ctx, HookInput{SessionID: sampleID, Trigger: "auto", Cwd: proj}); !strings.Contains(why, "no compression due") {
		t.Errorf("a small context: %q", why)
	}
}
