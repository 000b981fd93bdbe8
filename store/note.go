package store

import (
	"context"
	"fmt"
	"time"

	"github.com/agentledger/ledger/handoff"
)

// Note is a fact recorded on purpose for a session.
type Note struct {
	ID        int64     `db:"id" json:"id"`
	SessionID string    `db:"session_id" json:"session"`
	Kind      string    `db:"kind" json:"kind"`
	Text      string    `db:"text" json:"text"`
	CreatedAt time.Time `db:"created_at" json:"created_at"`
}

// AddNote records a note for a session, its secrets redacted like
// everything else the ledger stores, and returns it as stored.
func (s *Store) AddNote(ctx context.Context, n Note) (Note, error) {
	switch n.Kind {
	case handoff.NoteDecision, handoff.NoteNext, handoff.NoteBlocker:
	default:
		return n, fmt.Errorf("note kind %q: want decision, next or blocker", n.Kind)
	}
	if s.redactor != nil {
		n.Text, _ = s.redactor.Redact(n.Text)
	}
	n.CreatedAt = n.CreatedAt.UTC()
	err := Retry(ctx, func() error {
		// RETURNING rather than LastInsertId: PostgreSQL has no last insert id.
		return s.db.GetContext(ctx, &n.ID, `INSERT INTO notes (session_id, kind, text, created_at) VALUES ($1, $2, $3, $4) RETURNING id`,
			n.SessionID, n.Kind, n.Text, n.CreatedAt)
	})
	if err != nil {
		return n, fmt.Errorf("add note to %s: %w", n.SessionID, err)
	}
	return n, nil
}

// Notes lists a session's notes, oldest first.
func (s *Store) Notes(ctx context.Context, sessionID string) ([]Note, error) {
	var out []Note
	if err := s.db.SelectContext(ctx, &out, `SELECT id, session_id, kind, text, created_at FROM notes
		WHERE session_id = $1 ORDER BY created_at, id`, sessionID); err != nil {
		return nil, fmt.Errorf("list notes of %s: %w", sessionID, err)
	}
	for i := range out {
		out[i].CreatedAt = out[i].CreatedAt.UTC()
	}
	return out, nil
}

// HandoffNotes is a session's notes as a handoff carries them.
func (s *Store) HandoffNotes(ctx context.Context, sessionID string) ([]handoff.Note, error) {
	ns, err := s.Notes(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	out := make([]handoff.Note, len(ns))
	for i, n := range ns {
		out[i] = handoff.Note{Kind: n.Kind, Text: n.Text, CreatedAt: n.CreatedAt}
	}
	return out, nil
}
