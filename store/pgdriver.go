package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/jmoiron/sqlx"
)

// pgDriverName is the database/sql driver the PostgreSQL backend opens:
// pgx's, behind a thin layer that takes the store's statements as they are
// written for SQLite (see rewritePG). The store's SQL is written once: the
// few statements whose meaning differs (full text, pragmas) have a
// PostgreSQL version of their own beside the SQLite one.
const pgDriverName = "ledger-pgx"

func init() {
	sql.Register(pgDriverName, pgDriver{})
	// NamedExec and In make ? binds; rewritePG numbers them.
	sqlx.BindDriver(pgDriverName, sqlx.QUESTION)
}

type pgDriver struct{}

func (pgDriver) Open(name string) (driver.Conn, error) {
	c, err := pgDriver{}.OpenConnector(name)
	if err != nil {
		return nil, err
	}
	return c.Connect(context.Background())
}

func (pgDriver) OpenConnector(name string) (driver.Connector, error) {
	c, err := stdlib.GetDefaultDriver().(driver.DriverContext).OpenConnector(name)
	if err != nil {
		return nil, err
	}
	return pgConnector{c}, nil
}

type pgConnector struct{ base driver.Connector }

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &pgConn{conn.(*stdlib.Conn)}, nil
}

func (pgConnector) Driver() driver.Driver { return pgDriver{} }

// pgConn is a pgx connection that rewrites each statement (rewritePG) and
// passes bools as 0 and 1, as SQLite stores them.
type pgConn struct{ c *stdlib.Conn }

func (p *pgConn) Prepare(query string) (driver.Stmt, error) {
	return p.PrepareContext(context.Background(), query)
}

func (p *pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	q, _, err := rewritePG(query, nil)
	if err != nil {
		return nil, err
	}
	st, err := p.c.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	return pgStmt{st}, nil
}

func (p *pgConn) Close() error              { return p.c.Close() }
func (p *pgConn) Begin() (driver.Tx, error) { return p.c.Begin() }
func (p *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return p.c.BeginTx(ctx, opts)
}
func (p *pgConn) Ping(ctx context.Context) error              { return p.c.Ping(ctx) }
func (p *pgConn) ResetSession(ctx context.Context) error      { return p.c.ResetSession(ctx) }
func (p *pgConn) CheckNamedValue(nv *driver.NamedValue) error { return p.c.CheckNamedValue(nv) }
func (p *pgConn) IsValid() bool                               { return !p.c.Conn().IsClosed() }
func (p *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	q, a, err := rewritePG(query, args)
	if err != nil {
		return nil, err
	}
	return p.c.ExecContext(ctx, q, a)
}

func (p *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, a, err := rewritePG(query, args)
	if err != nil {
		return nil, err
	}
	return p.c.QueryContext(ctx, q, a)
}

// pgStmt is a prepared statement whose bool arguments go as 0 and 1.
type pgStmt struct{ driver.Stmt }

func (s pgStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.Stmt.(driver.StmtExecContext).ExecContext(ctx, pgArgs(args))
}

func (s pgStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, pgArgs(args))
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

// rewritePG turns a statement written for SQLite into PostgreSQL's: ? and
// :name parameters become $1, $2, ... (a name used twice is one
// parameter), with args put in that order, and the column offset, a
// reserved word in PostgreSQL, is quoted. String literals, quoted
// identifiers, $n parameters and :: casts are left as they are.
func rewritePG(query string, args []driver.NamedValue) (string, []driver.NamedValue, error) {
	var sb strings.Builder
	var out []driver.NamedValue
	named := map[string]int{}
	next := 0   // the next positional argument
	params := 0 // parameters numbered so far
	isWord := func(c byte) bool {
		return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	for i := 0; i < len(query); {
		c := query[i]
		switch {
		case c == '\'' || c == '"':
			end := strings.IndexByte(query[i+1:], c)
			if end < 0 {
				sb.WriteString(query[i:])
				i = len(query)
				continue
			}
			sb.WriteString(query[i : i+2+end])
			i += 2 + end
		case c == '-' && i+1 < len(query) && query[i+1] == '-':
			end := strings.IndexByte(query[i:], '\n')
			if end < 0 {
				end = len(query) - i
			}
			sb.WriteString(query[i : i+end])
			i += end
		case c == ':' && i+1 < len(query) && query[i+1] == ':':
			sb.WriteString("::")
			i += 2
		case c == '?':
			if args != nil {
				if next >= len(args) {
					return "", nil, fmt.Errorf("statement has more ? parameters than arguments")
				}
				out = append(out, args[next])
			}
			next++
			params++
			sb.WriteString("$" + strconv.Itoa(params))
			i++
		case c == ':' && i+1 < len(query) && isWord(query[i+1]) && (i == 0 || !isWord(query[i-1])):
			j := i + 1
			for j < len(query) && isWord(query[j]) {
				j++
			}
			name := query[i+1 : j]
			n, ok := named[name]
			if !ok {
				k := -1
				for ai, a := range args {
					if a.Name == name {
						k = ai
					}
				}
				if k < 0 {
					return "", nil, fmt.Errorf("statement parameter :%s has no argument", name)
				}
				out = append(out, args[k])
				params++
				n = params
				named[name] = n
			}
			sb.WriteString("$" + strconv.Itoa(n))
			i = j
		case isWord(c):
			j := i
			for j < len(query) && isWord(query[j]) {
				j++
			}
			if w := query[i:j]; w == "offset" && (i == 0 || query[i-1] != '$') {
				sb.WriteString(`"offset"`)
			} else {
				sb.WriteString(w)
			}
			i = j
		default:
			sb.WriteByte(c)
			i++
		}
	}
	if params == 0 {
		out = args // written with $n already
	}
	return sb.String(), pgArgs(out), nil
}
