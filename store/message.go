package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agentledger/ledger/compact"
)

type messageRow struct {
	UUID           string         `db:"uuid"`
	ParentUUID     string         `db:"parent_uuid"`
	SessionID      string         `db:"session_id"`
	Role           string         `db:"role"`
	Text           string         `db:"text"`
	Blocks         sql.NullString `db:"blocks"`
	At             sql.NullTime   `db:"at"`
	Model          string         `db:"model"`
	ResponseID     string         `db:"response_id"`
	InputTokens    sql.NullInt64  `db:"input_tokens"`
	CacheCreation  sql.NullInt64  `db:"cache_creation_tokens"`
	CacheRead      sql.NullInt64  `db:"cache_read_tokens"`
	OutputTokens   sql.NullInt64  `db:"output_tokens"`
	Meta           bool           `db:"meta"`
	CompactSummary bool           `db:"compact_summary"`
	Sidechain      bool           `db:"sidechain"`
	AgentID        string         `db:"agent_id"`
	Seq            int64          `db:"seq"`
	ID             int64          `db:"id"` // read by the queries that need it only
}

const messageColumns = `uuid, parent_uuid, session_id, role, text, blocks, at, model, response_id, input_tokens,
	cache_creation_tokens, cache_read_tokens, output_tokens, meta, compact_summary, sidechain, agent_id, seq`

func (r messageRow) message() (compact.Message, error) {
	m := compact.Message{UUID: r.UUID, ParentUUID: r.ParentUUID, SessionID: r.SessionID, Role: compact.Role(r.Role),
		Model: r.Model, ResponseID: r.ResponseID, Meta: r.Meta, CompactSummary: r.CompactSummary,
		Sidechain: r.Sidechain, AgentID: r.AgentID}
	if r.At.Valid {
		m.Time = r.At.Time.UTC()
	}
	if r.Blocks.Valid {
		var err error
		if m.Blocks, err = decodeBlocks(r.Text, r.Blocks.String); err != nil {
			return m, fmt.Errorf("decode blocks of %s: %w", r.UUID, err)
		}
	} else {
		m.Blocks = []compact.Block{{Kind: compact.BlockText, Text: r.Text}}
	}
	if r.OutputTokens.Valid {
		m.Usage = &compact.Usage{InputTokens: r.InputTokens.Int64, CacheCreationInputTokens: r.CacheCreation.Int64,
			CacheReadInputTokens: r.CacheRead.Int64, OutputTokens: r.OutputTokens.Int64}
	}
	return m, nil
}

// Messages returns a session's messages in conversation order. With
// last > 0 only the last that many.
func (s *Store) Messages(ctx context.Context, sessionID string, last int) ([]compact.Message, error) {
	var rows []messageRow
	var err error
	if last > 0 {
		err = s.db.SelectContext(ctx, &rows, `SELECT * FROM (SELECT `+messageColumns+` FROM messages WHERE session_id = $1
			ORDER BY seq DESC LIMIT $2) AS m ORDER BY seq`, sessionID, last)
	} else {
		err = s.db.SelectContext(ctx, &rows, `SELECT `+messageColumns+` FROM messages WHERE session_id = $1 ORDER BY seq`, sessionID)
	}
	if err != nil {
		return nil, fmt.Errorf("read messages of %s: %w", sessionID, err)
	}
	return messages(rows)
}

// RecentUserMessages returns up to n of the session's latest user text
// messages (not meta lines, compaction summaries or subagent prompts),
// oldest first: the candidates for "what was asked last".
func (s *Store) RecentUserMessages(ctx context.Context, sessionID string, n int) ([]compact.Message, error) {
	var rows []messageRow
	err := s.db.SelectContext(ctx, &rows, `SELECT * FROM (SELECT `+messageColumns+` FROM messages
		WHERE session_id = $1 AND role = 'user' AND kind = 'text' AND meta = 0 AND compact_summary = 0 AND sidechain = 0
		ORDER BY seq DESC LIMIT $2) AS m ORDER BY seq`, sessionID, n)
	if err != nil {
		return nil, fmt.Errorf("read requests of %s: %w", sessionID, err)
	}
	return messages(rows)
}

func messages(rows []messageRow) ([]compact.Message, error) {
	out := make([]compact.Message, 0, len(rows))
	for _, r := range rows {
		m, err := r.message()
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}
