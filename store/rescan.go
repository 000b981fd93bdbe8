package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/store/secrets"
)

// rescanBatch is how many rows one rescan transaction reads and updates:
// memory stays bounded however big the ledger, and other processes get the
// write lock between batches.
const rescanBatch = 256

// rescanner runs the rescan's passes with one Redactor.
type rescanner struct{ *secrets.Redactor }

// RescanResult is what RedactRescan did.
type RescanResult struct {
	RowsChanged int64 `json:"rows_changed"`
	Secrets     int   `json:"secrets"` // secrets replaced
	// WALTruncated is false when another process kept the WAL (and the old
	// text in it) alive; it is truncated when that process closes.
	WALTruncated bool `json:"wal_truncated"`
}

// RedactRescan applies the current secret rules to every row stored
// earlier (before a rule existed, or with redaction off): message text and
// blocks, compaction summaries, session titles, handoff tasks, Markdown
// and sections. It pages through each table by id in batched transactions
// and updates only the rows that change (the UPDATE triggers keep the
// full-text indexes in step). Then it makes sure the old bytes are gone,
// not just unreachable:
//
//   - secure_delete is on for its connection, so SQLite zeroes what the
//     updates free;
//   - the full-text indexes are rebuilt: FTS5 deletes by adding tombstones,
//     and the old terms stay in older segments until a merge;
//   - VACUUM rewrites the file, dropping free pages an earlier write left
//     with old text in them;
//   - a TRUNCATE checkpoint copies the WAL into the file and empties it.
func (s *Store) RedactRescan(ctx context.Context) (RescanResult, error) {
	var res RescanResult
	r := rescanner{s.redactor}
	if r.Redactor == nil {
		r.Redactor = secrets.New() // a rescan redacts, whatever the store's setting
	}
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return res, fmt.Errorf("rescan: %w", err)
	}
	defer conn.Close()
	if !s.pg { // PostgreSQL has no secure_delete: autovacuum reclaims dead rows
		if _, err := conn.ExecContext(ctx, `PRAGMA secure_delete = ON`); err != nil {
			return res, fmt.Errorf("rescan: secure delete: %w", err)
		}
		// The connection goes back to the pool: leave it as the others are.
		defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA secure_delete = OFF`)
	}

	passes := []struct {
		name string
		fn   func(ctx context.Context, tx *sqlx.Tx, after any) (any, int, int, error)
	}{
		{"messages", r.rescanMessages},
		{"compactions", r.rescanCompactions},
		{"sessions", r.rescanSessions},
		{"handoffs", r.rescanHandoffs},
		{"notes", r.rescanNotes},
	}
	for _, p := range passes {
		var after any = int64(0)
		if p.name == "sessions" {
			after = ""
		}
		for after != nil {
			err := Retry(ctx, func() error {
				tx, err := conn.BeginTxx(ctx, nil)
				if err != nil {
					return err
				}
				defer tx.Rollback()
				next, rows, n, err := p.fn(ctx, tx, after)
				if err != nil {
					return err
				}
				if err := tx.Commit(); err != nil {
					return err
				}
				after, res.RowsChanged, res.Secrets = next, res.RowsChanged+int64(rows), res.Secrets+n
				return nil
			})
			if err != nil {
				return res, fmt.Errorf("rescan %s: %w", p.name, err)
			}
		}
	}
	if err := Retry(ctx, func() error {
		tx, err := conn.BeginTxx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		// Resume states were extracted from the messages as they were: they
		// may hold what the new rules call a secret. Resume extracts anew.
		if _, err := tx.ExecContext(ctx, `DELETE FROM resume_states`); err != nil {
			return fmt.Errorf("drop resume states: %w", err)
		}
		for _, t := range ftsTables {
			if s.pg {
				break // PostgreSQL's tsvector columns are generated
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO `+t+` (`+t+`) VALUES ('rebuild')`); err != nil {
				return fmt.Errorf("rebuild %s: %w", t, err)
			}
		}
		return tx.Commit()
	}); err != nil {
		return res, fmt.Errorf("rescan: %w", err)
	}
	if s.pg {
		res.WALTruncated = true // no file, no WAL of ours to rewrite
		return res, nil
	}
	if err := Retry(ctx, func() error {
		_, err := conn.ExecContext(ctx, `VACUUM`)
		return err
	}); err != nil {
		return res, fmt.Errorf("rescan: vacuum: %w", err)
	}
	var busy, logFrames, done int64
	if err := conn.QueryRowxContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logFrames, &done); err != nil {
		return res, fmt.Errorf("rescan: checkpoint: %w", err)
	}
	res.WALTruncated = busy == 0
	return res, nil
}

