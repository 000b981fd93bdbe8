package engine

import (
	"testing"
	"time"
)

// TestStatusLineUnits: the status line writes tokens in thousands, a
// million-token window as "1.0M" and a count under a thousand as is; the
// handoff's age in its largest unit, and a handoff stamped ahead of this
// machine's clock as "0s".
func TestStatusLineUnits(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		s    Status
		want string
	}{
		{Status{Used: 800, Window: 200_000, AutoCompactAt: 167_000, HandoffAt: now.Add(-40 * time.Second)},
			"ctx 0% 800/200k · 166k to compact · handoff 40s ago"},
		{Status{Used: 450_000, Window: 1_000_000, HandoffAt: now.Add(-3*time.Hour - 59*time.Minute)},
			"ctx 45% 450k/1.0M · auto-compact off · handoff 3h ago"},
		{Status{Used: -1, Window: 1_000_000, AutoCompactAt: 967_000, HandoffAt: now.Add(-50 * time.Hour)},
			"ctx ?/1.0M · handoff 2d ago"},
		{Status{Used: -1, Window: 200_000, HandoffAt: now.Add(-30 * time.Hour)},
			"ctx ?/200k · auto-compact off · handoff 30h ago"},
		{Status{Used: 1_250_000, Window: 1_000_000, AutoCompactAt: 967_000, HandoffAt: now.Add(-12 * time.Minute)},
			"ctx 125% 1.2M/1.0M · 0 to compact · handoff 12m ago"},
		{Status{Used: 150_000, Window: 200_000, AutoCompactAt: 167_000, HandoffAt: now.Add(5 * time.Second), Due: true},
			"ctx 75% 150k/200k · 17k to compact · handoff 0s ago · ⚑ handoff due"},
	} {
		if got := tc.s.Line(now); got != tc.want {
			t.Errorf("Line(%+v) = %q, want %q", tc.s, got, tc.want)
		}
	}
}
