package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/store/secrets"
)

// SessionPatch is what a transcript says about a session. Empty fields say
// nothing and leave what is stored.
type SessionPatch struct {
	ID            string
	Project       string
	GitBranch     string
	Title         string
	Model         string
	ContextWindow int64
	// Usage, when set, is the session's latest API usage (Codex token_count).
	Usage *compact.Usage
	// UsageOf, when set with Usage, is the uuid of the session's message
	// whose API response Usage is: the usage is kept on it too, as a
	// Claude response's is, for the session's context plot.
	UsageOf string
	// Cost, when set, is the session's cost so far as its agent reports it
	// (Claude Code's cost-state): it replaces the one on record.
	Cost *compact.Cost
	Time time.Time
}

// Counts is what a write added.
type Counts struct {
	Sessions    int `json:"sessions"`
	Messages    int `json:"messages"`
	Compactions int `json:"compactions"`
	// Redacted is how many secrets were replaced in what was added.
	Redacted int `json:"redacted"`
}

// Writer writes ingested records in one immediate transaction, on a
// connection of its own with the ingest's settings (see NewWriter). One
// transaction may hold several files: SaveCursor records how far each was
// read, and Commit makes them durable together with the records, so an
// interrupted ingest loses nothing and duplicates nothing.
type Writer struct {
	tx       *sqlx.Tx
	done     func() // after the transaction (beginWrite)
	firstID  int64  // messages with a larger id are this transaction's
	source   string
	counts   Counts
	sessions map[string]*sessionState
	stmts    writerStmts
	redactor *secrets.Redactor // nil: store secrets as they come
	d        dialect
	host     string // written on the sessions it creates
	copied   copyBuffer
	// prepared are the statements run so far, by their text, where the
	// dialect parses a statement's text at every call (cachesStatements):
	// a compaction's four statements were parsed each time, 4-5% of an
	// ingest. The transaction closes them.
	prepared map[string]*sqlx.Stmt
}

// copyBuffer holds the messages of sessions new to the ledger until they
// are copied in at once (the dialect's rowCopier; none on SQLite): such a
// message cannot be there already, so the writer knows its id and that it
// is added without asking the database.
type copyBuffer struct {
	copier rowCopier // nil: every message is inserted
	rows   [][]any   // id, then insertColumns
	at     map[int64]int
	ids    []int64 // reserved, not yet used
	next   int     // how many ids to reserve next
	sent   int     // rows copied so far
}

// copyBatch is the most rows a copyBuffer holds before it copies them.
const copyBatch = 2048

// sessionState is what the writer keeps per session for the length of a
// transaction, flushed to the session row at commit.
type sessionState struct {
	forgotten   bool // the user forgot this session: write nothing of it
	fresh       bool // no message of it is older than this transaction
	nextSeq     int64
	started     time.Time
	last        time.Time
	added       int64 // messages added
	compactions int64 // compactions added
	toolCalls   int64 // tool calls added
	toolTotal   int64 // the session's tool calls so far
	toolAtLast  int64 // tool calls at the latest compaction
	pendingPost bool  // a compaction waits for its post_tokens
	context     int64 // latest context tokens (-1: none seen)
	// titled is set once the session has a title, stored or to be
	// stored; until then request holds the first request the user typed,
	// the title of a session whose agent gives it none.
	titled      bool
	request     string
	sideRequest string // the first request a subagent was given
	patch       SessionPatch
	// usageLine is, per API response, the message of this transaction
	// that holds the response's usage (its latest line).
	usageLine map[string]int64
	// lastTimed is the time of the latest message added (in file order)
	// that had one: a compaction's without one (boundaryTime).
	lastTimed time.Time
	// uuids are the messages of a fresh session copied in (copyBuffer):
	// a line read twice is added once, as ON CONFLICT would.
	uuids map[string]struct{}
	// latest is the latest time of the session's messages, stored or
	// added; reorder is set when a message older than it was added (a
	// subagent's file read after its session's, a transcript whose lines
	// are out of time order): Commit then numbers the session's messages
	// again (renumber).
	latest  time.Time
	reorder bool
}

type writerStmts struct {
	insertMessage insertFunc // the dialect's (insertMessage)
	clearUsage    *sqlx.Stmt
	clearUsageID  *sqlx.Stmt
}

