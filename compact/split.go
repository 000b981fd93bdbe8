package compact

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

const (
	// DefaultPreserveRatio is the share of the window that the most recent
	// messages may keep through a compaction.
	DefaultPreserveRatio = 0.40
	// PruneThreshold is the length, in characters, above which
	// PruneToolResults shortens a tool output.
	PruneThreshold = 1000
)

// SplitPoint returns the index of the first message to preserve through a
// compaction: msgs[:i] is the older zone to summarize, msgs[i:] the most
// recent messages that fit DefaultPreserveRatio of window tokens by est
// (nil: DefaultEstimator). See SplitAt.
func SplitPoint(msgs []Message, window int64, est Estimator) int {
	return SplitAt(msgs, int64(float64(window)*DefaultPreserveRatio), est)
}

// SplitAt returns the index of the first message of the longest run of
// most recent messages whose estimate fits keep tokens, moved later where
// needed so that the preserved zone never holds a tool_result whose
// tool_use is left behind, nor the tail of an API response whose first
// lines are. It returns len(msgs) when nothing can be preserved and 0 when
// everything fits.
func SplitAt(msgs []Message, keep int64, est Estimator) int {
	if est == nil {
		est = DefaultEstimator()
	}
	i := len(msgs)
	var used int64
	for i > 0 {
		t := int64(est.MessageTokens(msgs[i-1]))
		if used+t > keep {
			break
		}
		used += t
		i--
	}
	return safeSplit(msgs, i)
}

// safeSplit moves split point i later until it separates no tool_use from
// its tool_result and no lines of one API response.
func safeSplit(msgs []Message, i int) int {
	if i <= 0 || i >= len(msgs) {
		return i
	}
	// reach[j] is the last message holding the result of a call made in
	// msgs[0..j]: a split at or before it, and after j, separates them.
	result := make(map[string]int)
	for j, m := range msgs {
		for _, b := range m.Blocks {
			if b.Kind == BlockToolResult && b.ToolID != "" {
				result[b.ToolID] = j
			}
		}
	}
	reach := make([]int, len(msgs))
	last := -1
	for j, m := range msgs {
		for _, b := range m.Blocks {
			if b.Kind == BlockToolUse && b.ToolID != "" {
				if r, ok := result[b.ToolID]; ok && r > last {
					last = r
				}
			}
		}
		reach[j] = last
	}
	for i < len(msgs) {
		next := i
		if msgs[i].ResponseID != "" && msgs[i].ResponseID == msgs[i-1].ResponseID {
			next = i + 1
		}
		if reach[i-1] >= i {
			next = max(next, reach[i-1]+1)
		}
		if next == i {
			break
		}
		i = next
	}
	return i
}

// PruneToolResults returns msgs with every tool output longer than
// PruneThreshold characters shortened to its beginning and end, except in
// the keepRecent most recent messages. msgs itself is not modified:
// changed messages get blocks of their own.
func PruneToolResults(msgs []Message, keepRecent int) []Message {
	out := make([]Message, len(msgs))
	copy(out, msgs)
	for i := range len(out) - max(keepRecent, 0) {
		m := &out[i]
		copied := false
		for j, b := range m.Blocks {
			if b.Kind != BlockToolResult || utf8.RuneCountInString(b.Text) <= PruneThreshold {
				continue
			}
			if !copied {
				m.Blocks = append([]Block(nil), m.Blocks...)
				copied = true
			}
			m.Blocks[j].Text = shorten(b.Text, PruneThreshold)
		}
	}
	return out
}

// shorten cuts s to at most about limit characters, keeping its beginning
// (what the output is) and its end (where errors and totals land), with a
// note of how much went in between. s is returned as is when it fits.
func shorten(s string, limit int) string {
	return Clip(s, limit*3/5, limit/5+1)
}

// Clip keeps the first head and last tail characters of s, noting how many
// went in between, or returns s when it is no longer than head + tail.
func Clip(s string, head, tail int) string {
	n := utf8.RuneCountInString(s)
	if n <= head+tail {
		return s
	}
	runes := []rune(s)
	var b strings.Builder
	b.WriteString(string(runes[:head]))
	b.WriteString("\n[… ")
	b.WriteString(strconv.Itoa(n - head - tail))
	b.WriteString(" characters pruned …]\n")
	b.WriteString(string(runes[n-tail:]))
	return b.String()
}
