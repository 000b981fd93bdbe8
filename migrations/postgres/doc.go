// Package postgres holds the PostgreSQL ledger's schema as goose SQL
// migrations (goose's postgres dialect), embedded in the binary. It is the
// SQLite schema of the folder above in PostgreSQL's terms: identity ids,
// timestamptz times, a tsvector column with a GIN index in place of each
// FTS5 table, and a host on every session. Its versions are its own.
package postgres
