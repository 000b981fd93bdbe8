// Package engine is ledger's core, shared by every front door (the command
// line, agent hooks, the MCP server, and later the web view): ingest a
// path or a hook's transcript, write a handoff with its compaction record,
// assemble resume context, read the live meter, and handle each hook event.
// It calls store, transcript, compact and handoff, and renders nothing: a
// front door turns its results into text or JSON.
package engine
