package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/jmoiron/sqlx"

	"github.com/agentledger/ledger/store/secrets"
)

// pgDriverName is the database/sql driver the PostgreSQL backend opens:
// pgx's, behind a thin layer that bounds each round trip, redacts what it
// writes and passes bools as SQLite stores them. It passes statements as
// they are written: nothing rewrites SQL at run time (statement.go).
const pgDriverName = "ledger-pgx"

func init() {
	sql.Register(pgDriverName, pgDriver{})
	sqlx.BindDriver(pgDriverName, sqlx.DOLLAR)
}

// pgDriver opens connections whose writes are redacted with redactor (see
// redactdriver.go); the registered one redacts nothing.
type pgDriver struct{ redactor *secrets.Redactor }

func (d pgDriver) Open(name string) (driver.Conn, error) {
	c, err := d.OpenConnector(name)
	if err != nil {
		return nil, err
	}
	return c.Connect(context.Background())
}

// A server that accepts a connection and never answers, or stops
// answering after the connection is made, must not hang ledger: a hook,
// an MCP tool call, a command. So every connection attempt ends after its
// connect_timeout (default 10 s, covering the dial, TLS, the startup and
// authentication), and every round trip after it (a statement and the
// reading of its rows, a begin, a commit, a ping) ends after the
// server's statement_timeout (default 60 s, which the server applies to
// statements that run too long) and answerGrace more, when the server has
// said nothing: a statement's context then ends, pgx closes the
// connection, and the error says the server did not answer. TCP
// keepalives (every 15 s) find a peer that is gone while a connection
// waits. Both timeouts are the URL's, as libpq reads them; 0 is no limit.
const (
	defaultConnectTimeout   = 10 * time.Second
	defaultStatementTimeout = time.Minute
	answerGrace             = 5 * time.Second
	keepAlive               = 15 * time.Second
	// pgMigrationTimeout bounds a migration of the schema, which runs
	// without a statement_timeout.
	pgMigrationTimeout = 30 * time.Minute
)

// NoAnswerError is a PostgreSQL server that did not answer in time.
type NoAnswerError struct {
	Wait time.Duration // what was waited
	What string        // what it said nothing to
}

func (e *NoAnswerError) Error() string {
	return fmt.Sprintf("the PostgreSQL server did not answer within %v (%s)", e.Wait, e.What)
}

// withTimeouts gives a PostgreSQL URL ledger's default timeouts where it
// sets none.
func withTimeouts(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	if !q.Has("connect_timeout") {
		q.Set("connect_timeout", strconv.Itoa(int(defaultConnectTimeout/time.Second)))
	}
	if !q.Has("statement_timeout") {
		q.Set("statement_timeout", strconv.FormatInt(defaultStatementTimeout.Milliseconds(), 10))
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// pgDuration reads a PostgreSQL time setting: milliseconds, or a number
// with a unit (us, ms, s, min, h, d). ok is false when it cannot.
func pgDuration(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	i := strings.IndexFunc(v, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := v, "ms"
	if i >= 0 {
		num, unit = v[:i], strings.TrimSpace(v[i:])
	}
	f, err := strconv.ParseFloat(num, 64)
	units := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second, "min": time.Minute, "h": time.Hour, "d": 24 * time.Hour}
	if err != nil || units[unit] == 0 {
		return 0, false
	}
	return time.Duration(f * float64(units[unit])), true
}

func (d pgDriver) OpenConnector(name string) (driver.Connector, error) {
	cfg, err := pgx.ParseConfig(name)
	if err != nil {
		return nil, err
	}
	c := pgConnector{connect: cfg.ConnectTimeout, answer: defaultStatementTimeout + answerGrace, redactor: d.redactor}
	if v, ok := cfg.RuntimeParams["statement_timeout"]; ok {
		if d, ok := pgDuration(v); ok {
			c.answer = 0
			if d > 0 {
				c.answer = d + answerGrace
			}
		}
	}
	if !strings.Contains(name, "default_query_exec_mode") {
		// One round trip per statement, not two: pgx's default prepares
		// each new statement (Parse, Describe) before it runs it, and
		// nearly every statement of a ledger process is new to its
		// connection. The server infers the parameters' types as it does
		// a literal's. Statements the store prepares itself (a writer's
		// insert) are still prepared once and run many times.
		cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	}
	dial := &net.Dialer{Timeout: cfg.ConnectTimeout,
		KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: keepAlive, Interval: keepAlive, Count: 4}}
	cfg.DialFunc = dial.DialContext
	c.base = stdlib.GetConnector(*cfg)
	return c, nil
}

type pgConnector struct {
	base            driver.Connector
	connect, answer time.Duration
	redactor        *secrets.Redactor
}

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	if c.connect > 0 {
		// pgx bounds the whole connection by connect_timeout; this bounds
		// the name lookup before it too.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.connect+time.Second)
		defer cancel()
	}
	conn, err := c.base.Connect(ctx)
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded {
			return nil, &NoAnswerError{Wait: c.connect, What: "connect_timeout"}
		}
		return nil, err
	}
	return &pgConn{c: conn.(*stdlib.Conn), answer: c.answer, redactor: c.redactor, used: time.Now()}, nil
}

