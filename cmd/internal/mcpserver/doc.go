// Package mcpserver is ledger as tools an agent calls over the Model
// Context Protocol (the official Go SDK): search, sessions, resume, handoff,
// audit, meter and note, each a thin layer over cmd/internal/engine, as the
// command line is. What it adds is what a model needs of a tool: a JSON
// schema and a description written for a model, structured output beside
// the text, a cap on every result with a cursor to page on, the ledger's
// text fenced as recorded data, and errors a model can act on.
//
// It reads through a store that SQLite keeps read-only; it writes only the
// ingest of what is new in a session's transcripts (before it answers about
// that session) and the notes the note tool records.
package mcpserver