// rescanMessages redacts one batch of messages with ids after after (an
// int64). It returns the id to continue after (nil when done), the rows
// changed and the secrets found.
func (r rescanner) rescanMessages(ctx context.Context, tx *sqlx.Tx, after any) (any, int, int, error) {
	var rows []struct {
		ID     int64          `db:"id"`
		Text   string         `db:"text"`
		Blocks sql.NullString `db:"blocks"`
	}
	if err := tx.SelectContext(ctx, &rows, `SELECT id, text, blocks FROM messages WHERE id > ? ORDER BY id LIMIT ?`,
		after, rescanBatch); err != nil {
		return nil, 0, 0, err
	}
	changed, found := 0, 0
	for _, row := range rows {
		text, blocks, n := row.Text, row.Blocks, 0
		var bs []compact.Block
		var derr error
		if blocks.Valid {
			bs, derr = decodeBlocks(row.Text, blocks.String)
		}
		if blocks.Valid && derr == nil {
			// As ingest does: the message scanned whole, tool inputs
			// decoded, and its search text made from the redacted blocks.
			orig := compact.Message{Blocks: bs}
			m, search, k := r.RedactMessage(orig)
			if k > 0 {
				b, err := encodeBlocks(m.Blocks, search)
				if err != nil {
					return nil, 0, 0, err
				}
				blocks.String = string(b)
			}
			if row.Text == orig.SearchText() {
				text, n = search, k
			} else {
				text, n = r.Redact(row.Text)
				n += k
			}
		} else {
			var k int
			text, n = r.Redact(row.Text)
			if blocks.Valid {
				blocks.String, k = r.Redact(blocks.String)
				n += k
			}
		}
		if text == row.Text && blocks == row.Blocks {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET text = ?, blocks = ? WHERE id = ?`, text, blocks, row.ID); err != nil {
			return nil, 0, 0, err
		}
		changed, found = changed+1, found+n
	}
	return nextAfter(len(rows), func() any { return rows[len(rows)-1].ID }), changed, found, nil
}

func (r rescanner) rescanNotes(ctx context.Context, tx *sqlx.Tx, after any) (any, int, int, error) {
	var rows []struct {
		ID   int64  `db:"id"`
		Text string `db:"text"`
	}
	if err := tx.SelectContext(ctx, &rows, `SELECT id, text FROM notes WHERE id > ? ORDER BY id LIMIT ?`,
		after, rescanBatch); err != nil {
		return nil, 0, 0, err
	}
	changed, found := 0, 0
	for _, row := range rows {
		text, n := r.Redact(row.Text)
		if n == 0 || text == row.Text {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE notes SET text = ? WHERE id = ?`, text, row.ID); err != nil {
			return nil, 0, 0, err
		}
		changed, found = changed+1, found+n
	}
	return nextAfter(len(rows), func() any { return rows[len(rows)-1].ID }), changed, found, nil
}

func (r rescanner) rescanCompactions(ctx context.Context, tx *sqlx.Tx, after any) (any, int, int, error) {
	var rows []struct {
		ID      int64  `db:"id"`
		Summary string `db:"summary"`
	}
	if err := tx.SelectContext(ctx, &rows, `SELECT id, summary FROM compactions WHERE id > ? ORDER BY id LIMIT ?`,
		after, rescanBatch); err != nil {
		return nil, 0, 0, err
	}
	changed, found := 0, 0
	for _, row := range rows {
		summary, n := r.Redact(row.Summary)
		if n == 0 || summary == row.Summary {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE compactions SET summary = ? WHERE id = ?`, summary, row.ID); err != nil {
			return nil, 0, 0, err
		}
		changed, found = changed+1, found+n
	}
	return nextAfter(len(rows), func() any { return rows[len(rows)-1].ID }), changed, found, nil
}

func (r rescanner) rescanSessions(ctx context.Context, tx *sqlx.Tx, after any) (any, int, int, error) {
	var rows []struct {
		ID    string `db:"id"`
		Title string `db:"title"`
	}
	if err := tx.SelectContext(ctx, &rows, `SELECT id, title FROM sessions WHERE id > ? ORDER BY id LIMIT ?`,
		after, rescanBatch); err != nil {
		return nil, 0, 0, err
	}
	changed, found := 0, 0
	for _, row := range rows {
		title, n := r.Redact(row.Title)
		if n == 0 || title == row.Title {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET title = ? WHERE id = ?`, title, row.ID); err != nil {
			return nil, 0, 0, err
		}
		changed, found = changed+1, found+n
	}
	return nextAfter(len(rows), func() any { return rows[len(rows)-1].ID }), changed, found, nil
}

func (r rescanner) rescanHandoffs(ctx context.Context, tx *sqlx.Tx, after any) (any, int, int, error) {
	var rows []struct {
		ID       int64  `db:"id"`
		Task     string `db:"task"`
		Sections string `db:"sections"`
		Markdown string `db:"markdown"`
	}
	if err := tx.SelectContext(ctx, &rows, `SELECT id, task, sections, markdown FROM handoffs WHERE id > ? ORDER BY id LIMIT ?`,
		after, rescanBatch); err != nil {
		return nil, 0, 0, err
	}
	changed, found := 0, 0
	for _, row := range rows {
		task, n1 := r.Redact(row.Task)
		markdown, n2 := r.Redact(row.Markdown)
		sections, n3, err := r.redactSections(row.Sections)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("handoff %d: %w", row.ID, err)
		}
		if task == row.Task && markdown == row.Markdown && sections == row.Sections {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE handoffs SET task = ?, sections = ?, markdown = ? WHERE id = ?`,
			task, sections, markdown, row.ID); err != nil {
			return nil, 0, 0, err
		}
		changed, found = changed+1, found+n1+n2+n3
	}
	return nextAfter(len(rows), func() any { return rows[len(rows)-1].ID }), changed, found, nil
}

// redactSections redacts a handoff's stored document field by field, so
// that a replacement never breaks its JSON; a document that does not decode
// is redacted as text.
func (r rescanner) redactSections(sections string) (string, int, error) {
	var d handoff.Doc
	if err := decodeJSON(sections, &d); err != nil {
		s, n := r.Redact(sections)
		return s, n, nil
	}
	d, n := secrets.RedactStrings(r.Redactor, d)
	if n == 0 {
		return sections, 0, nil
	}
	b, err := json.Marshal(d)
	if err != nil {
		return "", 0, fmt.Errorf("encode sections: %w", err)
	}
	return string(b), n, nil
}

// nextAfter is the key to continue a paged scan after, or nil when the
// batch was the last.
func nextAfter(n int, last func() any) any {
	if n < rescanBatch {
		return nil
	}
	return last()
}
