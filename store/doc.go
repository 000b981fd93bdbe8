// Package store is ledger's database: sessions, messages, handoffs,
// compactions, notes and ingest cursors, with full-text indexes. It is the
// only package that writes SQL; callers use its methods, never a database
// handle. Open chooses the backend once from the location: a SQLite file
// (sqlite.go: FTS5, WAL, immediate transactions) or a team ledger on a
// PostgreSQL server (postgres.go: tsvector columns, an advisory write
// lock), each an unexported dialect (dialect.go) that owns what the two do
// differently. Every other statement is written once, with numbered
// parameters both drivers bind (statement.go). Kind names an error's kind,
// whichever backend said it.
//
// The methods return domain structs (Session, Compaction, Hit,
// compact.Message...), scanned from private row shapes, with one rule for
// what the ledger does not know: a time is the zero time.Time (the writers
// store zero as NULL), a string "", and a count or cost where zero is a
// value a nil pointer (*int64, *compact.Cost). Every time is in UTC
// (pgx reads TIMESTAMPTZ in the local zone). No sql.Null* leaves the
// package.
package store
