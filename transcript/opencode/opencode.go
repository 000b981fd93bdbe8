package opencode

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the SQLite driver, registered as "sqlite"

	"github.com/agentledger/ledger/transcript"
)

// DB is an OpenCode or Kilo database opened read-only.
type DB struct {
	db     *sql.DB
	format transcript.Format
	path   string
	// events: the database has event_sequence, whose seq is bumped at every
	// change of a session (OpenCode 1.18's sync events); else the change
	// mark is the session's time_updated.
	events bool
}

// ErrNotDatabase is returned by Open for a file that is not an OpenCode or
// Kilo database (no session, message and part tables).
var ErrNotDatabase = errors.New("not an OpenCode or Kilo database")

// Open opens the database at path read-only (see the package doc), as
// format f (transcript.FormatOpenCode or FormatKilo), and checks that it
// holds the tables the reader reads.
func Open(ctx context.Context, path string, f transcript.Format) (*DB, error) {
	var last error
	for _, immutable := range []bool{false, true} {
		db, err := sql.Open("sqlite", readDSN(path, immutable))
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
		// One connection: a read is one transaction at a time, and the
		// database is another program's.
		db.SetMaxOpenConns(1)
		d := &DB{db: db, format: f, path: path}
		if err = d.check(ctx); err == nil {
			return d, nil
		}
		db.Close()
		last = err
		if errors.Is(err, ErrNotDatabase) || !cannotWrite(err) {
			break
		}
	}
	return nil, fmt.Errorf("open %s: %w", path, last)
}

// readDSN is a read-only connection string: mode=ro, which sees what the
// agent commits (WAL included) and takes no lock the agent's writer waits
// for; or, where SQLite cannot keep its shared-memory index beside the
// file (a read-only folder), immutable, which reads the file as it is.
// busy_timeout covers the moments a WAL checkpoint or recovery holds the
// database.
func readDSN(path string, immutable bool) string {
	u := url.URL{Scheme: "file", Opaque: (&url.URL{Path: path}).EscapedPath()}
	dsn := u.String() + "?mode=ro&_pragma=busy_timeout(2000)&_txlock=deferred"
	if immutable {
		dsn += "&immutable=1"
	}
	return dsn
}

// cannotWrite tells whether err is SQLite unable to open the database for
// want of writing beside it (SQLITE_READONLY, SQLITE_CANTOPEN).
func cannotWrite(err error) bool {
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		switch coded.Code() & 0xff {
		case 8, 14:
			return true
		}
	}
	return false
}

