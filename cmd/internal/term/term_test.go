package term

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWriter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"plain text, tab\tand newline\n", "plain text, tab\tand newline\n"},
		{"\x1b]52;c;cm0gLXJmIH4=\x07", `\u001b]52;c;cm0gLXJmIH4=\u0007`},
		{"\x1b]0;pwned\x1b\\", `\u001b]0;pwned\u001b\`},
		{"\x1b[2J\x1b[H", `\u001b[2J\u001b[H`},
		{"secret\rshown", `secret\u000dshown`},
		{"del\x7f", `del\u007f`},
		{"c1 \u009b31m", `c1 \u009b31m`},
		{"bidi \u202eevil\u2066", `bidi \u202eevil\u2066`},
		{"bad \xff byte", `bad \xff byte`},
		{"é ü 日本 🙂", "é ü 日本 🙂"},
		{"a " + HighlightOn + "hit" + HighlightOff + " b", "a " + HighlightOn + "hit" + HighlightOff + " b"},
		{"\x1b[1;33", `\u001b[1;33`},
		{"\x1b[8mhidden", `\u001b[8mhidden`},
	} {
		var whole, bytewise bytes.Buffer
		w := NewWriter(&whole)
		w.Write([]byte(tc.in))
		w.Flush()
		if got := whole.String(); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
		// Written a byte at a time (runes and the highlight cut across
		// writes), the same.
		w = NewWriter(&bytewise)
		for i := 0; i < len(tc.in); i++ {
			w.Write([]byte{tc.in[i]})
		}
		w.Flush()
		if got := bytewise.String(); got != tc.want {
			t.Errorf("%q a byte at a time: got %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzWriter: whatever is written, however it is cut, the terminal
// gets no control character but newline, tab and the highlight's, no
// bidirectional override, and the same bytes as when written at once.
func FuzzWriter(f *testing.F) {
	for _, s := range []string{"", "x\n", "\x1b]52;c;eA==\x07", "\x1b[1;33mhit\x1b[0m", "\xe6\x97", "\u009b\u202e", "\x1b"} {
		f.Add([]byte(s), 1)
	}
	f.Fuzz(func(t *testing.T, data []byte, cut int) {
		var whole, parts bytes.Buffer
		w := NewWriter(&whole)
		w.Write(data)
		w.Flush()
		cut = max(0, min(len(data), cut))
		w = NewWriter(&parts)
		w.Write(data[:cut])
		w.Write(data[cut:])
		w.Flush()
		if whole.String() != parts.String() {
			t.Fatalf("%q: %q at once, %q cut at %d", data, whole.String(), parts.String(), cut)
		}
		out := whole.String()
		for _, s := range [...]string{HighlightOn, HighlightOff} {
			out = strings.ReplaceAll(out, s, "")
		}
		for i, r := range out {
			if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
				t.Fatalf("%q: %q reached the terminal at %d: %q", data, r, i, whole.String())
			}
		}
		if !utf8.ValidString(out) {
			t.Fatalf("%q: not UTF-8: %q", data, out)
		}
	})
}
