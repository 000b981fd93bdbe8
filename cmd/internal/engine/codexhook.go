package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/transcript"
)

// CodexHookEvents are the Codex CLI events ledger hooks, in the order they
// are written to Codex's hooks.json. Codex's events carry the payloads of
// Claude Code's with a few fields more (model, turn_id), and its output
// rules are stricter: a JSON output with a key Codex does not know fails
// the hook, plain text is invalid at Stop, and exit code 2 does not block
// a compaction. ledger prints at SessionStart (hookSpecificOutput) and, in
// clear mode, at Stop (decision, reason, systemMessage): keys Codex knows.
//
//	SessionStart  inject the resume context, as for Claude Code
//	PreCompact    ingest, write the handoff and the compaction record
//	PostCompact   ingest the rollout's `compacted` line, which completes
//	              the record PreCompact wrote with what Codex kept
//	Stop          ingest what is new (each turn: older Codex has no
//	              SessionEnd)
//	SessionEnd    the same (newer Codex, which caps its timeout at 3 s)
//
// Older Codex ignores an event key it does not know (its hooks.json
// decoder has no deny_unknown_fields), so SessionEnd is installed for all.
func CodexHookEvents() []HookEvent {
	return []HookEvent{
		{"SessionStart", 2 * time.Second, 10},
		{"PreCompact", 10 * time.Second, 60},
		{"PostCompact", 2 * time.Second, 10},
		{"Stop", 1 * time.Second, 15},
		{"SessionEnd", 1 * time.Second, 3},
	}
}

// postCompact ingests what the compaction appended to the transcript: for
// Codex the rollout's `compacted` line, for Claude Code its
// compact_boundary; either completes the compaction record PreCompact
// wrote (pre-compaction tokens, the summary kept) rather than adding one.
func (e *Engine) postCompact(ctx context.Context, in HookInput, c hookClocks, r *hookResult) {
	if !e.hookIngest(ctx, in, c, r) || r.err != nil {
		return
	}
	if st := e.Opened(); st != nil && in.SessionID != "" {
		if sess, err := st.Session(ctx, in.SessionID); err == nil {
			r.note("the session has %d compaction(s) on record", sess.Compactions)
		}
	}
}

// StopOutput is a Stop hook's output when clear mode asks the agent to go
// on: Claude Code and Codex both take decision "block" with a reason (the
// agent's next instruction) and a systemMessage (shown to the user); both
// keys are in Codex's Stop output schema.
type StopOutput struct {
	Decision      string `json:"decision"`
	Reason        string `json:"reason"`
	SystemMessage string `json:"systemMessage"`
}

// clearSkip says why clear mode must not block this run ("" when it may):
// a headless run (claude -p, codex exec), a subagent, or a turn a Stop hook
// already continued. Its signals:
//
//	Claude Code  CLAUDE_CODE_ENTRYPOINT (o.Entrypoint) other than "cli"
//	             or an IDE's is headless (sdk-cli for -p, sdk-ts, sdk-py);
//	             agent_id in the input is a subagent
//	Codex        the rollout's first line, session_meta: originator
//	             codex_exec or source "exec" is headless; a source naming
//	             a subagent, or thread_source "subagent", is a subagent;
//	             agent_id in the input too
//
// These are heuristics (neither agent documents a headless flag for
// hooks): what they miss is a block a user can still answer.
func (e *Engine) clearSkip(in HookInput, o HookOptions) string {
	switch {
	case in.StopHookActive:
		return "a Stop hook already made the agent go on this turn"
	case in.AgentID != "":
		return "a subagent (agent_id " + in.AgentID + ")"
	case strings.HasPrefix(o.Entrypoint, "sdk"):
		return "a headless run (CLAUDE_CODE_ENTRYPOINT=" + o.Entrypoint + ")"
	}
	if in.TranscriptPath == "" {
		return ""
	}
	meta := codexSessionMeta(e.expandHome(in.TranscriptPath))
	switch {
	case meta.Originator == "codex_exec" || meta.source == "exec":
		return "a headless run (codex exec)"
	case meta.subagent:
		return "a subagent (codex)"
	}
	return ""
}

// codexMeta is what a Codex rollout's session_meta line says of its run.
type codexMeta struct {
	Originator string
	source     string
	subagent   bool
}

// maxMetaLine bounds the read of a rollout's first line (session_meta
// carries the base instructions, a few KB; never more than this).
const maxMetaLine = 256 << 10