func (c pgConnector) Driver() driver.Driver { return pgDriver{c.redactor} }

// pgConn is a pgx connection that passes bools as 0 and 1, as SQLite stores them, gives every round trip
// a deadline (see defaultStatementTimeout), and redacts what it writes
// (redactArgs).
type pgConn struct {
	c        *stdlib.Conn
	answer   time.Duration
	redactor *secrets.Redactor
	used     time.Time // when it connected, or was last reset for reuse
	// copying, when set, is closed once the copy in flight (copyFrom)
	// has ended, with copyErr.
	copying chan struct{}
	copyErr error
}

// settle waits for the copy in flight, if any, and returns its error:
// whatever uses the connection next settles it first, so that the server
// takes in a batch of rows while the client reads the next.
func (p *pgConn) settle() error {
	if p.copying == nil {
		return nil
	}
	<-p.copying
	p.copying = nil
	err := p.copyErr
	p.copyErr = nil
	return err
}

// answerWaitKey is the context key of a statement's own answer wait (see
// withAnswerWait).
type answerWaitKey struct{}

// withAnswerWait gives the statements run with ctx their own answer wait
// (0: none), for the few that may run long on purpose.
func withAnswerWait(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, answerWaitKey{}, d)
}

// bound is ctx with the deadline of one round trip.
func (p *pgConn) bound(ctx context.Context) (context.Context, time.Duration, context.CancelFunc) {
	d := p.answer
	if v, ok := ctx.Value(answerWaitKey{}).(time.Duration); ok {
		d = v
	}
	if d <= 0 {
		return ctx, 0, func() {}
	}
	bctx, cancel := context.WithTimeout(ctx, d)
	return bctx, d, cancel
}

// silent is err, or a NoAnswerError when the round trip's own deadline
// ended it (not its caller's context).
func silent(ctx, bctx context.Context, d time.Duration, err error) error {
	if err != nil && d > 0 && ctx.Err() == nil && bctx.Err() == context.DeadlineExceeded {
		what := fmt.Sprintf("its statement_timeout, %v, and %v more", d-answerGrace, answerGrace)
		if d <= answerGrace {
			what = "the wait given"
		}
		return &NoAnswerError{Wait: d, What: what}
	}
	return err
}

func (p *pgConn) Prepare(query string) (driver.Stmt, error) {
	return p.PrepareContext(context.Background(), query)
}

func (p *pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if err := p.settle(); err != nil {
		return nil, err
	}
	bctx, d, cancel := p.bound(ctx)
	defer cancel()
	st, err := p.c.PrepareContext(bctx, query)
	if err != nil {
		return nil, silent(ctx, bctx, d, err)
	}
	return pgStmt{st, p, writes(query)}, nil
}

func (p *pgConn) Close() error {
	p.settle()
	return p.c.Close()
}

