package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/google/renameio/v2"
	"github.com/jmoiron/sqlx"
)

// textColumn lists the columns of a table that can hold recorded text
// and that no other row names (keys are rekey's), paged by key.
type textColumn struct {
	table, key string
	intKey     bool
	columns    []string
}

// textColumns are the tables RedactRescan redacts column by column (the
// messages and handoffs have passes of their own, which know their
// structure).
func textColumns() []textColumn {
	return []textColumn{
		{"sessions", "id", false, []string{"project", "git_branch", "title", "model"}},
		{"compactions", "id", true, []string{"trigger", "summary", "boundary_uuid", "logical_parent_uuid"}},
		{"notes", "id", true, []string{"text"}},
		{"cursors", "path", false, []string{"state"}},
		{"hook_receipts", "id", true, []string{"event", "detail"}},
	}
}

// textTable is the textColumn of table, if it has one.
func textTable(table string) (textColumn, bool) {
	for _, t := range textColumns() {
		if t.table == table {
			return t, true
		}
	}
	return textColumn{}, false
}

// rescanTable redacts one batch of t's rows with keys after after: each
// column as the store's connection redacts what it writes (a JSON
// document string by string).
func (r rescanner) rescanTable(t textColumn) func(ctx context.Context, tx *sqlx.Tx, after any) (any, int, int, error) {
	return func(ctx context.Context, tx *sqlx.Tx, after any) (any, int, int, error) {
		cols := t.key
		for _, c := range t.columns {
			cols += ", " + c
		}
		rows, err := tx.QueryxContext(ctx, `SELECT `+cols+` FROM `+t.table+` WHERE `+t.key+` > $1 ORDER BY `+t.key+` LIMIT $2`,
			after, rescanBatch)
		if err != nil {
			return nil, 0, 0, err
		}
		type row struct {
			key  any
			vals []any
		}
		var batch []row
		for rows.Next() {
			vals, err := rows.SliceScan()
			if err != nil {
				rows.Close()
				return nil, 0, 0, err
			}
			batch = append(batch, row{vals[0], vals[1:]})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, 0, 0, err
		}
		changed, found := 0, 0
		for _, row := range batch {
			var q query
			n := 0
			for i, v := range row.vals {
				old, ok := asString(v)
				if !ok {
					continue
				}
				red, k := r.redactText(old)
				if red == old {
					continue
				}
				if len(q.args) > 0 {
					q.add(", ")
				}
				q.add(t.columns[i] + " = " + q.arg(verbatim(red)))
				n += k
			}
			if len(q.args) == 0 {
				continue
			}
			key := row.key
			if k, ok := asString(key); ok {
				key = verbatim(k)
			}
			set := q.String()
			if _, err := tx.ExecContext(ctx, `UPDATE `+t.table+` SET `+set+` WHERE `+t.key+` = `+q.arg(key), q.args...); err != nil {
				return nil, 0, 0, fmt.Errorf("%s: %w", t.table, err)
			}
			changed, found = changed+1, found+n
		}
		return nextAfter(len(batch), func() any {
			if k, ok := asString(batch[len(batch)-1].key); ok {
				return k
			}
			return batch[len(batch)-1].key
		}), changed, found, nil
	}
}

func asString(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case []byte:
		return string(v), true
	}
	return "", false
}

// redactText is s redacted as the store's connection would write it.
func (r rescanner) redactText(s string) (string, int) {
	if s == "" {
		return s, 0
	}
	return redactValue(r.Redactor, s)
}

// messageFields are the columns of a message other than its text and
// blocks that hold what a transcript wrote.
type messageFields struct {
	SessionID  string `db:"session_id"`
	UUID       string `db:"uuid"`
	ParentUUID string `db:"parent_uuid"`
	ToolName   string `db:"tool_name"`
	Model      string `db:"model"`
	ResponseID string `db:"response_id"`
	AgentID    string `db:"agent_id"`
}

const messageFieldColumns = `session_id, uuid, parent_uuid, tool_name, model, response_id, agent_id`

// redactFields redacts a message's fields as Writer.Prepare does (the
// session id is rekey's).
func (r rescanner) redactFields(f messageFields) (messageFields, int) {
	n := 0
	for _, p := range []*string{&f.UUID, &f.ParentUUID, &f.ToolName, &f.Model, &f.ResponseID, &f.AgentID} {
		var k int
		*p, k = r.Redact(*p)
		n += k
	}
	return f, n
}

// uniqueWith is, for a table whose rows are unique by session and another
// column, that column: a row of an id being merged into one that has the
// same value already is dropped, not moved.
var uniqueWith = map[string]string{
	"messages":      "uuid",
	"compactions":   "boundary_uuid",
	"session_marks": "name",
	"sync_marks":    "origin",
}

// rekey replaces the keys that hold a secret: session ids (in every table
// that names one), cursors' paths, paused projects' paths and marks' names.
// A key whose redacted form is another's already is merged into it: the
// rows that would collide are dropped, the session's counts added. It
// returns the rows changed and the secrets found.
//
// tables are the tables whose rows name a session (the dialect's
// sessionTables).
func (r rescanner) rekey(ctx context.Context, tx *sqlx.Tx, tables []string) (int, int, error) {
	changed, found := 0, 0
	// Session ids, wherever they are named (a hook receipt or a forgotten
	// id may have no session row).
	var ids []string
	q := `SELECT id FROM sessions`
	for _, t := range tables {
		q += ` UNION SELECT session_id FROM ` + t
	}
	if err := tx.SelectContext(ctx, &ids, q); err != nil {
		return 0, 0, fmt.Errorf("list session ids: %w", err)
	}
	for _, old := range ids {
		id, n := r.Redact(old)
		if id == old {
			continue
		}
		if err := r.rekeySession(ctx, tx, tables, old, id); err != nil {
			return 0, 0, fmt.Errorf("session %d: %w", changed, err)
		}
		changed, found = changed+1, found+n
	}
	for _, k := range []struct{ table, column string }{{"cursors", "path"}, {"paused_projects", "project"}, {"session_marks", "name"}} {
		n, f, err := r.rekeyColumn(ctx, tx, k.table, k.column)
		if err != nil {
			return 0, 0, err
		}
		changed, found = changed+n, found+f
	}
	return changed, found, nil
}

