// Package agentconfig edits the configuration files of the agents ledger
// plugs into (today Claude Code's settings.json hooks) in place: only
// ledger's own entries are added or removed, and every other byte of the
// user's file (indentation, key order, escapes, trailing newline) stays as
// it was, so that install then uninstall gives the file back unchanged.
package agentconfig