func (p *pgConn) Begin() (driver.Tx, error) {
	return p.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx begins a transaction on pgx directly: stdlib's would commit
// with the context of its begin, whose deadline is long gone by then.
func (p *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if err := p.settle(); err != nil {
		return nil, err
	}
	if p.c.Conn().IsClosed() {
		return nil, driver.ErrBadConn
	}
	var o pgx.TxOptions
	switch sql.IsolationLevel(opts.Isolation) {
	case sql.LevelDefault:
	case sql.LevelReadCommitted:
		o.IsoLevel = pgx.ReadCommitted
	case sql.LevelRepeatableRead, sql.LevelSnapshot:
		o.IsoLevel = pgx.RepeatableRead
	case sql.LevelSerializable:
		o.IsoLevel = pgx.Serializable
	default:
		return nil, fmt.Errorf("unsupported isolation: %v", opts.Isolation)
	}
	if opts.ReadOnly {
		o.AccessMode = pgx.ReadOnly
	}
	bctx, d, cancel := p.bound(ctx)
	defer cancel()
	tx, err := p.c.Conn().BeginTx(bctx, o)
	if err != nil {
		return nil, silent(ctx, bctx, d, err)
	}
	return pgTx{tx, p}, nil
}

// pgTx ends a transaction within the answer wait.
type pgTx struct {
	tx pgx.Tx
	p  *pgConn
}

// Commit commits, once the copy in flight is in; a failed copy aborted
// the transaction, which is rolled back.
func (t pgTx) Commit() error {
	if err := t.p.settle(); err != nil {
		t.end(t.tx.Rollback)
		return err
	}
	return t.end(t.tx.Commit)
}

func (t pgTx) Rollback() error {
	t.p.settle()
	return t.end(t.tx.Rollback)
}

func (t pgTx) end(f func(context.Context) error) error {
	ctx := context.Background()
	bctx, d, cancel := t.p.bound(ctx)
	defer cancel()
	return silent(ctx, bctx, d, f(bctx))
}

func (p *pgConn) Ping(ctx context.Context) error {
	if err := p.settle(); err != nil {
		return err
	}
	bctx, d, cancel := p.bound(ctx)
	defer cancel()
	// stdlib calls every failed ping a bad connection, which database/sql
	// tries twice more: a server that does not answer is said so once.
	return silent(ctx, bctx, d, p.c.Ping(bctx))
}

func (p *pgConn) ResetSession(ctx context.Context) error {
	// stdlib pings a connection idle for more than a second before it is
	// used again, but counts a new connection as idle since ever: each
	// statement of a short process waited on a ping of the connection the
	// one before had just used. Idle here counts from the connection's
	// start.
	if err := p.settle(); err != nil {
		return driver.ErrBadConn
	}
	now := time.Now()
	if now.Sub(p.used) < time.Second {
		p.used = now
		if p.c.Conn().IsClosed() || p.c.Conn().PgConn().TxStatus() != 'I' {
			return driver.ErrBadConn
		}
		return nil
	}
	p.used = now
	bctx, _, cancel := p.bound(ctx)
	defer cancel()
	return p.c.ResetSession(bctx)
}

func (p *pgConn) CheckNamedValue(nv *driver.NamedValue) error {
	if checkVerbatim(nv) == nil {
		return nil
	}
	return p.c.CheckNamedValue(nv)
}
func (p *pgConn) IsValid() bool {
	if p.settle() != nil {
		return false
	}
	return !p.c.Conn().IsClosed()
}

func (p *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if err := p.settle(); err != nil {
		return nil, err
	}
	a := pgArgs(redactArgs(p.redactor, writes(query), args))
	bctx, d, cancel := p.bound(ctx)
	defer cancel()
	res, err := p.c.ExecContext(bctx, query, a)
	return res, silent(ctx, bctx, d, err)
}

func (p *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if err := p.settle(); err != nil {
		return nil, err
	}
	a := pgArgs(redactArgs(p.redactor, writes(query), args))
	bctx, d, cancel := p.bound(ctx)
	rows, err := p.c.QueryContext(bctx, query, a)
	if err != nil {
		cancel()
		return nil, silent(ctx, bctx, d, err)
	}
	return newRows(rows, ctx, bctx, d, cancel), nil
}

// newRows wraps rows of stdlib (their column types included) so that their
// answer wait ends when they are closed.
func newRows(rows driver.Rows, ctx, bctx context.Context, d time.Duration, cancel context.CancelFunc) driver.Rows {
	r, ok := rows.(*stdlib.Rows)
	if !ok {
		return closeRows{rows, cancel}
	}
	return &pgRows{r, ctx, bctx, d, cancel}
}

// closeRows ends a context when its rows are closed.
type closeRows struct {
	driver.Rows
	cancel context.CancelFunc
}

func (r closeRows) Close() error {
	defer r.cancel()
	return r.Rows.Close()
}

// pgRows are a query's rows, read within its answer wait, which ends when
// they are closed.
type pgRows struct {
	*stdlib.Rows
	ctx, bctx context.Context
	d         time.Duration
	cancel    context.CancelFunc
}

func (r *pgRows) Next(dest []driver.Value) error {
	return silent(r.ctx, r.bctx, r.d, r.Rows.Next(dest))
}

func (r *pgRows) Close() error {
	defer r.cancel()
	return r.Rows.Close()
}

// pgStmt is a prepared statement whose bool arguments go as 0 and 1, run
// within the answer wait, whose writes are redacted.
type pgStmt struct {
	driver.Stmt
	p     *pgConn
	write bool
}

func (s pgStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if err := s.p.settle(); err != nil {
		return nil, err
	}
	bctx, d, cancel := s.p.bound(ctx)
	defer cancel()
	res, err := s.Stmt.(driver.StmtExecContext).ExecContext(bctx, pgArgs(redactArgs(s.p.redactor, s.write, args)))
	return res, silent(ctx, bctx, d, err)
}

func (s pgStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	if err := s.p.settle(); err != nil {
		return nil, err
	}
	bctx, d, cancel := s.p.bound(ctx)
	rows, err := s.Stmt.(driver.StmtQueryContext).QueryContext(bctx, pgArgs(redactArgs(s.p.redactor, s.write, args)))
	if err != nil {
		cancel()
		return nil, silent(ctx, bctx, d, err)
	}
	return newRows(rows, ctx, bctx, d, cancel), nil
}

func pgArgs(args []driver.NamedValue) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, a := range args {
		a.Ordinal = i + 1
		a.Name = ""
		if b, ok := a.Value.(bool); ok {
			a.Value = int64(0)
			if b {
				a.Value = int64(1)
			}
		}
		out[i] = a
	}
	return out
}

