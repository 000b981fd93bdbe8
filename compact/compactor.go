package compact

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"
)

// Triggers of a compaction, as Claude Code names them.
const (
	TriggerManual = "manual"
	TriggerAuto   = "auto"
)

// SourceCompact is the source a SessionStart hook gets after a compaction.
const SourceCompact = "compact"

// SummaryPreamble opens the summary message a compaction leaves, telling
// the model what follows.
const SummaryPreamble = "This session is being continued from an earlier conversation that was compacted to fit the context window. The summary below covers the earlier part; the most recent messages follow it unchanged.\n\n"

// ErrNothingToCompact is returned by Compact when every message fits the
// preserved zone: there is no older zone to summarize.
var ErrNothingToCompact = errors.New("nothing to compact: the whole conversation fits the preserved zone")

// SummarizerFunc adapts a function to the Summarizer interface.
type SummarizerFunc func(ctx context.Context, msgs []Message, instructions string) (string, error)

// Summarize calls f.
func (f SummarizerFunc) Summarize(ctx context.Context, msgs []Message, instructions string) (string, error) {
	return f(ctx, msgs, instructions)
}

// Hooks are called at the points of a compaction Claude Code fires its
// hooks at. Every field is optional.
type Hooks struct {
	// PreCompact runs first. The instructions it returns are added to the
	// summarizer's; an error stops the compaction (Compact returns it).
	PreCompact func(ctx context.Context, trigger string) (instructions string, err error)
	// SessionStart runs after the compaction, with source SourceCompact:
	// the conversation restarts from the summary.
	SessionStart func(ctx context.Context, source string)
	// PostCompact runs last, with the compaction's boundary.
	PostCompact func(ctx context.Context, b Boundary)
}

// Compactor turns a long conversation into a summary of its older part
// followed by its most recent messages, untouched. The zero value works:
// it drops the older zone instead of summarizing it (no Summarizer), with
// DefaultEstimator, a DefaultContextLimit window and DefaultPreserveRatio.
// A Compactor may compact the same session any number of times; it keeps
// no state between calls.
type Compactor struct {
	// Summarizer condenses the older zone. If it fails, or is nil, the
	// older zone is dropped and the summary says so.
	Summarizer Summarizer
	// Estimator sizes messages for the split and the boundary's figures.
	Estimator Estimator
	// ContextLimit is the window the preserved zone is a share of.
	ContextLimit int64
	// PreserveRatio is that share.
	PreserveRatio float64
	// Overhead counts the tokens of a request outside its messages (system
	// prompt, memory, tool schemas); it is added to estimated pre- and
	// post-compaction figures.
	Overhead int64
	// Instructions are custom instructions for every compaction, before
	// any a PreCompact hook adds.
	Instructions string
	// SessionID is the boundary's session; "" takes the messages'.
	SessionID string
	// Hooks are called around the compaction.
	Hooks Hooks
	// Warn receives what went wrong but did not stop the compaction (the
	// summarizer failing). nil logs it with slog.
	Warn func(ctx context.Context, err error)
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Compact compacts msgs. It splits msgs (SplitAt with PreserveRatio of
// ContextLimit), fires PreCompact, summarizes the older zone, and returns
// the summary message followed by the preserved zone, untouched, with the
// Boundary that records the compaction; then it fires SessionStart (source
// SourceCompact) and PostCompact. The summary message is a user message
// with CompactSummary set, whose ParentUUID is the boundary's UUID.
//
// The boundary's PreTokens is the context the last API response reported
// (LastUsage) when there is a fresh one, else an estimate; PostTokens is
// always an estimate. When the summarizer fails, Compact warns (Warn) and
// drops the older zone instead; when ctx is done, it returns ctx's error.
// It returns ErrNothingToCompact, before any hook fires, when all of msgs
// fits the preserved zone.
// On error msgs is returned unchanged.
func (c *Compactor) Compact(ctx context.Context, msgs []Message, trigger string) ([]Message, Boundary, error) {
	if trigger != TriggerManual && trigger != TriggerAuto {
		return msgs, Boundary{}, fmt.Errorf("compact: trigger %q is neither %q nor %q", trigger, TriggerManual, TriggerAuto)
	}
	est := c.Estimator
	if est == nil {
		est = DefaultEstimator()
	}
	limit := c.ContextLimit
	if limit <= 0 {
		limit = DefaultContextLimit
	}
	ratio := c.PreserveRatio
	if ratio <= 0 {
		ratio = DefaultPreserveRatio
	}
	split := SplitAt(msgs, int64(ratio*float64(limit)), est)
	if split == 0 {
		return msgs, Boundary{}, ErrNothingToCompact
	}
	older, preserved := msgs[:split], msgs[split:]

	instructions := c.Instructions
	if c.Hooks.PreCompact != nil {
		more, err := c.Hooks.PreCompact(ctx, trigger)
		if err != nil {
			return msgs, Boundary{}, fmt.Errorf("compact: PreCompact hook: %w", err)
		}
		instructions = joinInstructions(instructions, more)
	}

	var pre int64
	if u, ok := LastUsage(msgs); ok {
		pre = u.ContextTokens()
	} else {
		pre = c.Overhead + EstimateMessages(msgs, est)
	}

	var summary string
	if c.Summarizer != nil {
		s, err := c.Summarizer.Summarize(ctx, older, instructions)
		switch {
		case ctx.Err() != nil:
			return msgs, Boundary{}, ctx.Err()
		case err != nil:
			c.warn(ctx, fmt.Errorf("compact: summarizer failed, dropping the %d oldest messages instead: %w", len(older), err))
		case s == "":
			c.warn(ctx, fmt.Errorf("compact: summarizer returned nothing, dropping the %d oldest messages instead", len(older)))
		default:
			summary = s
		}
	}
	if summary == "" {
		summary = "The " + strconv.Itoa(len(older)) + " earliest messages of this conversation were dropped to fit the context window; no summary of them is available."
	}

	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	at := now()
	session := c.SessionID
	for i := len(msgs) - 1; session == "" && i >= 0; i-- {
		session = msgs[i].SessionID
	}
	b := NewBoundary(session, newUUID(), trigger, at, pre, 0)
	b.LogicalParentUUID = older[len(older)-1].UUID
	b.Summary = summary
	sm := Message{
		UUID:           newUUID(),
		ParentUUID:     b.UUID,
		SessionID:      session,
		Role:           RoleUser,
		Blocks:         []Block{{Kind: BlockText, Text: SummaryPreamble + summary}},
		Time:           at,
		CompactSummary: true,
	}
	out := make([]Message, 0, 1+len(preserved))
	out = append(out, sm)
	out = append(out, preserved...)
	b.PostTokens = c.Overhead + EstimateMessages(out, est)

	if c.Hooks.SessionStart != nil {
		c.Hooks.SessionStart(ctx, SourceCompact)
	}
	if c.Hooks.PostCompact != nil {
		c.Hooks.PostCompact(ctx, b)
	}
	return out, b, nil
}

func (c *Compactor) warn(ctx context.Context, err error) {
	if c.Warn != nil {
		c.Warn(ctx, err)
		return
	}
	slog.WarnContext(ctx, err.Error())
}

func joinInstructions(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand since Go 1.24)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
