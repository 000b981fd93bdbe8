package transcript

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Sentinel errors of Detect.
var (
	// ErrUnknownFormat is returned for input that is not a transcript of
	// an agent ledger reads.
	ErrUnknownFormat = errors.New("unknown transcript format")
	// ErrEmpty is returned for input with no content at all (or only
	// blank lines).
	ErrEmpty = errors.New("empty transcript")
)

// detectLines is how many non-blank lines Detect looks at, and
// detectBytes how far into its input at most: a transcript's first lines
// are never that long, and a file of zeros with no newline would be read
// to its end. A long line (a pasted image, a huge tool output) is read as
// Read reads it, its long texts cut (see maxWholeLine): its type is still
// there to be seen.
const (
	detectLines = 20
	detectBytes = 64 << 20
)

// codexTypes are the top-level types of Codex rollout lines.
var codexTypes = map[string]bool{
	"session_meta": true, "response_item": true, "event_msg": true,
	"turn_context": true, "compacted": true,
}

// claudeTypes are the line types Claude Code writes.
var claudeTypes = map[string]bool{
	"user": true, "assistant": true, "system": true, "summary": true,
	"progress": true, "file-history-snapshot": true, "queue-operation": true,
	"last-prompt": true,
}

// detectLine is what Detect reads of a line.
type detectLine struct {
	Type       string  `json:"type"`
	Payload    present `json:"payload"`
	SessionID  present `json:"sessionId"`
	UUID       present `json:"uuid"`
	LeafUUID   present `json:"leafUuid"`
	Message    present `json:"message"`
	ParentUUID present `json:"parentUuid"`
	ParentID   present `json:"parentId"`
	ID         present `json:"id"`
	Version    present `json:"version"`
	Cwd        present `json:"cwd"`
}

// Detect reads the first non-blank lines of r (up to 20 and 64 MB; an
// unterminated last line counts) and tells which transcript format they are. The first
// line that is clearly one format decides. Input with nothing but blank
// lines returns ErrEmpty; input where no line decides returns an error
// wrapping ErrUnknownFormat that says why.
func Detect(r io.Reader) (Format, error) {
	return DetectContext(context.Background(), r)
}

// DetectContext is Detect that stops, with ctx's error, once ctx is done:
// its first lines may be gigabytes long.
func DetectContext(ctx context.Context, r io.Reader) (Format, error) {
	lr := lineReader{br: bufio.NewReaderSize(io.LimitReader(r, detectBytes), readBufferSize), partial: true, ctx: ctx}
	seen, lineNo := 0, 0
	firstReason := ""
	for seen < detectLines {
		line, _, err := lr.next()
		var tl errLineTooLong
		tooLong := errors.As(err, &tl)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil && !tooLong {
			return "", fmt.Errorf("detect format: %w", err)
		}
		eof := len(line) > 0 && line[len(line)-1] != '\n'
		line = trimEOL(line)
		lineNo++
		// Blank is decided before repair, as Read does: a line of NUL
		// bytes is bad input, not an empty line.
		line = bytes.TrimSpace(line)
		if len(line) > 0 || tooLong {
			line, _ = repair(line)
			seen++
			f, reason := detectOne(line, tooLong)
			if f != "" {
				return f, nil
			}
			if firstReason == "" {
				firstReason = fmt.Sprintf("line %d: %s", lineNo, reason)
			}
		}
		if eof {
			break
		}
	}
	if seen == 0 {
		return "", ErrEmpty
	}
	return "", fmt.Errorf("%w: no record of a known agent in the first %d lines (%s)", ErrUnknownFormat, seen, firstReason)
}

// detectOne classifies one trimmed line, or says why it cannot.
func detectOne(line []byte, tooLong bool) (Format, string) {
	if tooLong {
		return "", "line too long to inspect"
	}
	if len(line) == 0 || line[0] != '{' {
		if json.Valid(line) {
			return "", "not a json object"
		}
		return "", "invalid json"
	}
	var d detectLine
	if err := json.Unmarshal(line, &d); err != nil && !isTypeError(err) {
		return "", "invalid json"
	}
	if f := detectCLIAgent(line); f != "" {
		return f, ""
	}
	switch {
	case d.Type == "":
		return "", "no type field"
	case codexTypes[d.Type] && bool(d.Payload):
		return FormatCodex, ""
	case bool(d.Payload):
		return "", fmt.Sprintf("unknown type %q with a payload", d.Type)
	case d.Type == "session" && bool(d.ID) && bool(d.Version || d.Cwd):
		return FormatPi, ""
	case piTypes[d.Type] && bool(d.ID) && bool(d.ParentID) && !bool(d.ParentUUID):
		return FormatPi, ""
	case claudeTypes[d.Type]:
		return FormatClaude, ""
	case bool(d.SessionID || d.UUID || d.LeafUUID || d.Message || d.ParentUUID):
		return FormatClaude, ""
	}
	return "", fmt.Sprintf("unknown type %q", d.Type)
}
