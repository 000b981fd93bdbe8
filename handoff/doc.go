// Package handoff builds ledger's handoff: the short, structured note a
// fresh agent session needs to carry on where a long one stopped ("clear,
// don't compact"). It extracts the state of the work from a session's
// messages without an LLM (the agent's task trackers, every user request,
// decisions, errors still open, files really changed, the agent's last
// words), renders it as Markdown that fits a token budget and as JSON,
// parses the Markdown back, and assembles resume context.
//
// It is pure like package compact: no database, no command line, no files
// except those a caller hands in. What only the machine knows (the live
// state of a git checkout, notes the user recorded) comes in through
// ExtractOptions.
package handoff
