package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/transcript"
	"github.com/agentledger/ledger/transcript/opencode"
)

// OpenCode, Kilo CLI and Pi take JS/TS plugins, not hook commands: ledger
// installs a plugin file (agentconfig.PluginSource) that runs `ledger hook
// --agent AGENT` with each event as JSON on stdin, in ledger's own shape:
//
//	{"agent": "opencode", "hook_event_name": "SessionStart",
//	 "session_id": "ses_...", "cwd": "/project", "source": "",
//	 "transcript_path": "..."}
//
// hook_event_name is one of ledger's events (Claude Code's names), with the
// fields HookInput reads: source at SessionStart (startup, resume, clear,
// compact; "" lets ledger decide, see sessionStart), trigger and
// custom_instructions at PreCompact, reason at SessionEnd. transcript_path
// is Pi's session file; OpenCode and Kilo send none, and ledger reads the
// agent's database (HookOptions.Database), the session's tree only. A
// SessionStart answer is Claude Code's hookSpecificOutput.additionalContext,
// which the plugin adds to the system prompt (OpenCode, Kilo) or as a
// message (Pi).
//
//	agent event                                      ledger event
//	OpenCode, Kilo: first experimental.chat.         SessionStart (source "",
//	  system.transform of a session in the process   or "compact" after one)
//	  experimental.session.compacting               PreCompact (trigger auto)
//	  event session.compacted                       PostCompact
//	  event session.idle                            Stop
//	Pi: before_agent_start after session_start      SessionStart (startup,
//	  (or after session_compact)                    resume, clear, compact)
//	  session_before_compact (once a branch)        PreCompact
//	  session_compact                               PostCompact
//	  agent_end                                     Stop
//	  session_shutdown                              SessionEnd

// PluginHookEvents are the events ledger's plugin file runs `ledger hook`
// at, with the timeout (seconds) the plugin gives each before it kills the
// run (the budget is HookBudget's, the same as for Claude Code's).
func PluginHookEvents() []HookEvent {
	return []HookEvent{
		{"SessionStart", 2 * time.Second, 10},
		{"PreCompact", 10 * time.Second, 60},
		{"PostCompact", 2 * time.Second, 10},
		{"Stop", 1 * time.Second, 15},
		{"SessionEnd", 1 * time.Second, 5},
	}
}

// AgentDatabase is the session database of a plugin agent that keeps one
// (OpenCode, Kilo; "" for any other), where the agent itself would open it
// in this environment.
func AgentDatabase(agent, home string, getenv func(string) string) string {
	switch agent {
	case string(transcript.FormatOpenCode), string(transcript.FormatKilo):
		return agentDatabase(home, getenv, transcript.Format(agent))
	}
	return ""
}

// startSource decides a plugin's SessionStart that names no source (the
// plugin cannot tell a new session from one continued): the session read,
// "resume" when the ledger holds a reply of its model, else "startup".
func (e *Engine) startSource(ctx context.Context, in HookInput, c hookClocks, r *hookResult) string {
	if in.TranscriptPath != "" {
		e.hookIngest(ctx, in, c, r)
		if r.err != nil {
			r.warn, r.err = r.err, nil
		}
	}
	st := e.Opened()
	if st == nil || in.SessionID == "" {
		return "startup"
	}
	msgs, err := st.Messages(ctx, in.SessionID, 0)
	if err != nil {
		return "startup"
	}
	for _, m := range msgs {
		if m.Role == compact.RoleAssistant && !m.Sidechain {
			return "resume"
		}
	}
	return "startup"
}

// unreadDBMessages reads, without writing to the ledger, the messages of a
// session of an agent's database that the ledger does not hold yet: its
// tree's, from their cursors.
func unreadDBMessages(ctx context.Context, st *store.Store, path string, f transcript.Format, session string) ([]compact.Message, tailInfo, error) {
	info := tailInfo{format: f}
	d, err := opencode.Open(ctx, path, f)
	if err != nil {
		return nil, info, fmt.Errorf("transcript_path %s: %w", path, err)
	}
	defer d.Close()
	sessions, err := d.Sessions(ctx)
	if err != nil {
		return nil, info, err
	}
	parents := make(map[string]string, len(sessions))
	for _, s := range sessions {
		parents[s.ID] = s.ParentID
	}
	root := opencode.Root(session, parents)
	var msgs []compact.Message
	for _, s := range sessions {
		if opencode.Root(s.ID, parents) != root {
			continue
		}
		var cur opencode.Cursor
		if c, err := st.Cursor(ctx, dbSessionKey(path, s.ID)); err == nil {
			_ = json.Unmarshal([]byte(c.State), &cur) // unreadable: from the start
		}
		if _, _, err := d.Read(ctx, s, root, cur, func(rec transcript.Record) error {
			if s := rec.Session; s != nil && s.Project != "" {
				info.project = s.Project
			}
			if rec.Message != nil {
				msgs = append(msgs, *rec.Message)
			}
			return nil
		}); err != nil {
			return nil, info, err
		}
	}
	return msgs, info, nil
}
