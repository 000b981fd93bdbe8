package handoff

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// ApproxTokens estimates tokens as one per four characters, rounded up. It
// is the counter Render falls back on when a caller supplies none; callers
// with a real estimator (package compact's) should pass that instead.
func ApproxTokens(s string) int {
	return (utf8.RuneCountInString(s) + 3) / 4
}

// ellipsis marks text that was shortened.
const ellipsis = "…"

// shorten returns s cut to at most max runes, ending in an ellipsis when it
// was cut. It cuts between runes, never inside one, and prefers a word
// boundary when one is near the end. max <= 0 means no limit.
func shorten(s string, max int) string {
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	if max == 1 {
		return ellipsis
	}
	// Byte offset of the rune that would be the max-th: keep max-1 runes
	// and the ellipsis.
	cut, n := 0, 0
	for i := range s {
		if n == max-1 {
			cut = i
			break
		}
		n++
	}
	head := s[:cut]
	if sp := strings.LastIndexAny(head, " \t\n"); sp > 0 && utf8.RuneCountInString(head[:sp]) >= (max*3)/4 {
		head = head[:sp]
	}
	return strings.TrimRightFunc(head, unicode.IsSpace) + ellipsis
}

// Shorten is shorten for the front doors (titles, tasks, snippets and
// notes in listings), so that text is cut one way wherever ledger shows
// it.
func Shorten(s string, max int) string { return shorten(s, max) }

// oneLine folds s onto a single line: runs of white space, newlines
// included, become one space.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// clean makes transcript text safe to carry: valid UTF-8, Unix newlines,
// no surrounding white space.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.TrimSpace(s)
}

// stripANSI removes terminal escape sequences (colours, cursor moves) that
// test runners write into their output.
func stripANSI(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != 0x1b {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(s) {
			break
		}
		switch s[i+1] {
		case '[': // CSI: parameters and intermediates, then a final byte
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
		case ']': // OSC: up to BEL or ST
			j := i + 2
			for j < len(s) && s[j] != 0x07 && !(s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\') {
				j++
			}
			if j < len(s) && s[j] == 0x1b {
				j++
			}
			i = j
		default:
			i++
		}
	}
	return b.String()
}

// appendUnique appends s to list unless it is empty or already in seen.
func appendUnique(list []string, seen map[string]bool, s string) []string {
	if s == "" || seen[s] {
		return list
	}
	seen[s] = true
	return append(list, s)
}
