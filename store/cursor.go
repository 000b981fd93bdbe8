package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// Cursor is how far ledger has read one transcript file. The head
// fingerprint (a hash of the file's first HeadLen bytes) tells a file that
// grew from one that was rewritten.
type Cursor struct {
	Path      string    `db:"path"`
	SessionID string    `db:"session_id"`
	Format    string    `db:"format"`
	Size      int64     `db:"size"`
	ModTime   int64     `db:"mod_time"` // unix nanoseconds
	Offset    int64     `db:"offset"`
	Line      int       `db:"line"`
	HeadLen   int64     `db:"head_len"`
	HeadHash  string    `db:"head_hash"`
	State     string    `db:"state"` // the reader's state, JSON
	UpdatedAt time.Time `db:"updated_at"`
}

// Cursor returns the cursor of the file at path, or ErrNotFound.
func (s *Store) Cursor(ctx context.Context, path string) (Cursor, error) {
	var c Cursor
	const q = `SELECT path, session_id, format, size, mod_time, "offset", line, head_len, head_hash, state, updated_at
		FROM cursors WHERE path = $1`
	key := s.cursorKey(path)
	err := s.db.GetContext(ctx, &c, q, key)
	if errors.Is(err, sql.ErrNoRows) {
		// A path holding a secret is stored redacted (StoredKey).
		if k := s.otherKey(key); k != "" {
			err = s.db.GetContext(ctx, &c, q, k)
		}
	}
	if errors.Is(err, sql.ErrNoRows) {
		return Cursor{}, ErrNotFound
	}
	c.Path = path
	if err != nil {
		return Cursor{}, fmt.Errorf("read cursor %s: %w", path, err)
	}
	return c, nil
}

// Cursors returns every cursor, keyed by path as stored: one query for a
// whole re-ingest of unchanged files. A path holding a secret is stored
// redacted: Cursor finds it by the path as it is.
func (s *Store) Cursors(ctx context.Context) (map[string]Cursor, error) {
	var cs []Cursor
	if err := s.db.SelectContext(ctx, &cs, `SELECT path, session_id, format, size, mod_time, "offset", line, head_len, head_hash, state, updated_at FROM cursors`); err != nil {
		return nil, fmt.Errorf("read cursors: %w", err)
	}
	m := make(map[string]Cursor, len(cs))
	for _, c := range cs {
		p, ok := s.d.cursorPath(s.host, c.Path)
		if !ok {
			continue // another machine's
		}
		c.Path = p
		m[c.Path] = c
	}
	return m, nil
}

// cursorKey is the cursors row of the file at path (the dialect's
// cursorKey).
func (s *Store) cursorKey(path string) string { return s.d.cursorKey(s.host, path) }

func saveCursor(ctx context.Context, tx *sqlx.Tx, c *Cursor) error {
	c.UpdatedAt = time.Now().UTC()
	if c.State == "" {
		c.State = "{}"
	}
	// The reader's state holds recorded text (prompts queued while the
	// agent worked): the store's connection redacts it with the rest
	// (redactdriver.go). The head's hash is no text: it goes as it is.
	_, err := tx.ExecContext(ctx, `
		INSERT INTO cursors (path, session_id, format, size, mod_time, "offset", line, head_len, head_hash, state, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (path) DO UPDATE SET session_id = excluded.session_id, format = excluded.format, size = excluded.size,
			mod_time = excluded.mod_time, "offset" = excluded."offset", line = excluded.line, head_len = excluded.head_len,
			head_hash = excluded.head_hash, state = excluded.state, updated_at = excluded.updated_at`,
		c.Path, c.SessionID, c.Format, c.Size, c.ModTime, c.Offset, c.Line, c.HeadLen, verbatim(c.HeadHash), c.State, c.UpdatedAt)
	if err != nil {
		return fmt.Errorf("save cursor %s: %w", c.Path, err)
	}
	return nil
}
