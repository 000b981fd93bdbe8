package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentledger/ledger/handoff"
)

// Handoff is a stored handoff.
type Handoff struct {
	ID        int64     `db:"id"`
	SessionID string    `db:"session_id"`
	CreatedAt time.Time `db:"created_at"`
	Trigger   string    `db:"trigger"`
	Task      string    `db:"task"`
	Sections  string    `db:"sections"` // the whole document as JSON
	Markdown  string    `db:"markdown"`
	Tokens    int       `db:"tokens"`
	Path      string    `db:"path"`
}

// Doc decodes the stored document, with the stored id, Markdown and tokens.
func (h Handoff) Doc() (handoff.Doc, error) {
	var d handoff.Doc
	if err := json.Unmarshal([]byte(h.Sections), &d); err != nil {
		return d, fmt.Errorf("decode handoff %d: %w", h.ID, err)
	}
	d.ID = h.ID
	d.Markdown, d.Tokens = h.Markdown, h.Tokens
	d.CreatedAt = h.CreatedAt.UTC()
	return d, nil
}

// CompactionRecord is a compaction recorded by ledger itself (the
// PreCompact hook, or `ledger compact`) rather than read from a transcript.
type CompactionRecord struct {
	Source    string // "hook" or "cli"
	Trigger   string
	At        time.Time
	PreTokens int64 // 0: unknown
	// LogicalParent is the session's last message when the record was
	// made: the transcript's compact_boundary names the same message as its
	// logicalParentUuid, which is how the two are matched.
	LogicalParent string
}

// AddHandoff stores a handoff and, when rec is set, a compaction record
// linked to it, in one transaction. It returns the handoff's id.
func (s *Store) AddHandoff(ctx context.Context, doc handoff.Doc, path string, rec *CompactionRecord) (int64, error) {
	// A handoff is made of messages already redacted, but a --task given
	// on the command line, or a handoff from elsewhere, may carry a secret.
	doc = s.RedactHandoff(doc)
	sections, err := json.Marshal(doc)
	if err != nil {
		return 0, fmt.Errorf("encode handoff: %w", err)
	}
	var id int64
	err = Retry(ctx, func() error {
		var err error
		id, err = s.addHandoff(ctx, doc, string(sections), path, rec)
		return err
	})
	return id, err
}

func (s *Store) addHandoff(ctx context.Context, doc handoff.Doc, sections, path string, rec *CompactionRecord) (int64, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO handoffs (session_id, created_at, trigger, task, sections, markdown, tokens, path)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, doc.Session, doc.CreatedAt.UTC(), doc.Trigger, doc.Task, sections,
		doc.Markdown, doc.Tokens, path)
	if err != nil {
		return 0, fmt.Errorf("insert handoff: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, err
	}
	if rec != nil {
		if err := addCompactionRecord(ctx, tx, doc.Session, id, *rec); err != nil {
			return 0, err
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("commit handoff: %w", err)
	}
	return id, nil
}

// addCompactionRecord inserts a hook or cli compaction; its tool_calls are
// the session's calls since the previous compaction.
func addCompactionRecord(ctx context.Context, tx execer, session string, handoffID int64, rec CompactionRecord) error {
	var pre any
	if rec.PreTokens > 0 {
		pre = rec.PreTokens
	}
	_, err := tx.ExecContext(ctx, `
		INSERT INTO compactions (session_id, at, trigger, pre_tokens, source, handoff_id, logical_parent_uuid, tool_calls)
		SELECT ?, ?, ?, ?, ?, ?, ?, s.tool_calls - coalesce((SELECT sum(tool_calls) FROM compactions WHERE session_id = s.id), 0)
		FROM sessions s WHERE s.id = ?`,
		session, rec.At.UTC(), rec.Trigger, pre, rec.Source, handoffID, rec.LogicalParent, session)
	if err != nil {
		return fmt.Errorf("insert compaction record: %w", err)
	}
	_, err = tx.ExecContext(ctx, `UPDATE sessions SET compactions = compactions + 1 WHERE id = ?`, session)
	return err
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

const handoffColumns = `id, session_id, created_at, trigger, task, sections, markdown, tokens, path`

// Handoffs lists handoffs, newest first: one session's, or every one when
// sessionID is "".
func (s *Store) Handoffs(ctx context.Context, sessionID string, limit int) ([]Handoff, error) {
	q := `SELECT ` + handoffColumns + ` FROM handoffs`
	var args []any
	if sessionID != "" {
		q += ` WHERE session_id = ?`
		args = append(args, sessionID)
	}
	q += ` ORDER BY created_at DESC, id DESC`
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	var out []Handoff
	if err := s.db.SelectContext(ctx, &out, q, args...); err != nil {
		return nil, fmt.Errorf("list handoffs: %w", err)
	}
	return out, nil
}

// Handoff returns the handoff with this id, or ErrNotFound.
func (s *Store) Handoff(ctx context.Context, id int64) (Handoff, error) {
	var h Handoff
	err := s.db.GetContext(ctx, &h, `SELECT `+handoffColumns+` FROM handoffs WHERE id = ?`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return h, fmt.Errorf("no handoff %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return h, fmt.Errorf("read handoff %d: %w", id, err)
	}
	return h, nil
}

// LatestHandoff returns the session's newest handoff, or ErrNotFound.
func (s *Store) LatestHandoff(ctx context.Context, sessionID string) (Handoff, error) {
	hs, err := s.Handoffs(ctx, sessionID, 1)
	if err != nil {
		return Handoff{}, err
	}
	if len(hs) == 0 {
		return Handoff{}, fmt.Errorf("no handoff for session %s: %w", sessionID, ErrNotFound)
	}
	return hs[0], nil
}
