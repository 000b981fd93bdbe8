// Package transcript reads agent transcript formats (Claude Code JSONL and
// Codex CLI rollouts) as streams of compact messages, compaction boundaries
// and session facts, with the byte offset of every line so that callers can
// resume reading where they stopped.
package transcript
