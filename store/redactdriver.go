package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"strings"

	"github.com/agentledger/ledger/store/secrets"
)

// Redaction is a property of the store's connection, not of its callers:
// every string argument of every statement that writes (INSERT, UPDATE)
// passes through the store's Redactor on its way to the database, on
// SQLite and on PostgreSQL alike, whatever method wrote it and whatever
// column it fills: message text, cursor state, receipts, notes, session
// ids, branches, paths. A string that reads as a JSON document (a cursor's
// reader state, a handoff's sections) is redacted string by string and
// stays JSON (secrets.Redactor.RedactJSON); any other, as text.
//
// A caller that has redacted a value already, with more knowledge of its
// structure than a string has (a message prepared by Writer.Prepare: its
// blocks, its tool inputs decoded), or that writes a value ledger computed
// and that holds no recorded text (a hash), says so by passing it as a
// verbatim: only the store makes one.
//
// Reads (SELECT) are never redacted: a search must find what it is asked,
// and a command that only reads must never load the rules. DELETE is not
// either: it writes no text, and must match what an older ledger stored.

// verbatim is a string the store writes as it is (see above).
type verbatim string

// writes tells whether a statement writes text: INSERT or UPDATE.
func writes(query string) bool {
	q := strings.TrimLeft(query, " \t\r\n")
	for strings.HasPrefix(q, "--") {
		nl := strings.IndexByte(q, '\n')
		if nl < 0 {
			return false
		}
		q = strings.TrimLeft(q[nl+1:], " \t\r\n")
	}
	if len(q) < 6 {
		return false
	}
	switch strings.ToUpper(q[:6]) {
	case "INSERT", "UPDATE":
		return true
	}
	return false
}

// redactArgs makes args what the driver must see, in place (database/sql
// makes them anew for each call): verbatim values plain strings, and, when
// the statement writes and r is set, every other string redacted.
func redactArgs(r *secrets.Redactor, write bool, args []driver.NamedValue) []driver.NamedValue {
	for i, a := range args {
		switch x := a.Value.(type) {
		case verbatim:
			args[i].Value = string(x)
		case string:
			if write && r != nil {
				if red, _ := redactValue(r, x); red != x {
					args[i].Value = red
				}
			}
		}
	}
	return args
}

// redactValue is s with its secrets replaced, and how many: a JSON
// document string by string, anything else as text.
func redactValue(r *secrets.Redactor, s string) (string, int) {
	if t := strings.TrimLeft(s, " \t\r\n"); t != "" && (t[0] == '{' || t[0] == '[') {
		return r.RedactJSON(s)
	}
	return r.Redact(s)
}

// checkVerbatim keeps a verbatim argument as it is, for redactArgs to
// unwrap; any other is left to database/sql's default conversion.
func checkVerbatim(nv *driver.NamedValue) error {
	if _, ok := nv.Value.(verbatim); ok {
		return nil
	}
	return driver.ErrSkip
}

// redactingConn is a SQLite connection whose writes are redacted.
type redactingConn struct {
	driver.Conn
	redactor *secrets.Redactor
}

var errNoContext = errors.New("store: the sqlite connection lacks a context method")

func (c *redactingConn) CheckNamedValue(nv *driver.NamedValue) error { return checkVerbatim(nv) }

func (c *redactingConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *redactingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	p, ok := c.Conn.(driver.ConnPrepareContext)
	if !ok {
		return nil, errNoContext
	}
	st, err := p.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return &redactingStmt{Stmt: st, write: writes(query), redactor: c.redactor}, nil
}

func (c *redactingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := c.Conn.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	return e.ExecContext(ctx, query, redactArgs(c.redactor, writes(query), args))
}

func (c *redactingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := c.Conn.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	// INSERT ... RETURNING is a query that writes.
	return q.QueryContext(ctx, query, redactArgs(c.redactor, writes(query), args))
}

func (c *redactingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	b, ok := c.Conn.(driver.ConnBeginTx)
	if !ok {
		return nil, errNoContext
	}
	return b.BeginTx(ctx, opts)
}

func (c *redactingConn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *redactingConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *redactingConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// redactingStmt is a prepared statement whose writes are redacted.
type redactingStmt struct {
	driver.Stmt
	write    bool
	redactor *secrets.Redactor
}

func (s *redactingStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	e, ok := s.Stmt.(driver.StmtExecContext)
	if !ok {
		return nil, errNoContext
	}
	return e.ExecContext(ctx, redactArgs(s.redactor, s.write, args))
}

func (s *redactingStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := s.Stmt.(driver.StmtQueryContext)
	if !ok {
		return nil, errNoContext
	}
	return q.QueryContext(ctx, redactArgs(s.redactor, s.write, args))
}
