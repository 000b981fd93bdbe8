// Command ledger gives AI coding agents a memory that survives the context
// window: it ingests their transcripts into a SQLite ledger, writes short
// structured handoffs instead of long compaction summaries, and rebuilds
// fresh-session context from them.
//
// It is the command-line front door: one thin file per command, which
// parses flags, calls one method of package engine (or a plain read of
// package store) and renders text or JSON. It is the only package that
// imports cobra.
package main
