package engine

import (
	"strconv"
	"strings"
	"time"
)

// ParseTime reads a --since/--until value: an RFC 3339 time, a date
// (YYYY-MM-DD, local midnight), or a duration back from now ("36h", "7d",
// "2w"). Empty is the zero time.
func ParseTime(v string, now time.Time) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.ParseInLocation("2006-01-02", v, time.Local); err == nil {
		return t.UTC(), nil
	}
	if n := len(v); n > 1 {
		unit := map[byte]time.Duration{'d': 24 * time.Hour, 'w': 7 * 24 * time.Hour}[v[n-1]]
		if k, err := strconv.Atoi(v[:n-1]); err == nil && unit > 0 && k >= 0 {
			return now.Add(-time.Duration(k) * unit).UTC(), nil
		}
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d).UTC(), nil
	}
	return time.Time{}, invalidf("%q: want a date (2026-01-31), an RFC 3339 time, or a duration like 36h or 7d", v)
}