// NewWriter begins an ingest transaction for records of the given source
// format ("claude" or "codex"; SetSource changes it between files).
func (s *Store) NewWriter(ctx context.Context, source string) (*Writer, error) {
	tx, done, copier, err := s.d.beginIngest(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("begin ingest: %w", err)
	}
	w := &Writer{tx: tx, done: done, source: source, sessions: map[string]*sessionState{}, redactor: s.redactor, d: s.d, host: s.host,
		copied: copyBuffer{copier: copier, next: 16}}
	fail := func(what string, err error) (*Writer, error) {
		w.Rollback()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := tx.GetContext(ctx, &w.firstID, `SELECT coalesce(max(id), 0) FROM messages`); err != nil {
		return fail("read last message id", err)
	}
	if w.stmts.insertMessage, err = s.d.insertMessage(ctx, tx); err != nil {
		return fail("prepare insert message", err)
	}
	if w.stmts.clearUsage, err = tx.PreparexContext(ctx, `
		UPDATE messages SET input_tokens = NULL, cache_creation_tokens = NULL, cache_read_tokens = NULL, output_tokens = NULL
		WHERE session_id = $1 AND response_id = $2 AND response_id <> '' AND id <> $3 AND output_tokens IS NOT NULL`); err != nil {
		return fail("prepare clear usage", err)
	}
	if w.stmts.clearUsageID, err = tx.PreparexContext(ctx, `
		UPDATE messages SET input_tokens = NULL, cache_creation_tokens = NULL, cache_read_tokens = NULL, output_tokens = NULL
		WHERE id = $1`); err != nil {
		return fail("prepare clear usage", err)
	}
	return w, nil
}

// stmt is the statement of query in the writer's transaction, prepared
// once where the dialect caches statements, else nil.
func (w *Writer) stmt(ctx context.Context, query string) (*sqlx.Stmt, error) {
	if !w.d.cachesStatements() {
		return nil, nil
	}
	if st, ok := w.prepared[query]; ok {
		return st, nil
	}
	st, err := w.tx.PreparexContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if w.prepared == nil {
		w.prepared = map[string]*sqlx.Stmt{}
	}
	w.prepared[query] = st
	return st, nil
}

// exec runs a statement that returns no rows in the writer's transaction.
func (w *Writer) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := w.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return w.tx.ExecContext(ctx, query, args...)
	}
	return st.ExecContext(ctx, args...)
}

// get runs a query in the writer's transaction and scans its one row into
// dest (sqlx's Get).
func (w *Writer) get(ctx context.Context, dest any, query string, args ...any) error {
	st, err := w.stmt(ctx, query)
	if err != nil {
		return err
	}
	if st == nil {
		return w.tx.GetContext(ctx, dest, query, args...)
	}
	return st.GetContext(ctx, dest, args...)
}

// SetSource sets the source format ("claude" or "codex") of the sessions
// the next records create.
func (w *Writer) SetSource(source string) { w.source = source }

// Rollback abandons the transaction; after Commit it does nothing.
func (w *Writer) Rollback() error {
	err := w.tx.Rollback()
	w.release()
	if err == sql.ErrTxDone {
		return nil
	}
	return err
}

// release gives the transaction's connection back, once.
func (w *Writer) release() {
	if w.done != nil {
		w.done()
		w.done = nil
	}
}

// Counts is what the writer has added so far.
func (w *Writer) Counts() Counts { return w.counts }

