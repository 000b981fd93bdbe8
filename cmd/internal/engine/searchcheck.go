package engine

import "fmt"

// CheckSearch checks a search's filters as every front door takes them:
// a kind and a role from their lists ("" for any), a limit of at least 1.
// Its errors name the filter without dashes; a command line adds them.
func CheckSearch(kind, role string, limit int) error {
	switch kind {
	case "", "message", "handoff", "compaction", "note":
	default:
		return fmt.Errorf("kind %q: want message, handoff, compaction or note", kind)
	}
	switch role {
	case "", "user", "assistant", "system", "tool":
	default:
		return fmt.Errorf("role %q: want user, assistant, system or tool", role)
	}
	if limit < 1 {
		return fmt.Errorf("limit must be at least 1, not %d", limit)
	}
	return nil
}
