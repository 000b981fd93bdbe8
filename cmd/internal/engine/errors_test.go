package engine

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentledger/ledger/store"
)

// TestKind: the engine's own errors have their kinds (an invalid request,
// a block), as the store's do; anything else has none.
func TestKind(t *testing.T) {
	t.Parallel()
	_, badTime := ParseTime("last tuesday", time.Now())
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"search filter", CheckSearch("", "robot", 1), ErrInvalid},
		{"query length", CheckQuery(string(make([]rune, MaxQuery+1))), ErrInvalid},
		{"time", fmt.Errorf("--since %w", badTime), ErrInvalid},
		{"block", BlockError{Reason: "run /clear"}, ErrBlocked},
		{"not found", fmt.Errorf("no session: %w", ErrNotFound), ErrNotFound},
		{"ambiguous", &store.AmbiguousError{Prefix: "a", Candidates: []string{"a1", "a2"}}, ErrAmbiguous},
		{"failure", errors.New("disk I/O error"), nil},
		{"nil", nil, nil},
	} {
		if got := Kind(tc.err); got != tc.want {
			t.Errorf("%s: Kind(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
