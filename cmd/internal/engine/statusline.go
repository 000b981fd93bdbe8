package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentledger/ledger/compact"
)

// StatusInput is the part of Claude Code's status-line JSON (its stdin)
// the status line reads. Every field may be missing; current_usage and
// the percentages are null early in a session and right after /compact.
type StatusInput struct {
	SessionID string `json:"session_id"`
	Model     struct {
		ID string `json:"id"`
	} `json:"model"`
	ContextWindow *struct {
		Size         int64    `json:"context_window_size"`
		UsedPercent  *float64 `json:"used_percentage"`
		CurrentUsage *struct {
			Input         int64 `json:"input_tokens"`
			CacheCreation int64 `json:"cache_creation_input_tokens"`
			CacheRead     int64 `json:"cache_read_input_tokens"`
		} `json:"current_usage"`
	} `json:"context_window"`
}

// Status is what the status line shows, and the line itself.
type Status struct {
	// Used and Window are the context in use and the model's window, in
	// tokens (Used -1 when the input says nothing of it).
	Used, Window int64
	// AutoCompactAt is where Claude Code compacts on its own (0 when auto
	// compaction is off): the window less 20,000 tokens kept for the
	// summary and a buffer of 13,000, lowered by
	// CLAUDE_AUTOCOMPACT_PCT_OVERRIDE (which cannot raise it).
	AutoCompactAt int64
	// HandoffAt is when the session's latest handoff was written (zero for
	// none or no ledger).
	HandoffAt time.Time
	// Due is set once the context passes 80% of the auto-compaction point
	// and no handoff was written in the last 15 minutes.
	Due bool
}

// Auto-compaction arithmetic of Claude Code (reverse-engineered; see
// docs/agents.md): the room kept for the summary, and the buffer below it.
const (
	autoCompactReserve = 20_000
	autoCompactBuffer  = 13_000
	handoffDueShare    = 0.8
	handoffFresh       = 15 * time.Minute
)

// NewStatus computes the status from the status-line input, the
// environment (CLAUDE_AUTOCOMPACT_PCT_OVERRIDE, DISABLE_AUTO_COMPACT) and
// the latest handoff's time.
func NewStatus(in StatusInput, getenv func(string) string, handoffAt, now time.Time) Status {
	s := Status{Used: -1, HandoffAt: handoffAt}
	if cw := in.ContextWindow; cw != nil {
		s.Window = cw.Size
		switch {
		case cw.CurrentUsage != nil:
			u := cw.CurrentUsage
			s.Used = u.Input + u.CacheCreation + u.CacheRead
		case cw.UsedPercent != nil && cw.Size > 0:
			s.Used = int64(*cw.UsedPercent * float64(cw.Size) / 100)
		}
	}
	if s.Window <= 0 {
		s.Window = compact.ContextLimit(in.Model.ID, nil).Tokens
	}
	if getenv("DISABLE_AUTO_COMPACT") == "" || getenv("DISABLE_AUTO_COMPACT") == "0" {
		effective := s.Window - autoCompactReserve
		s.AutoCompactAt = max(effective-autoCompactBuffer, 0)
		if pct, err := strconv.ParseFloat(getenv("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"), 64); err == nil && pct > 0 && pct <= 100 {
			s.AutoCompactAt = min(int64(float64(effective)*pct/100), s.AutoCompactAt)
		}
	}
	limit := s.AutoCompactAt
	if limit == 0 {
		limit = s.Window
	}
	s.Due = s.Used >= 0 && float64(s.Used) >= handoffDueShare*float64(limit) &&
		(handoffAt.IsZero() || now.Sub(handoffAt) > handoffFresh)
	return s
}

// Line is the status as one short line, e.g.
// "ctx 45% 90k/200k · 77k to compact · handoff 12m ago".
func (s Status) Line(now time.Time) string {
	var parts []string
	if s.Used < 0 {
		parts = append(parts, "ctx ?/"+kTokens(s.Window))
	} else {
		parts = append(parts, fmt.Sprintf("ctx %d%% %s/%s", 100*s.Used/max(s.Window, 1), kTokens(s.Used), kTokens(s.Window)))
	}
	switch {
	case s.AutoCompactAt == 0:
		parts = append(parts, "auto-compact off")
	case s.Used >= 0:
		parts = append(parts, kTokens(max(s.AutoCompactAt-s.Used, 0))+" to compact")
	}
	if s.HandoffAt.IsZero() {
		parts = append(parts, "no handoff")
	} else {
		parts = append(parts, "handoff "+ago(now.Sub(s.HandoffAt))+" ago")
	}
	line := strings.Join(parts, " · ")
	if s.Due {
		line += " · ⚑ handoff due"
	}
	return line
}

// StatusFallback is the line printed when the input cannot be read.
const StatusFallback = "ledger: ctx ?"

// kTokens writes a token count in thousands ("90k", "1.0M").
func kTokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%dk", n/1000)
	}
	return strconv.FormatInt(n, 10)
}

// ago writes a duration in its largest unit: "40s", "12m", "3h", "2d".
func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(int(d.Seconds()), 0))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// StatusWindow is the window a status-line input states for its session
// (context_window.context_window_size): the session and the tokens, 0
// when it states none.
func StatusWindow(raw []byte) (session string, tokens int64) {
	var in StatusInput
	if json.Unmarshal(raw, &in) != nil || in.ContextWindow == nil || in.ContextWindow.Size <= 0 {
		return "", 0
	}
	return in.SessionID, in.ContextWindow.Size
}

// WindowOnRecord is the window the ledger holds for a session as stated by
// its agent (0 for none, or for a session it does not hold).
func (e *Engine) WindowOnRecord(ctx context.Context, session string) (int64, error) {
	st, err := e.Store(ctx)
	if err != nil {
		return 0, err
	}
	sess, err := st.Session(ctx, session)
	if notFound(err) {
		return 0, nil
	}
	return sess.ContextWindow, err
}

// StatusLine is the status line for Claude Code's status-line JSON raw:
// the context, the auto-compaction point, the age of the session's latest
// handoff (from the ledger, when withLedger and it opens within ctx). It
// never fails: input it cannot read gives StatusFallback.
func (e *Engine) StatusLine(ctx context.Context, raw []byte, getenv func(string) string, withLedger bool) string {
	var in StatusInput
	if err := json.Unmarshal(raw, &in); err != nil {
		return StatusFallback
	}
	var at time.Time
	if withLedger && in.SessionID != "" {
		if st, err := e.Store(ctx); err == nil {
			if h, err := st.LatestHandoff(ctx, in.SessionID); err == nil {
				at = h.CreatedAt
			}
		}
	}
	now := e.now()
	return NewStatus(in, getenv, at, now).Line(now)
}
