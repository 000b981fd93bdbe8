package transcript

import (
	"strings"
	"testing"
)

// TestCodexThreadNamesPastALongLine: a line longer than any entry (64 KB
// and more) is passed over to its end, and the entries after it, the
// newest namings, still count; so does a last line with no newline.
func TestCodexThreadNamesPastALongLine(t *testing.T) {
	t.Parallel()
	const a, b = "0199f3a2-7d4e-7c10-b2a9-5e8f1d3c6a20", "0199f3a2-7d4e-7c10-b2a9-5e8f1d3c6a21"
	for _, n := range []int{maxIndexLine - 100, maxIndexLine, 3 * maxIndexLine} {
		index := `{"id":"` + a + `","thread_name":"old"}` + "\n" +
			`{"id":"` + b + `","thread_name":"` + strings.Repeat("x", n) + `"}` + "\n" +
			`{"id":"` + a + `","thread_name":"new"}`
		got := ReadCodexThreadNames(strings.NewReader(index))
		if got[a] != "new" {
			t.Errorf("after a line of %d bytes: %s is named %q, want new", n, a, got[a])
		}
		if name, ok := got[b]; ok && len([]rune(name)) > MaxThreadNameRunes {
			t.Errorf("a name of %d characters kept", len([]rune(name)))
		}
	}
}