// check reads which tables the database has. Each must be a plain table,
// one that returns what is stored: a generated column or a virtual table
// computes what it returns as it is read, and a file of a few KB could
// make it return gigabytes (OpenCode's and Kilo's tables are plain).
func (d *DB) check(ctx context.Context) error {
	rows, err := d.db.QueryContext(ctx, `SELECT name, coalesce(sql, '') FROM sqlite_master WHERE type = 'table' AND name IN ('session', 'message', 'part', 'event_sequence')`)
	if err != nil {
		if strings.Contains(err.Error(), "file is not a database") {
			return ErrNotDatabase
		}
		return err
	}
	defer rows.Close()
	n := 0
	var names []string
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			return err
		}
		if !strings.HasPrefix(strings.ToUpper(strings.TrimSpace(def)), "CREATE TABLE") {
			return fmt.Errorf("%w (table %s is not a plain table)", ErrNotDatabase, name)
		}
		names = append(names, name)
		if name == "event_sequence" {
			d.events = true
		} else {
			n++
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	if n != 3 {
		return ErrNotDatabase
	}
	for _, name := range names {
		var computed int
		// hidden is 2 or 3 for a generated column (1: a virtual table's).
		if err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_xinfo(?) WHERE hidden != 0`, name).Scan(&computed); err != nil {
			return err
		}
		if computed > 0 {
			return fmt.Errorf("%w (table %s has generated columns)", ErrNotDatabase, name)
		}
	}
	return nil
}

// Close closes the database.
func (d *DB) Close() error { return d.db.Close() }

// Format is the format the database was opened as.
func (d *DB) Format() transcript.Format { return d.format }

// Session is a session row, with its change mark.
type Session struct {
	ID        string
	ParentID  string // a subagent's session: the session that started it
	Directory string
	Title     string
	Created   int64 // ms
	// Mark changes whenever the session does: its event sequence number, or
	// its time_updated.
	Mark int64
}

// Sessions lists the sessions, oldest first.
func (d *DB) Sessions(ctx context.Context) ([]Session, error) {
	mark := `s.time_updated`
	join := ``
	if d.events {
		mark = `coalesce(e.seq, s.time_updated)`
		join = ` LEFT JOIN event_sequence e ON e.aggregate_id = s.id`
	}
	rows, err := d.db.QueryContext(ctx, `SELECT s.id, coalesce(s.parent_id, ''), s.directory, s.title, s.time_created, `+mark+
		` FROM session s`+join+` ORDER BY s.time_created, s.id`)
	if err != nil {
		return nil, fmt.Errorf("read sessions: %w", err)
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		var s Session
		if err := rows.Scan(&s.ID, &s.ParentID, &s.Directory, &s.Title, &s.Created, &s.Mark); err != nil {
			return nil, fmt.Errorf("read sessions: %w", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read sessions: %w", err)
	}
	return out, nil
}

// maxDepth bounds how far Root follows parents: a cycle in parent_id must
// not loop.
const maxDepth = 16

// Root is the session that a session's records go to: its own, or for a
// subagent's session (parent_id), the top session that started it, whose
// sidechain the subagent is. parents maps session ids to their parent.
func Root(id string, parents map[string]string) string {
	for range maxDepth {
		p := parents[id]
		if p == "" {
			return id
		}
		id = p
	}
	return id
}

// Cursor is how far a session has been read. Messages are read in the
// order of (time_created, id), which is the order OpenCode creates them
// in: After is the last one read. One not settled when met (an assistant
// message still streaming, a user message whose parts are not written
// yet) is kept in Pending and read again until it is; past maxPending the
// oldest is given up (a process killed mid-message never completes it).
type Cursor struct {
	// Mark is the session's change mark when it was read.
	Mark    int64    `json:"mark"`
	Created int64    `json:"created"`
	After   string   `json:"after"`
	Pending []string `json:"pending,omitempty"`
	// Last is the uuid of the last message read, the next one's parent.
	Last string `json:"last,omitempty"`
	// Context is the context in use at the last usage read: a following
	// compaction's pre-compaction tokens.
	Context int64 `json:"context,omitempty"`
}

// maxPending bounds Cursor.Pending.
const maxPending = 32

// Read reads what is new in session s since cur: it calls fn with each
// record, in order, and returns the cursor to store with them and the
// reasons of the rows it skipped as bad input. root is the ledger session
// the records belong to (Root); a subagent's session (root != s.ID) gives
// sidechain messages. It reads page after page (ReadUntil), each a read
// transaction.
func (d *DB) Read(ctx context.Context, s Session, root string, cur Cursor, fn func(transcript.Record) error) (Cursor, []string, error) {
	var all []string
	for {
		next, skips, more, err := d.ReadUntil(ctx, s, root, cur, time.Time{}, fn)
		all = append(all, skips...)
		if err != nil || !more {
			return next, all, err
		}
		cur = next
	}
}

// pageRows and pageBytes bound a page, what one ReadUntil reads: at most
// pageRows message rows, and no row past the first once it holds
// pageBytes of rows and parts. A session's rows are the agent's: a long
// one is neither held in memory at once nor written in one go.
//
// maxValue is the most of one row's data a read holds: OpenCode keeps a
// message's or a part's JSON in one value, and a value larger than this
// (a hostile database's, or a tool output gone wild) is passed over,
// said in a skip, never read into memory (the JSONL readers' bound on a
// line, 12 MB, is the same).
const (
	pageRows  = 128
	pageBytes = 1 << 20
	maxValue  = 12 << 20
)

// boundedData selects a row's data and whether it is over its two
// arguments' maxValue, then as NULL: octet_length reads a value's size
// from its record's header, not the value.
const boundedData = `CASE WHEN octet_length(data) > ? THEN NULL ELSE data END, coalesce(octet_length(data) > ?, 0)`

// ReadUntil reads the next page of what is new in session s since cur, as
// Read does, in one read transaction; more tells whether the session has
// rows past it. The page ends early once stopAt (zero: never) has passed,
// having taken at least one message past the cursor: a hook's budget sees
// the read progress however long the unread part of a session is, and the
// next read goes on from the cursor returned. The cursor of a page that is
// not the last keeps cur's change mark, so that the session still reads as
// changed.
func (d *DB) ReadUntil(ctx context.Context, s Session, root string, cur Cursor, stopAt time.Time, fn func(transcript.Record) error) (next Cursor, skips []string, more bool, err error) {
	tx, err := d.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return cur, nil, false, fmt.Errorf("read session %s: %w", s.ID, err)
	}
	defer tx.Rollback()
	// The pending rows come again first: they were met before the cursor.
	rows, err := d.messages(ctx, tx, s.ID, cur, pageRows)
	if err != nil {
		return cur, nil, false, fmt.Errorf("read session %s: %w", s.ID, err)
	}
	next = cur
	next.Pending = nil
	dec := decoder{session: root, cur: &next, skip: func(r string) { skips = append(skips, r) }}
	if root != s.ID {
		dec.agentID = s.ID
	}
	var recs []transcript.Record
	if root == s.ID {
		info := &transcript.SessionInfo{ID: root, Project: s.Directory, Time: msTime(s.Created)}
		if !defaultTitle(s.Title) {
			info.Title = s.Title
		}
		recs = append(recs, transcript.Record{Session: info})
	}
	held, taken := 0, false
	for i, r := range rows {
		switch {
		case r.Created > next.Created || r.Created == next.Created && r.ID > next.After:
			next.Created, next.After = r.Created, r.ID
			taken = true
		case !slices.Contains(cur.Pending, r.ID):
			continue // read before (SQLite orders it otherwise than its value reads)
		}
		if r.tooBig {
			dec.skip(fmt.Sprintf("message %s: over %d MB: skipped", r.ID, maxValue>>20))
			continue
		}
		if r.Parts, err = parts(ctx, tx, r.ID, dec.skip); err != nil {
			return cur, nil, false, fmt.Errorf("read session %s: %w", s.ID, err)
		}
		held += len(r.Data)
		for _, p := range r.Parts {
			held += len(p.Data)
		}
		if !Settled(r) {
			next.Pending = append(next.Pending, r.ID)
		} else {
			recs = dec.decode(r, recs)
		}
		if taken && i < len(rows)-1 && (held >= pageBytes || !stopAt.IsZero() && time.Now().After(stopAt)) {
			more = true
			break
		}
	}
	// A full page that took nothing past the cursor is the last: rows
	// SQLite orders otherwise than their values read (a text
	// time_created, say) must not make a reader loop.
	more = more || len(rows) == pageRows && taken
	if !more {
		next.Mark = s.Mark
	}
	if len(next.Pending) > maxPending {
		next.Pending = next.Pending[len(next.Pending)-maxPending:]
	}
	tx.Rollback() // the page is read: hold nothing while fn writes
	for _, rec := range recs {
		if err := fn(rec); err != nil {
			return cur, skips, false, err
		}
	}
	return next, skips, more, nil
}

// messages reads, in order, at most limit of the session's messages
// after the cursor, and the pending ones again.
func (d *DB) messages(ctx context.Context, tx *sql.Tx, session string, cur Cursor, limit int) ([]Row, error) {
	q := `SELECT id, time_created, data FROM message WHERE session_id = ? AND (time_created > ? OR (time_created = ? AND id > ?)`
	args := []any{session, cur.Created, cur.Created, cur.After}
	if len(cur.Pending) > 0 {
		q += ` OR id IN (?` + strings.Repeat(`, ?`, len(cur.Pending)-1) + `)`
		for _, id := range cur.Pending {
			args = append(args, id)
		}
	}
	q = `SELECT id, time_created, ` + boundedData + strings.TrimPrefix(q, `SELECT id, time_created, data`)
	rows, err := tx.QueryContext(ctx, q+`) ORDER BY time_created, id LIMIT ?`, append(append([]any{maxValue, maxValue}, args...), limit)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Row
	for rows.Next() {
		var r Row
		if err := rows.Scan(&r.ID, &r.Created, &r.Data, &r.tooBig); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// parts reads a message's parts, in order; a part over maxValue is left
// out, said in skip.
func parts(ctx context.Context, tx *sql.Tx, message string, skip func(string)) ([]PartRow, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, time_created, `+boundedData+` FROM part WHERE message_id = ? ORDER BY id`, maxValue, maxValue, message)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []PartRow
	for rows.Next() {
		var p PartRow
		var tooBig bool
		if err := rows.Scan(&p.ID, &p.Created, &p.Data, &tooBig); err != nil {
			return nil, err
		}
		if tooBig {
			skip(fmt.Sprintf("part %s: over %d MB: skipped", p.ID, maxValue>>20))
			continue
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// defaultTitle tells whether a title is the placeholder OpenCode gives a
// session until its title is made ("New session - <time>", "Child session
// - <time>").
func defaultTitle(t string) bool {
	return t == "" || strings.HasPrefix(t, "New session - ") || strings.HasPrefix(t, "Child session - ")
}
