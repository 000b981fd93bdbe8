package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/agentledger/ledger/compact"
)

// The reads of a session's conversation that its views need (the web view's
// session and compaction pages): a page of messages, the context in use at
// every API response, and what precedes a compaction's cut. Each is one
// range of the messages_session_seq index.

// MessageRange returns the session's messages whose seq is in [from, to),
// in conversation order. seq numbers a session's messages from 0 in the
// order they were ingested, so a range is a stable page.
func (s *Store) MessageRange(ctx context.Context, sessionID string, from, to int64) ([]compact.Message, []int64, error) {
	var rows []messageRow
	if err := s.db.SelectContext(ctx, &rows, `SELECT `+messageColumns+` FROM messages
		WHERE session_id = $1 AND seq >= $2 AND seq < $3 ORDER BY seq`, sessionID, from, to); err != nil {
		return nil, nil, fmt.Errorf("read messages of %s: %w", sessionID, err)
	}
	msgs, err := messages(rows)
	if err != nil {
		return nil, nil, err
	}
	seqs := make([]int64, len(rows))
	for i, r := range rows {
		seqs[i] = r.Seq
	}
	return msgs, seqs, nil
}

// MessagesThrough returns what a session held at a cut: the main
// conversation's messages up to seq, and the subagents' (sidechain)
// messages up to the time at, in conversation order.
func (s *Store) MessagesThrough(ctx context.Context, sessionID string, seq int64, at time.Time) ([]compact.Message, error) {
	var rows []messageRow
	if err := s.db.SelectContext(ctx, &rows, `SELECT `+messageColumns+` FROM messages
		WHERE session_id = $1 AND ((sidechain = 0 AND seq <= $2) OR (sidechain = 1 AND at <= $3)) ORDER BY seq`,
		sessionID, seq, at.UTC()); err != nil {
		return nil, fmt.Errorf("read messages of %s: %w", sessionID, err)
	}
	return messages(rows)
}

// MessageAt returns the time of the session's message seq (zero when the
// transcript gave none).
func (s *Store) MessageAt(ctx context.Context, sessionID string, seq int64) (time.Time, error) {
	var at []sql.NullTime
	if err := s.db.SelectContext(ctx, &at, `SELECT at FROM messages WHERE session_id = $1 AND seq = $2`, sessionID, seq); err != nil {
		return time.Time{}, fmt.Errorf("read message %d of %s: %w", seq, sessionID, err)
	}
	if len(at) == 0 {
		return time.Time{}, fmt.Errorf("no message %d in %s: %w", seq, sessionID, ErrNotFound)
	}
	return utc(at[0]), nil
}

// MessagePlace is where a message (by its row id, as search hits name it)
// is: its session and seq.
type MessagePlace struct {
	SessionID string `db:"session_id"`
	Seq       int64  `db:"seq"`
}

// MessagePlace finds a message by its row id, or ErrNotFound.
func (s *Store) MessagePlace(ctx context.Context, id int64) (MessagePlace, error) {
	var out []MessagePlace
	if err := s.db.SelectContext(ctx, &out, `SELECT session_id, seq FROM messages WHERE id = $1`, id); err != nil {
		return MessagePlace{}, fmt.Errorf("find message %d: %w", id, err)
	}
	if len(out) == 0 {
		return MessagePlace{}, fmt.Errorf("no message %d: %w", id, ErrNotFound)
	}
	return out[0], nil
}

// ContextPoint is the context in use at one API response of the main
// conversation: input + cache creation + cache read tokens. At is zero
// when the response's transcript line had no time.
type ContextPoint struct {
	Seq    int64
	At     time.Time
	Tokens int64
	Model  string
}

// ContextSeries lists the context in use at every API response of the
// session's main conversation that recorded usage, in order. (Codex keeps
// usage on the session, not on messages: its series is empty.)
func (s *Store) ContextSeries(ctx context.Context, sessionID string) ([]ContextPoint, error) {
	var rows []struct {
		Seq    int64        `db:"seq"`
		At     sql.NullTime `db:"at"`
		Tokens int64        `db:"tokens"`
		Model  string       `db:"model"`
	}
	if err := s.db.SelectContext(ctx, &rows, `SELECT seq, at, model,
		coalesce(input_tokens, 0) + coalesce(cache_creation_tokens, 0) + coalesce(cache_read_tokens, 0) AS tokens
		FROM messages WHERE session_id = $1 AND sidechain = 0 AND output_tokens IS NOT NULL ORDER BY seq`, sessionID); err != nil {
		return nil, fmt.Errorf("read context of %s: %w", sessionID, err)
	}
	out := make([]ContextPoint, len(rows))
	for i, r := range rows {
		out[i] = ContextPoint{Seq: r.Seq, At: utc(r.At), Tokens: r.Tokens, Model: r.Model}
	}
	return out, nil
}

// PeakContexts is the largest context in use at an API response of each
// session's main conversation, or before one of its compactions (Codex
// records usage on the session only), for the sessions given (a listing's
// page). Sessions with neither are absent.
func (s *Store) PeakContexts(ctx context.Context, sessionIDs []string) (map[string]int64, error) {
	out := map[string]int64{}
	if len(sessionIDs) == 0 {
		return out, nil
	}
	var rows []struct {
		SessionID string `db:"session_id"`
		Peak      int64  `db:"peak"`
	}
	in := placeholders(len(sessionIDs)) // both IN lists: the same parameters
	if err := s.db.SelectContext(ctx, &rows, `SELECT session_id, max(peak) AS peak FROM (
		SELECT session_id, max(coalesce(input_tokens, 0) + coalesce(cache_creation_tokens, 0) + coalesce(cache_read_tokens, 0)) AS peak
		FROM messages WHERE session_id IN (`+in+`) AND sidechain = 0 AND output_tokens IS NOT NULL GROUP BY session_id
		UNION ALL SELECT session_id, max(pre_tokens) FROM compactions WHERE session_id IN (`+in+`) AND pre_tokens IS NOT NULL
		GROUP BY session_id) AS p GROUP BY session_id`, anys(sessionIDs)...); err != nil {
		return nil, fmt.Errorf("read peak context: %w", err)
	}
	for _, r := range rows {
		out[r.SessionID] = r.Peak
	}
	return out, nil
}

// LatestHandoffs is each session's newest handoff (its document left
// out), for the sessions given. Sessions with none are absent.
func (s *Store) LatestHandoffs(ctx context.Context, sessionIDs []string) (map[string]Handoff, error) {
	out := map[string]Handoff{}
	if len(sessionIDs) == 0 {
		return out, nil
	}
	var rows []Handoff
	if err := s.db.SelectContext(ctx, &rows, `SELECT id, session_id, created_at, trigger, task, '' AS sections, '' AS markdown, tokens, path
		FROM handoffs h WHERE session_id IN (`+placeholders(len(sessionIDs))+`)
		AND id = (SELECT id FROM handoffs WHERE session_id = h.session_id ORDER BY created_at DESC, id DESC LIMIT 1)`,
		anys(sessionIDs)...); err != nil {
		return nil, fmt.Errorf("read latest handoffs: %w", err)
	}
	for _, h := range rows {
		h.CreatedAt = h.CreatedAt.UTC()
		out[h.SessionID] = h
	}
	return out, nil
}

func anys(xs []string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}