// rekeySession moves everything of session old to id, its redacted form.
func (r rescanner) rekeySession(ctx context.Context, tx *sqlx.Tx, tables []string, old, id string) error {
	var have, merge bool
	if err := tx.GetContext(ctx, &have, `SELECT EXISTS (SELECT 1 FROM sessions WHERE id = $1)`, old); err != nil {
		return err
	}
	if err := tx.GetContext(ctx, &merge, `SELECT EXISTS (SELECT 1 FROM sessions WHERE id = $1)`, id); err != nil {
		return err
	}
	// The arguments that name the old key go verbatim: the connection
	// would redact them into the new one, and match nothing.
	o := verbatim(old)
	switch {
	case have && !merge:
		if _, err := tx.ExecContext(ctx, `INSERT INTO sessions (`+sessionColumns+`)
			SELECT $1, source, project, git_branch, title, model, context_window, context_tokens,
				started_at, last_at, messages, compactions, tool_calls, host, cost_usd, lines_added, lines_removed
			FROM sessions WHERE id = $2`, id, o); err != nil {
			return fmt.Errorf("copy session: %w", err)
		}
	case have && merge:
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET
			messages = messages + (SELECT messages FROM sessions WHERE id = $1),
			compactions = compactions + (SELECT compactions FROM sessions WHERE id = $1),
			tool_calls = tool_calls + (SELECT tool_calls FROM sessions WHERE id = $1)
			WHERE id = $2`, o, id); err != nil {
			return fmt.Errorf("merge session: %w", err)
		}
	}
	for _, t := range tables {
		if t == "resume_states" || t == "forgotten" {
			// A resume state is dropped by the rescan anyway; a forgotten
			// id is one row, kept once.
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE session_id = $1 AND EXISTS (SELECT 1 FROM `+t+` WHERE session_id = $2)`, o, id); err != nil {
				return fmt.Errorf("%s: %w", t, err)
			}
		} else if u, ok := uniqueWith[t]; ok {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE session_id = $1 AND `+u+` IN (SELECT `+u+` FROM `+t+` WHERE session_id = $2)`, o, id); err != nil {
				return fmt.Errorf("%s: %w", t, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE `+t+` SET session_id = $1 WHERE session_id = $2`, id, o); err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
	}
	if have {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = $1`, o); err != nil {
			return fmt.Errorf("drop the old session row: %w", err)
		}
	}
	return nil
}

// rekeyColumn redacts a key column of table that no other row names: a
// key whose redacted form is there already is dropped.
func (r rescanner) rekeyColumn(ctx context.Context, tx *sqlx.Tx, table, column string) (int, int, error) {
	var keys []string
	if err := tx.SelectContext(ctx, &keys, `SELECT DISTINCT `+column+` FROM `+table); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", table, err)
	}
	changed, found := 0, 0
	for _, old := range keys {
		k, n := r.Redact(old)
		if k == old {
			continue
		}
		o := verbatim(old)
		var there bool
		if err := tx.GetContext(ctx, &there, `SELECT EXISTS (SELECT 1 FROM `+table+` WHERE `+column+` = $1)`, k); err != nil {
			return 0, 0, err
		}
		q := `UPDATE ` + table + ` SET ` + column + ` = $1 WHERE ` + column + ` = $2`
		args := []any{k, o}
		if there && table != "session_marks" {
			q, args = `DELETE FROM `+table+` WHERE `+column+` = $1`, []any{o}
		} else if table == "session_marks" {
			if _, err := tx.ExecContext(ctx, `DELETE FROM session_marks WHERE name = $1 AND session_id IN
				(SELECT session_id FROM session_marks WHERE name = $2)`, o, k); err != nil {
				return 0, 0, err
			}
		}
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return 0, 0, fmt.Errorf("%s: %w", table, err)
		}
		changed, found = changed+1, found+n
	}
	return changed, found, nil
}

// rewriteFile redacts the file at old (a handoff's Markdown) in place and,
// when its redacted path differs, moves it there. A file that is gone (or
// another machine's) is nothing to do.
func (r rescanner) rewriteFile(old, path string) error {
	if old == "" {
		return nil
	}
	b, err := os.ReadFile(old)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return nil
	}
	if err != nil {
		return err
	}
	red, _ := redactValue(r.Redactor, string(b))
	if red != string(b) || path != old {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		if err := renameio.WriteFile(path, []byte(red), 0o600); err != nil {
			return err
		}
	}
	if path != old {
		if err := os.Remove(old); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		// Its folders too, named after the session and the project, once
		// empty (os.Remove leaves a folder with anything in it).
		for dir, i := filepath.Dir(old), 0; i < 2 && os.Remove(dir) == nil; dir, i = filepath.Dir(dir), i+1 {
		}
	}
	return nil
}