// session loads (or creates) the per-transaction state of a session.
func (w *Writer) session(ctx context.Context, id string) (*sessionState, error) {
	if st, ok := w.sessions[id]; ok {
		return st, nil
	}
	st := &sessionState{context: -1}
	var row struct {
		Seq        sql.NullInt64 `db:"seq"`
		ToolCalls  int64         `db:"tool_calls"`
		ToolAtLast int64         `db:"tool_at_last"`
		Pending    bool          `db:"pending"`
		Titled     bool          `db:"titled"`
	}
	err := w.get(ctx, &row, `
		SELECT (SELECT max(seq) FROM messages WHERE session_id = s.id) AS seq,
			s.title <> '' AS titled,
			s.tool_calls,
			coalesce((SELECT sum(tool_calls) FROM compactions WHERE session_id = s.id), 0) AS tool_at_last,
			EXISTS (SELECT 1 FROM compactions WHERE session_id = s.id AND post_tokens IS NULL) AS pending
		FROM sessions s WHERE s.id = $1`, id)
	switch {
	case err == sql.ErrNoRows:
		if err := w.get(ctx, &st.forgotten, `SELECT EXISTS (SELECT 1 FROM forgotten WHERE session_id = $1)`, id); err != nil {
			return nil, fmt.Errorf("check forgotten %s: %w", id, err)
		}
		if st.forgotten {
			break
		}
		if _, err := w.exec(ctx, `INSERT INTO sessions (id, source, host) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, id, w.source, w.host); err != nil {
			return nil, fmt.Errorf("insert session %s: %w", id, err)
		}
		st.fresh = true
		w.counts.Sessions++
	case err != nil:
		return nil, fmt.Errorf("load session %s: %w", id, err)
	default:
		st.nextSeq = row.Seq.Int64 + 1
		if !row.Seq.Valid {
			st.nextSeq = 0
		}
		st.fresh = !row.Seq.Valid
		st.toolTotal = row.ToolCalls
		st.toolAtLast = row.ToolAtLast
		st.pendingPost = row.Pending
		st.titled = row.Titled
		if row.Seq.Valid {
			if st.latest, err = w.latestTime(ctx, id); err != nil {
				return nil, err
			}
		}
	}
	w.sessions[id] = st
	return st, nil
}

// StoredID is a session id as the writer stores it (Store.StoredKey): the
// key of its rows, and of its state in this transaction.
func (w *Writer) StoredID(id string) string {
	if w.redactor == nil {
		return id
	}
	id, _ = w.redactor.Redact(id)
	return id
}

// redact replaces the secrets of s, counting them.
func (w *Writer) redact(s *string) {
	if w.redactor != nil && *s != "" {
		var n int
		*s, n = w.redactor.Redact(*s)
		w.counts.Redacted += n
	}
}

// PatchSession records what a transcript line says about a session.
func (w *Writer) PatchSession(ctx context.Context, p SessionPatch) error {
	if p.ID == "" {
		return nil
	}
	ctx = w.d.rowContext(ctx)
	p.ID = w.StoredID(p.ID)
	st, err := w.session(ctx, p.ID)
	if err != nil || st.forgotten {
		return err
	}
	for _, f := range []*string{&p.Project, &p.GitBranch, &p.Title, &p.Model} {
		w.redact(f)
	}
	// The project is where the session started: an agent that cds into a
	// sub-folder is still working on the same project.
	if st.patch.Project == "" {
		st.patch.Project = p.Project
	}
	merge(&st.patch.GitBranch, p.GitBranch)
	merge(&st.patch.Title, p.Title)
	merge(&st.patch.Model, p.Model)
	if p.ContextWindow > 0 {
		st.patch.ContextWindow = p.ContextWindow
	}
	if p.Cost != nil {
		c := *p.Cost
		st.patch.Cost = &c
	}
	st.see(p.Time)
	if p.Usage != nil {
		if err := w.sawUsage(ctx, p.ID, st, *p.Usage); err != nil {
			return err
		}
		if p.UsageOf != "" && !w.bufferedUsage(verbatim(p.ID), verbatim(w.StoredID(p.UsageOf)), p.Usage) {
			in, cacheCreation, cacheRead, out := usageArgs(p.Usage)
			if _, err := w.exec(ctx, `UPDATE messages SET input_tokens = $1, cache_creation_tokens = $2,
				cache_read_tokens = $3, output_tokens = $4 WHERE session_id = $5 AND uuid = $6`,
				in, cacheCreation, cacheRead, out, verbatim(p.ID), verbatim(w.StoredID(p.UsageOf))); err != nil {
				return fmt.Errorf("keep usage on %s: %w", p.UsageOf, err)
			}
		}
	}
	return nil
}

func merge(dst *string, v string) {
	if v != "" {
		*dst = v
	}
}

func (st *sessionState) see(t time.Time) {
	if !storable(t) {
		return
	}
	if st.started.IsZero() || t.Before(st.started) {
		st.started = t
	}
	if t.After(st.last) {
		st.last = t
	}
}

// sawUsage notes the context in use at an API response: the session's
// meter, and the post-compaction figure of a compaction waiting for one.
func (w *Writer) sawUsage(ctx context.Context, session string, st *sessionState, u compact.Usage) error {
	st.context = u.ContextTokens()
	if !st.pendingPost {
		return nil
	}
	if _, err := w.exec(ctx, `UPDATE compactions SET post_tokens = $1 WHERE session_id = $2 AND post_tokens IS NULL`,
		st.context, verbatim(session)); err != nil {
		return fmt.Errorf("set post tokens: %w", err)
	}
	st.pendingPost = false
	return nil
}

// PreparedMessage is a message made ready to store: its secrets redacted
// (unless the store's redaction is off), in its blocks, search text, ids
// and model, its search text and blocks JSON computed. Only
// Writer.Prepare makes one; AddPrepared writes it as it is (verbatim).
type PreparedMessage struct {
	m        compact.Message
	text     string
	blocks   any
	redacted int
}

// Prepare redacts a message and computes what AddPrepared stores. It does
// not touch the transaction, so an ingest runs it on its reading
// goroutine, beside the one that writes: redaction then costs no time.
// It is safe to call concurrently with the Writer's other methods.
func (w *Writer) Prepare(m compact.Message) PreparedMessage {
	// Secrets go before anything is stored or indexed: the text, the
	// blocks (tool inputs and results) and a compaction summary all come
	// from the redacted message.
	p := PreparedMessage{m: m}
	if w.redactor != nil {
		p.m, p.text, p.redacted = w.redactor.RedactMessage(m)
		// Its ids and model too: a transcript may put a secret anywhere,
		// and the session id is the key of the session's rows (StoredID).
		for _, f := range []*string{&p.m.SessionID, &p.m.UUID, &p.m.ParentUUID, &p.m.Model, &p.m.ResponseID, &p.m.AgentID} {
			var n int
			*f, n = w.redactor.Redact(*f)
			p.redacted += n
		}
	} else {
		p.text = m.SearchText()
	}
	p.blocks = blocksJSON(p.m, p.text)
	return p
}

// Size is about how many bytes the prepared message holds: its texts,
// tool inputs, search text and blocks JSON.
func (p PreparedMessage) Size() int {
	n := len(p.text)
	if s, ok := p.blocks.(string); ok {
		n += len(s)
	}
	for _, b := range p.m.Blocks {
		n += len(b.Text) + len(b.Input)
	}
	return n
}

// Stored is the message as Messages reads it back once stored (its Usage
// aside: the writer keeps an API response's usage on its last line only,
// which it cannot know yet).
func (p PreparedMessage) Stored() compact.Message {
	m := p.m
	if p.blocks == nil {
		m.Blocks = []compact.Block{{Kind: compact.BlockText, Text: p.text}}
	}
	if !m.Time.IsZero() {
		m.Time = m.Time.UTC()
	}
	return m
}

// Fresh tells whether the session had no messages before this
// transaction: then those it added are all it has.
func (w *Writer) Fresh(sessionID string) bool {
	st, ok := w.sessions[w.StoredID(sessionID)]
	return ok && st.fresh
}

// LastSeq is the seq of the session's last message as of this
// transaction (-1: none).
func (w *Writer) LastSeq(sessionID string) int64 {
	if st, ok := w.sessions[w.StoredID(sessionID)]; ok {
		return st.nextSeq - 1
	}
	return -1
}

// AddMessage stores a message unless the session already has its uuid.
// It reports whether the message was new.
func (w *Writer) AddMessage(ctx context.Context, m compact.Message) (bool, error) {
	return w.AddPrepared(ctx, w.Prepare(m))
}

// AddPrepared stores a prepared message unless the session already has its
// uuid. It reports whether the message was new.
func (w *Writer) AddPrepared(ctx context.Context, p PreparedMessage) (bool, error) {
	m, text, blocks := p.m, p.text, p.blocks
	if m.SessionID == "" || m.UUID == "" {
		return false, fmt.Errorf("message without session or uuid")
	}
	ctx = w.d.rowContext(ctx)
	st, err := w.session(ctx, m.SessionID)
	if err != nil || st.forgotten {
		return false, err
	}
	in, cacheCreation, cacheRead, out := usageArgs(m.Usage)
	if b, ok := blocks.(string); ok {
		blocks = verbatim(b)
	}
	// Prepare redacted every string of the message: it goes as it is,
	// with no second scan on the writing goroutine (redactdriver.go).
	row := []any{ // in the order of insertColumns
		verbatim(m.SessionID),  // session_id
		verbatim(m.UUID),       // uuid
		verbatim(m.ParentUUID), // parent_uuid
		st.nextSeq,             // seq
		string(m.Role),         // role
		string(m.Kind()),       // kind
		verbatim(m.ToolName()), // tool_name
		verbatim(text),         // text
		blocks,                 // blocks
		nullTime(m.Time),       // at
		verbatim(m.Model),      // model
		verbatim(m.ResponseID), // response_id
		in,                     // input_tokens
		cacheCreation,          // cache_creation_tokens
		cacheRead,              // cache_read_tokens
		out,                    // output_tokens
		m.Meta,                 // meta
		m.CompactSummary,       // compact_summary
		m.Sidechain,            // sidechain
		verbatim(m.AgentID),    // agent_id
	}
	var id int64
	var added bool
	if w.copied.copier != nil && st.fresh {
		id, added, err = w.copyRow(ctx, st, m.UUID, row)
	} else {
		id, added, err = w.insertRow(ctx, row...)
	}
	if err != nil {
		return false, fmt.Errorf("insert message %s: %w", m.UUID, err)
	}
	if !added {
		return false, nil
	}
	st.nextSeq++
	st.added++
	w.counts.Messages++
	w.counts.Redacted += p.redacted
	st.see(m.Time)
	if storable(m.Time) {
		st.lastTimed = m.Time.UTC()
		if st.lastTimed.Before(st.latest) {
			st.reorder = true
		} else {
			st.latest = st.lastTimed
		}
	} else if !st.latest.IsZero() {
		st.reorder = true // its place is after its own thread's latest (rare)
	}
	if !st.titled && m.Role == compact.RoleUser && !m.CompactSummary && m.Kind() == compact.BlockText &&
		(!m.Meta || strings.HasPrefix(text, "<command-")) { // a slash command the user ran is Meta
		if r := handoff.RequestTitle(text); r != "" && !m.Sidechain {
			st.request, st.titled = r, true
		} else if r != "" && st.sideRequest == "" {
			st.sideRequest = r // a session of subagent messages only
		}
	}
	for _, b := range m.Blocks {
		if b.Kind == compact.BlockToolUse {
			st.toolCalls++
			st.toolTotal++
		}
	}
	if m.Usage != nil && m.ResponseID != "" {
		if err := w.keepUsage(ctx, st, m, id); err != nil {
			return false, fmt.Errorf("dedupe usage: %w", err)
		}
	}
	if m.Usage != nil && !m.Sidechain {
		if err := w.sawUsage(ctx, m.SessionID, st, *m.Usage); err != nil {
			return false, err
		}
	}
	if m.CompactSummary {
		if err := w.linkSummary(ctx, m); err != nil {
			return false, err
		}
	}
	return true, nil
}

// insertRow runs the insert message statement: the new row's id, and
// whether it was added (not already there).
func (w *Writer) insertRow(ctx context.Context, args ...any) (int64, bool, error) {
	return w.stmts.insertMessage(ctx, args...)
}

// copyRow adds a message of a fresh session to the copy buffer, under an
// id reserved for it, unless the transaction added its uuid already.
func (w *Writer) copyRow(ctx context.Context, st *sessionState, uuid string, row []any) (int64, bool, error) {
	if _, dup := st.uuids[uuid]; dup {
		return 0, false, nil
	}
	b := &w.copied
	if len(b.ids) == 0 {
		// Ids are reserved 16, 32, ... 2,048 at a time: a small write
		// leaves no big gap in them (search windows count ids).
		ids, err := b.copier.reserveIDs(ctx, "messages", b.next)
		if err != nil {
			return 0, false, fmt.Errorf("reserve ids: %w", err)
		}
		b.ids, b.next = ids, min(2*b.next, copyBatch)
	}
	id := b.ids[0]
	b.ids = b.ids[1:]
	if st.uuids == nil {
		st.uuids = map[string]struct{}{}
	}
	st.uuids[uuid] = struct{}{}
	if b.at == nil {
		b.at = map[int64]int{}
	}
	b.at[id] = len(b.rows)
	b.rows = append(b.rows, append([]any{id}, row...))
	if len(b.rows) >= copyBatch {
		if err := w.flushCopy(ctx); err != nil {
			return 0, false, err
		}
	}
	return id, true, nil
}

// flushCopy copies the buffered messages in. It runs before anything reads
// the messages of the transaction back.
func (w *Writer) flushCopy(ctx context.Context) error {
	b := &w.copied
	if len(b.rows) == 0 {
		return nil
	}
	if err := b.copier.copyRows(ctx, "messages", copyColumns, b.rows); err != nil {
		return fmt.Errorf("copy messages: %w", err)
	}
	b.sent += len(b.rows)
	b.rows, b.at = nil, nil // the copy's now
	return nil
}

// copyColumns are the columns of a copied message row: its id, then
// insertColumns.
var copyColumns = func() []string {
	cols := []string{"id"}
	for _, c := range strings.Split(insertColumns, ",") {
		cols = append(cols, strings.TrimSpace(c))
	}
	return cols
}()

// bufferedUsage sets the usage of a message still in the copy buffer
// (a new session's, on PostgreSQL), reporting whether it found it there.
// The message is one of the latest: the buffer is searched from its end.
func (w *Writer) bufferedUsage(session, uuid verbatim, u *compact.Usage) bool {
	rows := w.copied.rows
	for i := len(rows) - 1; i >= 0; i-- {
		if rows[i][1] == session && rows[i][2] == uuid {
			in, cacheCreation, cacheRead, out := usageArgs(u)
			for c, v := range []any{in, cacheCreation, cacheRead, out} {
				rows[i][1+usageColumn+c] = v
			}
			return true
		}
	}
	return false
}

// usageColumn is the index of input_tokens in insertColumns; the other
// usage columns follow it.
var usageColumn = slices.Index(copyColumns, "input_tokens") - 1

// keepUsage keeps an API response's usage on its latest line only, so that
// sums count it once: one response spans several lines that each repeat
// it. The line that held it before is this transaction's (an update by
// id), or, the first time the transaction meets the response, one written
// earlier (a search by response; none when the session is new).
func (w *Writer) keepUsage(ctx context.Context, st *sessionState, m compact.Message, id int64) error {
	if prev, ok := st.usageLine[m.ResponseID]; ok {
		if i, ok := w.copied.at[prev]; ok {
			for c := range 4 { // still buffered: cleared there
				w.copied.rows[i][1+usageColumn+c] = nil
			}
		} else if _, err := w.stmts.clearUsageID.ExecContext(ctx, prev); err != nil {
			return err
		}
	} else if !st.fresh {
		// The prepared message's: redacted already.
		if _, err := w.stmts.clearUsage.ExecContext(ctx, verbatim(m.SessionID), verbatim(m.ResponseID), id); err != nil {
			return err
		}
	}
	if st.usageLine == nil {
		st.usageLine = map[string]int64{}
	}
	st.usageLine[m.ResponseID] = id
	return nil
}

// insertColumns are the columns AddPrepared fills, in the order of its
// arguments.
const insertColumns = `session_id, uuid, parent_uuid, seq, role, kind, tool_name, text, blocks, at,
	model, response_id, input_tokens, cache_creation_tokens, cache_read_tokens, output_tokens,
	meta, compact_summary, sidechain, agent_id`

// insertColumnCount is the number of insertColumns.
var insertColumnCount = strings.Count(insertColumns, ",") + 1

// usageArgs are a response's usage columns, NULL when it has none.
func usageArgs(u *compact.Usage) (in, cacheCreation, cacheRead, out any) {
	if u == nil {
		return nil, nil, nil, nil
	}
	return u.InputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens, u.OutputTokens
}

// nullTime is t in UTC, or NULL when it is not storable (unknown).
func nullTime(t time.Time) any {
	if !storable(t) {
		return nil
	}
	return t.UTC()
}

// storable reports whether t is a time the ledger keeps: not zero (the
// readers' unknown), and of a year both backends write and read back. A
// transcript's valid RFC 3339 time can be of year 10000 in UTC
// (9999-12-31T23:59:59-23:59): SQLite kept it as text no read parses, and
// every search and listing that met the row failed.
func storable(t time.Time) bool {
	y := t.UTC().Year()
	return !t.IsZero() && y >= 1 && y <= 9999
}

// positive is n, or NULL when it is not above 0 (unknown).
func positive(n int64) any {
	if n <= 0 {
		return nil
	}
	return n
}

// linkSummary attaches a compaction summary message to its compaction: the
// boundary it follows (its parent), else the session's latest compaction
// still without a summary.
//
// On PostgreSQL the summary's tsvector is written with it (textVector).
func (w *Writer) linkSummary(ctx context.Context, m compact.Message) error {
	// The prepared message's: redacted already.
	text := m.Text()
	set, args := "summary = $1", []any{verbatim(text), verbatim(m.SessionID), verbatim(m.ParentUUID)}
	if v, ok := w.d.textVector(text); ok {
		set, args = set+", tsv = $4", append(args, v)
	}
	_, err := w.exec(ctx, `
		UPDATE compactions SET `+set+`
		WHERE id = coalesce(
			(SELECT id FROM compactions WHERE session_id = $2 AND boundary_uuid = $3 AND summary = ''),
			(SELECT id FROM compactions WHERE session_id = $2 AND summary = '' ORDER BY at DESC, id DESC LIMIT 1))`,
		args...)
	if err != nil {
		return fmt.Errorf("link compaction summary: %w", err)
	}
	return nil
}

// hookMatchWindow is how long before a transcript's compact_boundary a
// PreCompact hook record of the same compaction may have been written, for
// a record that could not note the boundary's logical parent.
const hookMatchWindow = 10 * time.Minute

// AddBoundary records a compaction read from a transcript, unless it is
// already recorded. A record the PreCompact hook wrote for the same
// compaction (same session, no boundary yet, and the same last message
// before it, or else written shortly before) is completed instead of adding
// a second one: one compaction, one record.
func (w *Writer) AddBoundary(ctx context.Context, b compact.Boundary) (bool, error) {
	return w.addBoundary(ctx, b, nil)
}

// syncedRecord is what a push knows of a compaction beyond its boundary:
// the record as the ledger it comes from holds it.
type syncedRecord struct {
	Source string // "transcript" or "hook" (one the transcript completed)
	// ToolCalls are the calls before the compaction as its ledger counted
	// them: the writer's own count is of every message the push sent
	// before it, those after the compaction included.
	ToolCalls int64
	HandoffID *int64 // in the destination's ids; nil for none
}

// addBoundary is AddBoundary; with synced (a push), the record is added as
// its ledger holds it rather than matched with a hook record of the
// destination: the ledger it comes from made that match already.
func (w *Writer) addBoundary(ctx context.Context, b compact.Boundary, synced *syncedRecord) (bool, error) {
	if b.SessionID == "" || b.UUID == "" {
		return false, fmt.Errorf("compaction without session or uuid")
	}
	b.SessionID, b.UUID, b.LogicalParentUUID = w.StoredID(b.SessionID), w.StoredID(b.UUID), w.StoredID(b.LogicalParentUUID)
	st, err := w.session(ctx, b.SessionID)
	if err != nil || st.forgotten {
		return false, err
	}
	var exists bool
	if err := w.get(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM compactions WHERE session_id = $1 AND boundary_uuid = $2)`,
		b.SessionID, b.UUID); err != nil {
		return false, fmt.Errorf("find compaction: %w", err)
	}
	if exists {
		return false, nil
	}
	w.redact(&b.Summary)
	w.redact(&b.Trigger)
	st.see(b.Time)
	at, pre, post := b.Time.UTC(), positive(b.PreTokens), positive(b.PostTokens)
	if !storable(b.Time) {
		if at, err = w.boundaryTime(ctx, st, b.SessionID); err != nil {
			return false, err
		}
	}
	// A PreCompact record of the same compaction: the session's, without a
	// boundary yet, made for the same last message or else in the ten
	// minutes before the boundary (or the minute after); the one with the
	// same last message first, then the latest.
	var kept compact.Preserved
	if b.Preserved != nil {
		kept = *b.Preserved
	}
	if synced != nil {
		return w.insertBoundary(ctx, st, b, at, pre, post, kept, *synced)
	}
	res, err := w.exec(ctx, `
		UPDATE compactions SET boundary_uuid = $1, logical_parent_uuid = $2, trigger = $3,
			pre_tokens = coalesce($4, pre_tokens), post_tokens = coalesce($5, post_tokens),
			summary = CASE WHEN $6 <> '' THEN $6 ELSE summary END,
			preserved_head_uuid = $7, preserved_tail_uuid = $8, preserved_messages = $9
		WHERE id = (SELECT id FROM compactions
			WHERE session_id = $10 AND source = 'hook' AND boundary_uuid IS NULL
				AND (($2 <> '' AND logical_parent_uuid = $2) OR at BETWEEN $11 AND $12)
			ORDER BY logical_parent_uuid = $2 DESC, at DESC LIMIT 1)`,
		b.UUID, b.LogicalParentUUID, b.Trigger, pre, post, b.Summary, kept.HeadUUID, kept.TailUUID, kept.Messages,
		b.SessionID, at.Add(-hookMatchWindow), at.Add(time.Minute))
	if err != nil {
		return false, fmt.Errorf("complete hook compaction: %w", err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		st.pendingPost = st.pendingPost || post == nil
		return false, nil
	}
	return w.insertBoundary(ctx, st, b, at, pre, post, kept, syncedRecord{Source: "transcript", ToolCalls: st.toolTotal - st.toolAtLast})
}

// insertBoundary adds the compaction of a boundary, as rec says.
func (w *Writer) insertBoundary(ctx context.Context, st *sessionState, b compact.Boundary, at time.Time, pre, post any,
	kept compact.Preserved, rec syncedRecord) (bool, error) {
	var handoffID any
	if rec.HandoffID != nil {
		handoffID = *rec.HandoffID
	}
	if _, err := w.exec(ctx, `
		INSERT INTO compactions (session_id, boundary_uuid, logical_parent_uuid, at, trigger, pre_tokens, post_tokens, summary, source, tool_calls,
			preserved_head_uuid, preserved_tail_uuid, preserved_messages, handoff_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		b.SessionID, b.UUID, b.LogicalParentUUID, at, b.Trigger, pre, post, b.Summary, rec.Source, rec.ToolCalls,
		kept.HeadUUID, kept.TailUUID, kept.Messages, handoffID); err != nil {
		return false, fmt.Errorf("insert compaction: %w", err)
	}
	st.toolAtLast += rec.ToolCalls
	st.compactions++
	st.pendingPost = st.pendingPost || post == nil
	w.counts.Compactions++
	return true, nil
}

// boundaryTime is the time of a compaction whose transcript line has none
// the ledger can keep (compactions.at is never NULL, and year 1 sorted it
// before everything and showed it so): that of the message before it, its
// neighbour in the file, read in this transaction or stored before; in a
// session with no time at all, now, when it was read.
func (w *Writer) boundaryTime(ctx context.Context, st *sessionState, session string) (time.Time, error) {
	if !st.lastTimed.IsZero() {
		return st.lastTimed, nil
	}
	if err := w.flushCopy(ctx); err != nil {
		return time.Time{}, err
	}
	var at sql.NullTime
	err := w.get(ctx, &at, `SELECT at FROM messages WHERE session_id = $1 AND at IS NOT NULL ORDER BY seq DESC LIMIT 1`, session)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, fmt.Errorf("compaction time: %w", err)
	}
	if at.Valid {
		return at.Time.UTC(), nil
	}
	return time.Now().UTC(), nil
}

// A session's messages are numbered (seq, from 0) in time order: by their
// time, and in the order they were added (their id) where times are equal.
// A message without a time keeps its place after the messages of its own
// thread added before it (the main conversation's, or one subagent's): it
// sorts at the latest time among them. Added in time order (the usual
// case: each message no older than the session's latest), a message takes
// the next number; one older than the latest, or one without a time, makes
// Commit number the session again (renumber), so that every view (the web view, export, a
// search hit's neighbours) shows the same message under the same number,
// and time never goes backwards: a Claude Code compaction's summarizer
// writes its subagent's messages in a file of their own, read before or
// after the session's.

// messageOrder numbers a session's messages ($1) in that order, from 0:
// rows of (id, n). Both backends run it as written.
const messageOrder = `SELECT id, row_number() OVER (ORDER BY k NULLS FIRST, id) - 1 AS n FROM (
		SELECT id, coalesce(at, max(at) OVER (PARTITION BY sidechain, agent_id ORDER BY id)) AS k
		FROM messages WHERE session_id = $1) AS t`

// renumber numbers a session's messages again in time order, writing only
// the rows whose number changes.
func (w *Writer) renumber(ctx context.Context, session string) error {
	if _, err := w.exec(ctx, `UPDATE messages SET seq = r.n FROM (`+messageOrder+`) AS r
		WHERE messages.id = r.id AND messages.seq <> r.n`, verbatim(session)); err != nil {
		return fmt.Errorf("number messages of %s in time order: %w", session, err)
	}
	return nil
}

// latestTime is the latest time of a session's stored messages (zero:
// none has one): that of the last numbered message with a time.
func (w *Writer) latestTime(ctx context.Context, session string) (time.Time, error) {
	var at sql.NullTime
	err := w.get(ctx, &at, `SELECT at FROM messages WHERE session_id = $1 AND at IS NOT NULL ORDER BY seq DESC LIMIT 1`, verbatim(session))
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, fmt.Errorf("latest message time of %s: %w", session, err)
	}
	if !at.Valid {
		return time.Time{}, nil
	}
	return at.Time.UTC(), nil
}

// SaveCursor records how far a file was read, to be committed with the
// records read from it.
func (w *Writer) SaveCursor(ctx context.Context, c *Cursor) error {
	return saveCursor(ctx, w.tx, w.cursorRow(c))
}

// cursorRow is c as its row is keyed (the dialect's cursorKey).
func (w *Writer) cursorRow(c *Cursor) *Cursor {
	if c == nil {
		return c
	}
	key := w.d.cursorKey(w.host, c.Path)
	if key == c.Path {
		return c
	}
	row := *c
	row.Path = key
	return &row
}

// Commit flushes the session rows, indexes the messages the transaction
// added (in one statement: FTS5 writes an index segment per statement, and
// merges segments as they pile up), saves the cursor (if any) and commits.
func (w *Writer) Commit(ctx context.Context, c *Cursor) error {
	committed := false
	defer func() {
		// A Commit that failed before the end rolls back first: the
		// connection (the dialect's beginWrite's own) cannot be given back while
		// the transaction holds it, and would wait on it for good.
		if !committed {
			w.tx.Rollback()
		}
		w.release()
	}()
	if err := w.flushCopy(ctx); err != nil {
		return err
	}
	for id, st := range w.sessions {
		if st.forgotten {
			continue
		}
		if st.reorder {
			if err := w.renumber(ctx, id); err != nil {
				return err
			}
		}
		if err := w.flushSession(ctx, id, st); err != nil {
			return err
		}
	}
	if w.counts.Messages > 0 {
		if err := w.d.indexMessages(ctx, w.tx, w.firstID); err != nil {
			return fmt.Errorf("index messages: %w", err)
		}
	}
	if c != nil {
		if err := saveCursor(ctx, w.tx, w.cursorRow(c)); err != nil {
			return err
		}
	}
	err := w.tx.Commit()
	committed = true
	w.release()
	if err != nil {
		return fmt.Errorf("commit ingest: %w", err)
	}
	return nil
}

// flushSession writes what the transaction learnt of a session to its
// row: each fact the transcript stated replaces the stored one, the time
// range widens, and the counts grow by what was added.
func (w *Writer) flushSession(ctx context.Context, id string, st *sessionState) error {
	p := st.patch
	cost := p.Cost
	if cost == nil {
		cost = &compact.Cost{}
	} else {
		cost = &compact.Cost{USD: cost.USD, LinesAdded: cost.LinesAdded, LinesRemoved: cost.LinesRemoved}
	}
	hasCost := p.Cost != nil
	_, err := w.exec(ctx, `
		UPDATE sessions SET
			project = CASE WHEN project = '' AND $1 <> '' THEN $1 ELSE project END,
			git_branch = CASE WHEN $2 <> '' THEN $2 ELSE git_branch END,
			title = CASE WHEN $3 <> '' THEN $3 WHEN title = '' THEN $17 ELSE title END,
			model = CASE WHEN $4 <> '' THEN $4 ELSE model END,
			context_window = CASE WHEN $5 > 0 THEN $5 ELSE context_window END,
			context_tokens = CASE WHEN $6 >= 0 THEN $6 ELSE context_tokens END,
			cost_usd = CASE WHEN $7 = 1 THEN $8 ELSE cost_usd END,
			lines_added = CASE WHEN $7 = 1 THEN $9 ELSE lines_added END,
			lines_removed = CASE WHEN $7 = 1 THEN $10 ELSE lines_removed END,
			started_at = CASE WHEN started_at IS NULL OR $11 < started_at THEN coalesce($11, started_at) ELSE started_at END,
			last_at = CASE WHEN last_at IS NULL OR $12 > last_at THEN coalesce($12, last_at) ELSE last_at END,
			messages = messages + $13,
			compactions = compactions + $14,
			tool_calls = tool_calls + $15
		WHERE id = $16`,
		p.Project, p.GitBranch, p.Title, p.Model, p.ContextWindow, st.context,
		hasCost, cost.USD, cost.LinesAdded, cost.LinesRemoved,
		nullTime(st.started), nullTime(st.last), st.added, st.compactions, st.toolCalls, id, cmp.Or(st.request, st.sideRequest))
	if err != nil {
		return fmt.Errorf("update session %s: %w", id, err)
	}
	return nil
}

// blocksJSON keeps the structured content of a message that is more than
// one plain text block; a plain text message is all in its text column.
// Each block's part of the search text (see encodeBlocks) is not repeated.
func blocksJSON(m compact.Message, text string) any {
	if len(m.Blocks) == 0 || (len(m.Blocks) == 1 && m.Blocks[0].Kind == compact.BlockText) {
		return nil
	}
	b, err := encodeBlocks(m.Blocks, text)
	if err != nil {
		return nil
	}
	return string(b)
}

// HoldIngest returns a context in which the writers of one ingest
// (NewWriter) all run on one connection set up for them once, and release,
// to call once the last of them committed or rolled back: it gives the
// connection back with its usual settings. Writers made with another
// context, or after release, begin their own.
func (s *Store) HoldIngest(ctx context.Context) (context.Context, func(), error) {
	ctx, release, err := s.d.holdBulk(ctx, s.db)
	if err != nil {
		return ctx, release, fmt.Errorf("hold ingest connection: %w", err)
	}
	return ctx, release, nil
}
