package transcript

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// Codex CLI keeps the names of its threads (sessions) in
// ~/.codex/session_index.jsonl, one line appended per naming:
//
//	{"id":"<thread id>","thread_name":"<name>","updated_at":"<RFC 3339>"}
//
// The latest line for an id holds.

// codexThreadID matches a Codex thread id: a UUID. It is compiled on first
// use, not at each start of the binary (see uuidPattern).
var codexThreadID = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
})

// Bounds on what a session index can make the reader keep: it is another
// program's file, read as untrusted input.
const (
	maxThreadNameBytes = 1024 // a longer line's name is cut
	MaxThreadNameRunes = 120  // a name is cut to this many characters
	maxThreadNames     = 100_000
	maxIndexLine       = 64 << 10 // an entry is short: a longer line is not one
)

// ReadCodexThreadNames reads a Codex session index: each thread's latest
// name by its id. Lines that are not an entry (bad JSON, an id that is not
// a UUID, an empty name) are passed over; names are made one line of
// printable text of at most MaxThreadNameRunes characters.
func ReadCodexThreadNames(r io.Reader) map[string]string {
	out := map[string]string{}
	br := bufio.NewReaderSize(r, maxIndexLine)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than any entry is passed over to its end, not
			// the rest of the index: the newest names are appended last.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			line = nil
		}
		if len(line) > 0 {
			noteThreadName(line, out)
		}
		if err != nil {
			return out
		}
	}
}

// noteThreadName notes in out the name an index line gives its thread,
// when the line is an entry.
func noteThreadName(line []byte, out map[string]string) {
	var e struct {
		ID         string `json:"id"`
		ThreadName string `json:"thread_name"`
	}
	if json.Unmarshal(line, &e) != nil || !codexThreadID().MatchString(e.ID) {
		return
	}
	name := cleanThreadName(e.ThreadName)
	if name == "" {
		return
	}
	id := strings.ToLower(e.ID)
	if _, ok := out[id]; !ok && len(out) >= maxThreadNames {
		return
	}
	out[id] = name
}

// cleanThreadName is a name as one line of printable text, cut short.
func cleanThreadName(s string) string {
	if len(s) > maxThreadNameBytes {
		s = s[:maxThreadNameBytes]
	}
	s = strings.Map(func(r rune) rune {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > MaxThreadNameRunes {
		s = strings.TrimSpace(string(r[:MaxThreadNameRunes-1])) + "…"
	}
	return s
}