// copyFrom copies rows into table (COPY ... FROM STDIN) within the answer
// wait, redacted as every write of the connection is: verbatim values go
// as they are, any other string with its secrets replaced, bools as 0 and
// 1 (see pgArgs). Where the client computes the table's tsvector
// (pgClientTSV), it is copied too, made from the text as it is stored:
// with its secrets replaced.
//
// The copy goes on while the caller reads on, each row made as the copy
// takes it in; whatever uses the connection next waits for it and fails
// with its error (settle). rows are the copy's from then on.
func (p *pgConn) copyFrom(ctx context.Context, table string, columns []string, rows [][]any) error {
	if err := p.settle(); err != nil {
		return err
	}
	tsvOf := -1
	if col, ok := pgClientTSV[table]; ok {
		tsvOf = slices.Index(columns, col)
	}
	copied := columns
	if tsvOf >= 0 {
		copied = append(slices.Clip(columns), "tsv")
	}
	args := make([]driver.NamedValue, len(columns))
	next := 0
	src := pgx.CopyFromFunc(func() ([]any, error) {
		if next == len(rows) {
			return nil, nil
		}
		row := rows[next]
		next++
		if len(row) != len(columns) {
			return nil, fmt.Errorf("%d values for %d columns", len(row), len(columns))
		}
		for j, v := range row {
			args[j] = driver.NamedValue{Ordinal: j + 1, Value: v}
		}
		vals := make([]any, len(row), len(copied))
		for j, a := range pgArgs(redactArgs(p.redactor, true, args)) {
			vals[j] = a.Value
		}
		if tsvOf >= 0 {
			text, ok := vals[tsvOf].(string)
			if !ok {
				return nil, fmt.Errorf("%s is %T, not text", columns[tsvOf], vals[tsvOf])
			}
			vals = append(vals, pgTSVector(text))
		}
		return vals, nil
	})
	bctx, d, cancel := p.bound(ctx)
	done := make(chan struct{})
	p.copying = done
	go func() {
		defer close(done)
		defer cancel()
		if _, err := p.c.Conn().CopyFrom(bctx, pgx.Identifier{table}, copied, src); err != nil {
			p.copyErr = fmt.Errorf("copy into %s: %w", table, silent(ctx, bctx, d, err))
		}
	}()
	return nil
}
