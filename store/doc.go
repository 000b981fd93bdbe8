// Package store is ledger's SQLite database: sessions, messages, handoffs,
// compactions and ingest cursors, with FTS5 indexes kept in step by
// triggers. It is the only package that writes SQL; callers use its methods,
// never a database handle, and those of ingest (Writer), search and forget
// are contracts a PostgreSQL backend could meet.
package store
