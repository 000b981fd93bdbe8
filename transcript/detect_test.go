package transcript

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestDetect(t *testing.T) {
	claudeLine := `{"parentUuid":null,"sessionId":"s","type":"user","message":{"role":"user","content":"hi"},"uuid":"u"}`
	codexLine := `{"timestamp":"2026-03-02T09:00:00Z","type":"session_meta","payload":{"id":"s"}}`
	tests := []struct {
		name  string
		input string
		want  Format
		err   error
	}{
		{"claude", claudeLine + "\n", FormatClaude, nil},
		{"claude title first", `{"type":"summary","summary":"T","leafUuid":"x"}` + "\n" + claudeLine + "\n", FormatClaude, nil},
		{"claude queue operation", `{"type":"queue-operation","operation":"enqueue","sessionId":"s"}` + "\n", FormatClaude, nil},
		{"claude unknown type with session", `{"type":"brand-new","sessionId":"s"}` + "\n", FormatClaude, nil},
		{"codex", codexLine + "\n", FormatCodex, nil},
		{"codex event first", `{"timestamp":"t","type":"event_msg","payload":{"type":"token_count"}}` + "\n", FormatCodex, nil},
		{"crlf and blank lines", "\r\n\r\n" + codexLine + "\r\n", FormatCodex, nil},
		{"no final newline", claudeLine, FormatClaude, nil},
		{"junk then claude", "garbage\n[1]\n{\"a\":1}\n" + claudeLine + "\n", FormatClaude, nil},
		{"empty", "", "", ErrEmpty},
		{"blank lines", "\n  \n\t\r\n", "", ErrEmpty},
		{"text", "hello world\n", "", ErrUnknownFormat},
		{"nul bytes", "\x00\x00\n", "", ErrUnknownFormat},
		{"json without type", `{"a":1}` + "\n", "", ErrUnknownFormat},
		{"json array", "[1,2]\n", "", ErrUnknownFormat},
		{"unknown typed record", `{"type":"note","text":"x"}` + "\n", "", ErrUnknownFormat},
		{"codex type without payload", `{"type":"session_meta"}` + "\n", "", ErrUnknownFormat},
		{"claude only after 20 lines", strings.Repeat("junk\n", 20) + claudeLine + "\n", "", ErrUnknownFormat},
		{"pretty-printed json", "{\n  \"type\": \"user\"\n}\n", "", ErrUnknownFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Detect(strings.NewReader(tt.input))
			if got != tt.want || !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Errorf("Detect = %q, %v; want %q, %v", got, err, tt.want, tt.err)
			}
		})
	}
}

func TestDetectReason(t *testing.T) {
	_, err := Detect(strings.NewReader("\nnot json\n{\"a\":1}\n"))
	if want := "unknown transcript format: no record of a known agent in the first 2 lines (line 2: invalid json)"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}

// TestDetectFixtures: every fixture's format is detected from its head.
func TestDetectFixtures(t *testing.T) {
	for _, fx := range fixtures {
		if got := detectFile(t, filepath.Join(testdataDir, fx.file)); got != fx.format {
			t.Errorf("%s: %q; want %q", fx.name, got, fx.format)
		}
	}
}

// TestDetectHugeLine: a first line longer than a line is kept whole is
// read as Read reads it, its long text cut: its type still decides. One
// too long even cut is passed over, and the next line decides.
func TestDetectHugeLine(t *testing.T) {
	// Longer than maxKeptLine: only cut does it fit.
	huge := `{"type":"user","sessionId":"s","message":{"content":"` + strings.Repeat("x", maxKeptLine+keepHead) + `"}}`
	got, err := Detect(strings.NewReader(huge + "\n"))
	if err != nil || got != FormatClaude {
		t.Errorf("9 MB first line: %q, %v", got, err)
	}
	numbers := "[" + strings.Repeat("1,", maxKeptLine/2) + "1]"
	codexLine := `{"timestamp":"t","type":"session_meta","payload":{"id":"s"}}`
	got, err = Detect(strings.NewReader(numbers + "\n" + codexLine + "\n"))
	if err != nil || got != FormatCodex {
		t.Errorf("a line too long, then codex: %q, %v", got, err)
	}
}
