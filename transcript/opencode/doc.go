// Package opencode reads the sessions of OpenCode (opencode-ai) and of its
// fork Kilo CLI (@kilocode/cli) from their SQLite databases, read-only, as
// transcript records: the same messages, compaction boundaries and session
// facts the JSONL readers of package transcript yield.
//
// OpenCode keeps every session in one database in WAL mode,
// ~/.local/share/opencode/opencode.db (Kilo: ~/.local/share/kilo/kilo.db),
// which the agent writes while it runs. The reader opens it with mode=ro:
// it never copies, writes or locks it (in WAL mode a reader holds no lock
// a writer waits for), and keeps each read transaction to one session.
//
// Tables read (as of OpenCode 1.18.33 and Kilo 7.7.7):
//
//	session         id, parent_id (a subagent's session), directory (the
//	                cwd), title, time_created, time_updated
//	message         id, session_id, time_created, data: JSON
//	                {role, time {created, completed}, error, modelID, mode,
//	                summary, tokens {input, output, reasoning, cache {read,
//	                write}}, path {cwd}}
//	part            id, message_id, time_created, data: JSON {type, ...}
//	event_sequence  aggregate_id (a session), seq: bumped at every change
//	                of the session, the reader's change mark when present
//
// A compaction is a user message holding a `compaction` part, then an
// assistant message with mode "compaction" and summary true whose text is
// the summary.
//
// Each part is one transcript message (its id the uuid), as each content
// block is a line in Claude Code: text, reasoning (thinking), a tool part
// (a tool_use, then its result as a tool message, uuid <part id>/result).
// An assistant message is read once it is complete (time.completed or an
// error set), with its token usage on its parts; a user message once it
// has parts. What is not complete yet stays for a later read (see Cursor).
package opencode
