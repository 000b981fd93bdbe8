package engine

import (
	"unicode/utf8"
)

// MaxQuery is the most characters a search query may have where it comes
// from elsewhere than the user's own command line (the MCP search tool,
// the web view): every word of a query is a full-text lookup, and a query
// of 20,000 words took seconds of CPU.
const MaxQuery = 1000

// CheckQuery checks a query's length against MaxQuery.
func CheckQuery(q string) error {
	if n := utf8.RuneCountInString(q); n > MaxQuery {
		return invalidf("the query has %d characters: at most %d characters", n, MaxQuery)
	}
	return nil
}

// CheckSearch checks a search's filters as every front door takes them:
// a kind and a role from their lists ("" for any), a limit of at least 1.
// Its errors name the filter without dashes; a command line adds them.
func CheckSearch(kind, role string, limit int) error {
	switch kind {
	case "", "message", "handoff", "compaction", "note":
	default:
		return invalidf("kind %q: want message, handoff, compaction or note", kind)
	}
	switch role {
	case "", "user", "assistant", "system", "tool":
	default:
		return invalidf("role %q: want user, assistant, system or tool", role)
	}
	if limit < 1 {
		return invalidf("limit must be at least 1, not %d", limit)
	}
	return nil
}
