package store

import (
	"strconv"
	"strings"
)

// The store's statements are written once, in SQL that SQLite and
// PostgreSQL both read as it is: nothing rewrites a statement at run time.
// What the two backends do differently is their dialect's (dialect.go).
//
// Parameters are numbered, $1, $2, ...: PostgreSQL's own form, and one
// SQLite reads as a named parameter, which the modernc driver binds to the
// argument of that number ($N used twice is one argument). In a statement
// both read, a parameter is never followed by "(" or "::": SQLite would
// take them for part of its name. Rows are upserted with ON CONFLICT, new
// ids come back with RETURNING, and the cursors' column "offset", a
// reserved word in PostgreSQL, is quoted.

// query is a statement being built, with its arguments in order.
type query struct {
	sql  strings.Builder
	args []any
}

// add appends text to the statement.
func (q *query) add(text string) { q.sql.WriteString(text) }

// arg adds an argument and returns its parameter ($1 for the first).
func (q *query) arg(v any) string {
	q.args = append(q.args, v)
	return "$" + strconv.Itoa(len(q.args))
}

// String is the statement built so far.
func (q *query) String() string { return q.sql.String() }

// placeholders is a list of n parameters, numbered from $1: "$1, $2, $3".
func placeholders(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteString(", ")
		}
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(i))
	}
	return b.String()
}
