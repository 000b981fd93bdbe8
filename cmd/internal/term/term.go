package term

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	xterm "golang.org/x/term"
)

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && xterm.IsTerminal(int(f.Fd()))
}

// NewWriter returns a Writer to w. Call Flush when done: a rune or a
// highlight cut by the last Write is held until then.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Writer is what a terminal is given: what ledger prints holds text
// from transcripts, and a terminal obeys the control characters in it (OSC
// 52 writes the clipboard, OSC 0 the window title, ESC[2J clears the
// screen, a carriage return hides what came before it on the line). So
// every control character but newline and tab is shown escaped, as
// \u001b: the C0 controls, DEL, the C1 controls (U+0080-U+009F, which some
// terminals obey too) and the bidirectional overrides and isolates that
// reorder what is shown (U+202E; "Trojan Source"); a byte that is not
// UTF-8 is shown as \xff. The one sequence let through is ledger's own
// search highlight (bold yellow, then reset): styling, and harmless
// whoever writes it. The \u form is JSON's own, so --json on a terminal
// still decodes to the same data; output that is not a terminal (pipes,
// files, agents' hooks) is written as it is.
type Writer struct {
	w io.Writer
	// held is the start of a rune or of the highlight that the next
	// Write completes.
	held []byte
}

// HighlightOn and HighlightOff are what search marks its hits with on a
// terminal: bold yellow, then reset.
const (
	HighlightOn  = "\x1b[1;33m"
	HighlightOff = "\x1b[0m"
)

// Write writes p escaped; a rune or a highlight p ends in the middle of is
// held for the next Write (or Flush).
func (t *Writer) Write(p []byte) (int, error) {
	buf := append(t.held, p...)
	t.held = nil
	if _, err := t.w.Write(t.escape(buf, false)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is held, escaped: nothing completes it now.
func (t *Writer) Flush() error {
	buf := t.held
	t.held = nil
	if len(buf) == 0 {
		return nil
	}
	_, err := t.w.Write(t.escape(buf, true))
	return err
}

// escape is buf as a terminal is shown it; unless final, a rune or a
// highlight that buf ends in the middle of is held for the next Write.
func (t *Writer) escape(buf []byte, final bool) []byte {
	out := make([]byte, 0, len(buf))
	for i := 0; i < len(buf); {
		c := buf[i]
		if c == 0x1b {
			if s, whole := highlightAt(buf[i:]); whole {
				out = append(out, s...)
				i += len(s)
				continue
			} else if s != "" && !final {
				t.held = append(t.held, buf[i:]...)
				break
			}
		}
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				out = fmt.Appendf(out, `\u%04x`, c)
			} else {
				out = append(out, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(buf[i:])
		switch {
		case r == utf8.RuneError && size == 1 && !final && !utf8.FullRune(buf[i:]):
			t.held = append(t.held, buf[i:]...)
			return out
		case r == utf8.RuneError && size == 1:
			out = fmt.Appendf(out, `\x%02x`, c)
		case r <= 0x9f || r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, buf[i:i+size]...)
		}
		i += size
	}
	return out
}

// highlightAt is the highlight sequence b starts with (whole), or the one
// b is the start of (not whole), or "".
func highlightAt(b []byte) (string, bool) {
	for _, s := range [...]string{HighlightOn, HighlightOff} {
		if bytes.HasPrefix(b, []byte(s)) {
			return s, true
		}
		if len(b) < len(s) && bytes.HasPrefix([]byte(s), b) {
			return s, false
		}
	}
	return "", false
}
