package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/store"
)

// preCompactDebounce is how close two PreCompact events of one session
// must be to count as one compaction: Claude Code may fire the hook several
// times for one /compact.
const preCompactDebounce = time.Minute

// toolCallMarks are the tool-call counts at which PostToolUse suggests a
// handoff, once each.
var toolCallMarks = []int64{50, 100, 150}

// handleHookEvent handles the events that need more than an ingest.
func handleHookEvent(ctx context.Context, app *App, opts *hookOptions, in hookInput) error {
	switch in.Event {
	case "PreCompact":
		return hookPreCompact(ctx, app, opts, in)
	case "SessionStart":
		return hookSessionStart(ctx, app, opts, in)
	case "PostToolUse":
		return hookPostToolUse(ctx, app, in)
	}
	return nil
}

// hookPreCompact writes a handoff and a compaction record (source hook)
// before Claude Code compacts. In clear mode an auto compaction is then
// blocked, so that the user clears instead; never when the handoff failed.
func hookPreCompact(ctx context.Context, app *App, opts *hookOptions, in hookInput) error {
	s, sess, err := hookSession(ctx, app, in)
	if err != nil {
		return err
	}
	now := time.Now().UTC().Truncate(time.Second)
	id, recent, err := s.RecentHookCompaction(ctx, sess.ID, now.Add(-preCompactDebounce))
	if err != nil {
		return err
	}
	if !recent {
		trigger := in.Trigger
		if trigger != "manual" && trigger != "auto" {
			trigger = "auto"
		}
		w := handoffWriter{st: s, now: now}
		req := handoffRequest{Trigger: trigger, Budget: handoff.DefaultBudget, Source: "hook"}
		if in.CustomInstructions != nil {
			req.Note = *in.CustomInstructions
		}
		doc, err := w.write(ctx, sess.ID, req)
		if err != nil {
			return err
		}
		id = doc.ID
	}
	if opts.Mode == "clear" && in.Trigger == "auto" {
		return errBlock{fmt.Sprintf("handoff %d is written. Rather than compacting, run /clear: the new session starts from the handoff (clear, don't compact).", id)}
	}
	return nil
}

// hookSessionStart prints the resume context: of this session after
// /compact or a resume, of the project's latest other session after /clear
// (the new session has a new id), and at a brand-new session only with
// --startup.
func hookSessionStart(ctx context.Context, app *App, opts *hookOptions, in hookInput) error {
	s, err := app.Store(ctx)
	if err != nil {
		return err
	}
	var sess store.Session
	switch in.Source {
	case "compact", "resume":
		if in.TranscriptPath != "" {
			if _, err := hookIngest(ctx, app, in); err != nil {
				return err
			}
		}
		sess, err = s.Session(ctx, in.SessionID)
	case "clear":
		sess, err = latestProjectSession(ctx, s, absPath(in.Cwd), in.SessionID)
	case "startup":
		if !opts.Startup {
			return nil
		}
		sess, err = latestProjectSession(ctx, s, absPath(in.Cwd), in.SessionID)
	default:
		return nil
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil // nothing to resume: a new project, or a session never seen
	}
	if err != nil {
		return err
	}
	r, err := buildResume(ctx, s, sess, handoff.DefaultResumeBudget, maxHookContext)
	if err != nil {
		return err
	}
	return writeJSON(app.Stdout, sessionStartOutput(r.Markdown))
}

// postToolUseOutput tells the user (systemMessage) and the agent
// (additionalContext) that the context is filling.
type postToolUseOutput struct {
	SystemMessage      string `json:"systemMessage"`
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// hookPostToolUse ingests what is new and, past 80% of the window or at
// 50, 100 and 150 tool calls, suggests a handoff and /clear, once per
// threshold.
func hookPostToolUse(ctx context.Context, app *App, in hookInput) error {
	s, sess, err := hookSession(ctx, app, in)
	if err != nil {
		return err
	}
	win := compact.ContextLimit(sess.Model, nil).Reported(sess.ContextWindow)
	budget := compact.Budget{ContextLimit: win.Tokens, MessageTokens: sess.ContextTokens}
	var why string
	if budget.ShouldCompact() {
		first, err := s.Mark(ctx, sess.ID, "context-80")
		if err != nil {
			return err
		}
		if first {
			why = fmt.Sprintf("the context is %.0f%% full (%d of %d tokens)", 100*float64(sess.ContextTokens)/float64(win.Tokens), sess.ContextTokens, win.Tokens)
		}
	}
	for _, n := range toolCallMarks {
		if sess.ToolCalls < n || why != "" {
			continue
		}
		first, err := s.Mark(ctx, sess.ID, fmt.Sprintf("tools-%d", n))
		if err != nil {
			return err
		}
		if first {
			why = fmt.Sprintf("this session has made %d tool calls", sess.ToolCalls)
		}
	}
	if why == "" {
		return nil
	}
	var out postToolUseOutput
	out.SystemMessage = fmt.Sprintf("ledger: %s. Consider a handoff and a fresh start: run `ledger compact %s`, then /clear.", why, shortID(sess.ID))
	out.HookSpecificOutput.HookEventName = "PostToolUse"
	out.HookSpecificOutput.AdditionalContext = fmt.Sprintf("ledger: %s. Long contexts degrade; at a good stopping point, suggest the user write a handoff (`ledger compact %s`) and /clear.", why, sess.ID)
	return writeJSON(app.Stdout, out)
}

// hookSession ingests what is new in the hook's transcript and returns its
// session.
func hookSession(ctx context.Context, app *App, in hookInput) (*store.Store, store.Session, error) {
	if _, err := hookIngest(ctx, app, in); err != nil {
		return nil, store.Session{}, err
	}
	return app.openSession(ctx, in.SessionID)
}