// codexSessionMeta reads the session_meta line at the head of the file at
// path; zero when the file is not a Codex rollout or cannot be read.
func codexSessionMeta(path string) codexMeta {
	var m codexMeta
	f, err := transcript.Open(path)
	if err != nil {
		return m
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(io.LimitReader(f, maxMetaLine), 64<<10).ReadSlice('\n')
	if err != nil && len(line) == 0 {
		return m
	}
	line = bytes.TrimPrefix(line, []byte("\uFEFF")) // a byte order mark, as transcript's readers drop it
	var rec struct {
		Type    string `json:"type"`
		Payload struct {
			Originator   string          `json:"originator"`
			Source       json.RawMessage `json:"source"`
			ThreadSource string          `json:"thread_source"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &rec) != nil || rec.Type != "session_meta" {
		return m
	}
	m.Originator = rec.Payload.Originator
	var s string
	if json.Unmarshal(rec.Payload.Source, &s) == nil {
		m.source = s
	} else if strings.Contains(string(rec.Payload.Source), `"subagent"`) {
		m.subagent = true
	}
	m.subagent = m.subagent || rec.Payload.ThreadSource == "subagent"
	return m
}

// stopClear is clear mode at Stop: once the context passes the threshold
// (80% of a window the agent stated: never on ledger's guess), it asks the agent to write a handoff (`ledger
// compact`) and the user to /clear, by blocking the stop once. It never
// blocks what clearSkip names, a session at its hard limit (95%: the
// agent has no room left to do it), or a second time for one threshold
// crossing (a session mark per count of the agent's compactions: after a
// compaction the context can cross again). Every decision is in the receipt.
func (e *Engine) stopClear(ctx context.Context, in HookInput, o HookOptions, c hookClocks, r *hookResult) {
	if r.err != nil || ctx.Err() != nil || in.SessionID == "" {
		return
	}
	if why := e.clearSkip(in, o); why != "" {
		r.note("clear mode: no block, %s", why)
		return
	}
	st, sess, err := e.Session(ctx, in.SessionID)
	if err != nil {
		r.note("clear mode: no block (the session is not in the ledger yet)")
		return
	}
	win := compact.ContextLimit(sess.Model, nil).Reported(sess.ContextWindow)
	b := compact.Budget{ContextLimit: win.Tokens, MessageTokens: sess.ContextTokens}
	pct := 100 * float64(sess.ContextTokens) / float64(max(win.Tokens, 1))
	switch {
	case !win.FromAgent:
		r.note("clear mode: no block, the model's window is not known from the agent (%s)", win.Source)
		return
	case !b.ShouldCompact():
		r.note("clear mode: no block, the context is %.0f%% full (under the threshold)", pct)
		return
	case b.MustCompact():
		r.note("clear mode: no block, the session is at its hard limit (%.0f%% full)", pct)
		return
	}
	n, err := agentCompactions(ctx, st, sess.ID)
	if err != nil {
		r.note("clear mode: no block, the compactions could not be read (%v)", err)
		return
	}
	if !handoff.PlainID(sess.ID) {
		// The block asks the agent to run a command naming the session:
		// only a plain id may be put in one.
		r.note("clear mode: no block, the session id is not plain")
		return
	}
	first, err := st.Mark(store.WithLockDeadline(ctx, c.lockBy), sess.ID, fmt.Sprintf("clear-stop-%d", n))
	switch {
	case err != nil:
		r.note("clear mode: no block, the threshold could not be recorded (%v)", err)
		return
	case !first:
		r.note("clear mode: no block, already asked once for this threshold crossing")
		return
	}
	r.outcome = store.OutcomeBlocked
	r.out = StopOutput{
		Decision: "block",
		Reason: fmt.Sprintf("ledger: the context is %.0f%% full (%d of %d tokens). Write a handoff now: run `%s compact %s`, then tell the user to run /clear, which starts a fresh session from that handoff. Do nothing else first.",
			pct, sess.ContextTokens, win.Tokens, cmpOr(o.Ledger, "ledger"), sess.ID),
		SystemMessage: fmt.Sprintf("ledger: the context is %.0f%% full; the agent is writing a handoff. Then run /clear: the new session starts from it.", pct),
	}
	r.note("clear mode: asked the agent to run ledger compact and the user to /clear (%.0f%% full)", pct)
}

// agentCompactions counts the session's compactions by the agent (read
// from the transcript or recorded by the PreCompact hook), not the
// handoffs `ledger compact` recorded: a compaction is what brings the
// context back under the threshold, so the count tells one crossing from
// the next. A handoff written on clear mode's request must not start a new
// crossing, or the next stop would be blocked again.
func agentCompactions(ctx context.Context, st *store.Store, session string) (int, error) {
	cs, err := st.Compactions(ctx, store.CompactionFilter{SessionID: session})
	n := 0
	for _, c := range cs {
		if c.Source != "cli" {
			n++
		}
	}
	return n, err
}

// preCompactClearSkip says why clear mode must not block this auto
// compaction ("" when it may): what clearSkip names, or a compaction it
// blocked once already (Claude Code tries again when the context is still
// full: the second attempt passes, so that a session never stalls).
func (e *Engine) preCompactClearSkip(ctx context.Context, st *store.Store, in HookInput, o HookOptions, c hookClocks) string {
	if why := e.clearSkip(in, o); why != "" {
		return why
	}
	n, _ := agentCompactions(ctx, st, in.SessionID)
	first, err := st.Mark(store.WithLockDeadline(ctx, c.lockBy), in.SessionID, fmt.Sprintf("clear-precompact-%d", n))
	switch {
	case err != nil:
		return fmt.Sprintf("the block could not be recorded (%v)", err)
	case !first:
		return "blocked once already for this threshold crossing"
	}
	return ""
}
