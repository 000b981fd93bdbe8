package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/agentledger/ledger/handoff"
)

// ResumeState is the handoff resume extracts for a session with none
// written, stored with the key of what it was extracted from (see
// ResumeKey): resume reads it instead of extracting, while the key holds.
type ResumeState struct {
	SessionID string
	Key       string
	Doc       handoff.Doc
}

// ResumeKey is what a session's resume state depends on, as it is now:
// the session's last message, its notes (how many, the latest), and the
// session facts extraction reads. A state stored under another key is stale.
func (s *Store) ResumeKey(ctx context.Context, sess Session) (string, error) {
	return s.resumeKey(ctx, sess, nil)
}

// ResumeKeyAt is ResumeKey with the session's last message given: the seq
// of the last message extraction read (Writer.LastSeq), not the last one
// stored now, which another process may have added since.
func (s *Store) ResumeKeyAt(ctx context.Context, sess Session, lastSeq int64) (string, error) {
	return s.resumeKey(ctx, sess, &lastSeq)
}

func (s *Store) resumeKey(ctx context.Context, sess Session, lastSeq *int64) (string, error) {
	var k struct {
		Seq   sql.NullInt64 `db:"seq"`
		Notes int64         `db:"notes"`
		Note  int64         `db:"note"`
	}
	seqQuery := `(SELECT max(seq) FROM messages WHERE session_id = $1)`
	if lastSeq != nil {
		seqQuery = `NULL`
	}
	err := s.db.GetContext(ctx, &k, `SELECT `+seqQuery+` AS seq,
		(SELECT count(*) FROM notes WHERE session_id = $1) AS notes,
		(SELECT coalesce(max(id), 0) FROM notes WHERE session_id = $1) AS note`, sess.ID)
	if err != nil {
		return "", fmt.Errorf("resume key of %s: %w", sess.ID, err)
	}
	seq := int64(-1)
	switch {
	case lastSeq != nil:
		seq = *lastSeq
	case k.Seq.Valid:
		seq = k.Seq.Int64
	}
	return resumeKey(seq, k.Notes, k.Note, sess), nil
}

func resumeKey(seq, notes, note int64, sess Session) string {
	b := make([]byte, 0, 64+len(sess.Project)+len(sess.GitBranch))
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, notes, 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, note, 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, sess.Compactions, 10)
	b = append(b, ':')
	b = strconv.AppendQuote(b, sess.GitBranch)
	b = append(b, ':')
	b = strconv.AppendQuote(b, sess.Project)
	return string(b)
}

// LoadResumeState returns the session's stored resume state, or
// ErrNotFound.
func (s *Store) LoadResumeState(ctx context.Context, sessionID string) (ResumeState, error) {
	var row struct {
		Key string `db:"input_key"`
		Doc string `db:"doc"`
	}
	err := s.db.GetContext(ctx, &row, `SELECT input_key, doc FROM resume_states WHERE session_id = $1`, sessionID)
	if errors.Is(err, sql.ErrNoRows) {
		return ResumeState{}, fmt.Errorf("resume state of %s: %w", sessionID, ErrNotFound)
	}
	if err != nil {
		return ResumeState{}, fmt.Errorf("read resume state of %s: %w", sessionID, err)
	}
	rs := ResumeState{SessionID: sessionID, Key: row.Key}
	if err := decodeJSON(row.Doc, &rs.Doc); err != nil {
		return ResumeState{}, fmt.Errorf("decode resume state of %s: %w", sessionID, err)
	}
	return rs, nil
}

// SaveResumeStates stores resume states, in one transaction, each
// replacing the session's previous one. A state of a session that is no
// longer there (forgotten meanwhile) is dropped.
func (s *Store) SaveResumeStates(ctx context.Context, states []ResumeState) error {
	if len(states) == 0 {
		return nil
	}
	docs := make([]string, len(states))
	for i, rs := range states {
		b, err := json.Marshal(rs.Doc)
		if err != nil {
			return fmt.Errorf("encode resume state of %s: %w", rs.SessionID, err)
		}
		docs[i] = string(b)
	}
	now := time.Now().UTC()
	// The key is made of stored values, already redacted: it goes as it is,
	// to compare equal to the key ResumeKey makes of them again.
	return Retry(ctx, func() error {
		// beginWrite: a caller's lock deadline (a hook's, a resume storing
		// what it extracted) bounds the wait for another writer's lock.
		tx, done, err := s.beginWrite(ctx)
		if err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		defer done()
		defer tx.Rollback()
		for i, rs := range states {
			if _, err := tx.ExecContext(ctx, `INSERT INTO resume_states (session_id, input_key, doc, updated_at)
				SELECT $1, $2, $3, $4 WHERE EXISTS (SELECT 1 FROM sessions WHERE id = $1)
				ON CONFLICT (session_id) DO UPDATE SET input_key = excluded.input_key, doc = excluded.doc, updated_at = excluded.updated_at`,
				rs.SessionID, verbatim(rs.Key), docs[i], now); err != nil {
				return fmt.Errorf("save resume state of %s: %w", rs.SessionID, err)
			}
		}
		return tx.Commit()
	})
}
