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
// earlier (before a rule existed, or with redaction off), in every column
// that can hold recorded text (textColumns, and messages' and handoffs'
// own passes): message text, blocks, ids, tool names and models; session
// ids, projects, branches, titles and models; compaction summaries;
// handoffs' tasks, sections, Markdown and paths (and the Markdown files
// themselves); notes; cursors' paths and reader states (prompts queued
// while the agent worked); hook receipts; marks; paused projects. A key
// that holds a secret (a session id, a path) is replaced in every row that
// names it first (rekey). It pages through each table in batched
// transactions and updates only the rows that change (the UPDATE triggers
// keep the full-text indexes in step). Then it makes sure the old bytes
// are gone, not just unreachable:
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
	// A connection of its own, on which what the updates free is zeroed
	// where the backend can see to that; it never goes back to the pool
	// with that setting (secureConn).
	conn, release, err := s.d.secureConn(ctx, s.db)
	if err != nil {
		return res, fmt.Errorf("rescan: %w", err)
	}
	defer release()

	// Keys first: a session id, a path or a name that holds a secret is
	// a key other rows name (rekey.go). Then the text of every row.
	if err := Retry(ctx, func() error {
		tx, err := conn.BeginTxx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		rows, n, err := r.rekey(ctx, tx, s.d.sessionTables())
		if err != nil {
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		res.RowsChanged, res.Secrets = res.RowsChanged+int64(rows), res.Secrets+n
		return nil
	}); err != nil {
		return res, fmt.Errorf("rescan keys: %w", err)
	}
	passes := []struct {
		name string
		fn   func(ctx context.Context, tx *sqlx.Tx, after any) (any, int, int, error)
	}{
		{"messages", r.rescanMessages},
		{"handoffs", r.rescanHandoffs},
	}
	for _, t := range textColumns() {
		passes = append(passes, struct {
			name string
			fn   func(ctx context.Context, tx *sqlx.Tx, after any) (any, int, int, error)
		}{t.table, r.rescanTable(t)})
	}
	for _, p := range passes {
		var after any = int64(0)
		if t, ok := textTable(p.name); ok && !t.intKey {
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
		if err := s.d.rebuildFTS(ctx, tx); err != nil {
			return err
		}
		return tx.Commit()
	}); err != nil {
		return res, fmt.Errorf("rescan: %w", err)
	}
	if res.WALTruncated, err = s.d.scrubRescanned(ctx, conn); err != nil {
		return res, fmt.Errorf("rescan: %w", err)
	}
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
		messageFields
	}
	if err := tx.SelectContext(ctx, &rows, `SELECT id, text, blocks, `+messageFieldColumns+` FROM messages WHERE id > $1 ORDER BY id LIMIT $2`,
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
		fields, k := r.redactFields(row.messageFields)
		n += k
		if text == row.Text && blocks == row.Blocks && fields == row.messageFields {
			continue
		}
		if fields.UUID != row.UUID {
			// Two messages of a session whose uuids differ only by a
			// secret are one once it is redacted: the first is kept.
			var dup bool
			if err := tx.GetContext(ctx, &dup, `SELECT EXISTS (SELECT 1 FROM messages WHERE session_id = $1 AND uuid = $2)`,
				verbatim(fields.SessionID), verbatim(fields.UUID)); err != nil {
				return nil, 0, 0, err
			}
			if dup {
				if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE id = $1`, row.ID); err != nil {
					return nil, 0, 0, err
				}
				changed, found = changed+1, found+n
				continue
			}
		}
		var b any
		if blocks.Valid {
			b = verbatim(blocks.String)
		}
		// Redacted here, with the message's structure: as they are.
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET text = $1, blocks = $2, uuid = $3, parent_uuid = $4, tool_name = $5,
			model = $6, response_id = $7, agent_id = $8 WHERE id = $9`, verbatim(text), b, verbatim(fields.UUID), verbatim(fields.ParentUUID),
			verbatim(fields.ToolName), verbatim(fields.Model), verbatim(fields.ResponseID), verbatim(fields.AgentID), row.ID); err != nil {
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
		Trigger  string `db:"trigger"`
		Path     string `db:"path"`
	}
	if err := tx.SelectContext(ctx, &rows, `SELECT id, task, sections, markdown, trigger, path FROM handoffs WHERE id > $1 ORDER BY id LIMIT $2`,
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
		trigger, n4 := r.Redact(row.Trigger)
		path, n5 := r.Redact(row.Path)
		// The Markdown file the row names was written with the same
		// text: it is rewritten redacted, and moved when its name held a
		// secret (the row then names where it went).
		if err := r.rewriteFile(row.Path, path); err != nil {
			return nil, 0, 0, fmt.Errorf("handoff %d: %w", row.ID, err)
		}
		if task == row.Task && markdown == row.Markdown && sections == row.Sections && trigger == row.Trigger && path == row.Path {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE handoffs SET task = $1, sections = $2, markdown = $3, trigger = $4, path = $5 WHERE id = $6`,
			verbatim(task), verbatim(sections), verbatim(markdown), verbatim(trigger), verbatim(path), row.ID); err != nil {
			return nil, 0, 0, err
		}
		changed, found = changed+1, found+n1+n2+n3+n4+n5
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
