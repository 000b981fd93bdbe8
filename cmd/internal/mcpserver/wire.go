package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentledger/ledger/handoff"
)

// What one message on stdin may be. The tools' arguments are a few short
// texts, so a megabyte and 64 levels are far more than any call needs,
// and keep what a bad line costs small.
const (
	maxMessage = 1 << 20
	maxDepth   = 64
)

// Stdio is the transport `ledger mcp` serves on: newline-delimited
// JSON-RPC on in and out, the SDK's IOTransport, with one difference. The
// SDK's transport stops reading at the first line that is not a JSON-RPC
// message, and the server ends with it; here such a line is answered with
// a JSON-RPC error of its own (parse error -32700 for a line that is not
// JSON, invalid request -32600 for JSON that is not one message; the id
// null unless the line has a valid one), logged in one clipped line, and
// passed over: the SDK only ever reads messages it can decode. Batches
// (MCP dropped them in 2025-06-18, and the SDK ends the session on one
// since) are refused the same way.
func Stdio(in io.Reader, out io.Writer, log io.Writer) mcp.Transport {
	if log == nil {
		log = io.Discard
	}
	w := &lockedWriter{w: out}
	g := &lineGuard{br: bufio.NewReaderSize(in, 64<<10), out: w,
		log: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	// The guard enforces the size limit itself, answering what is over.
	return &mcp.IOTransport{Reader: io.NopCloser(g), Writer: nopCloser{w}, MaxLineLength: -1}
}

// lockedWriter serialises whole writes: the SDK writes each message in
// one Write, and so does the guard, so that their lines never interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// lineGuard reads the client's lines and hands the SDK's decoder only
// those that are one valid JSON-RPC message each; it answers the others.
type lineGuard struct {
	br      *bufio.Reader
	out     io.Writer
	log     *slog.Logger
	pending []byte // a valid message and its newline, being read
	buf     []byte
	err     error // the input's end or failure, after the last line
}

func (g *lineGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		if g.err != nil {
			return 0, g.err
		}
		line, over, err := g.line()
		if err != nil {
			g.err = err // the line read before it, if any, is still handled
		}
		if over > 0 {
			g.refuse(jsonrpc.CodeInvalidRequest, nil, fmt.Sprintf("message of %d bytes or more is over the limit of %d bytes", over, maxMessage))
			continue
		}
		if msg, ok := g.check(line); ok {
			g.pending = msg
		}
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

// line reads the next line, without its newline. A line over maxMessage
// is read to its end and dropped: over is then its size.
func (g *lineGuard) line() (line []byte, over int, err error) {
	g.buf = g.buf[:0]
	n := 0
	for {
		chunk, err := g.br.ReadSlice('\n')
		n += len(chunk)
		if n <= maxMessage+1 {
			g.buf = append(g.buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if n > maxMessage+1 {
			return nil, n, err
		}
		return bytes.TrimSuffix(g.buf, []byte{'\n'}), 0, err
	}
}

// check returns line as the SDK is to read it (trimmed, with a newline),
// or answers it and returns false. A blank line is passed over.
func (g *lineGuard) check(line []byte) ([]byte, bool) {
	line = bytes.TrimSpace(line)
	switch {
	case len(line) == 0:
		return nil, false
	case !json.Valid(line):
		// One JSON value and nothing else on the line: the SDK's decoder
		// ends the session on anything after it too.
		g.refuse(jsonrpc.CodeParseError, nil, "parse error: the line is not one JSON value")
		return nil, false
	case depth(line) > maxDepth:
		g.refuse(jsonrpc.CodeInvalidRequest, idOf(line), fmt.Sprintf("invalid request: nested deeper than %d levels", maxDepth))
		return nil, false
	case line[0] == '[':
		g.refuse(jsonrpc.CodeInvalidRequest, nil, "invalid request: batches are not supported (MCP 2025-06-18 dropped them): send one message per line")
		return nil, false
	case line[0] != '{':
		g.refuse(jsonrpc.CodeInvalidRequest, nil, "invalid request: a message is a JSON object")
		return nil, false
	}
	var fields map[string]json.RawMessage
	json.Unmarshal(line, &fields) // an object, valid: it decodes
	id := fields["id"]
	if bad := validID(id); bad != "" {
		g.refuse(jsonrpc.CodeInvalidRequest, nil, "invalid request: "+bad)
		return nil, false
	}
	// The SDK's own decoder is the judge of the rest (its JSON is exact
	// about names, unlike encoding/json's).
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		g.refuse(jsonrpc.CodeInvalidRequest, id, "invalid request: "+handoff.Shorten(err.Error(), 200))
		return nil, false
	}
	return append(line, '\n'), true
}

// refuse answers a line with a JSON-RPC error (id nil: null) and logs it.
func (g *lineGuard) refuse(code int, id json.RawMessage, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: int64(code), Message: msg}})
	if err != nil {
		return
	}
	g.log.Warn("refused a malformed message", "code", code, "why", msg)
	g.out.Write(append(b, '\n'))
}

// idOf is the id of a message when it has a valid one (a string, or a
// whole number), else nil.
func idOf(line []byte) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil || validID(m["id"]) != "" {
		return nil
	}
	return m["id"]
}

// validID says what is wrong with a message's id, or "" when it is
// absent, null, a string or a whole number.
func validID(id json.RawMessage) string {
	id = bytes.TrimSpace(id)
	switch {
	case len(id) == 0, bytes.Equal(id, []byte("null")), id[0] == '"':
		return ""
	case id[0] == '-' || id[0] >= '0' && id[0] <= '9':
		f, err := strconv.ParseFloat(string(id), 64)
		if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return "an id must be a string or a whole number"
		}
		return ""
	}
	return "an id must be a string or a whole number, not an object, array or boolean"
}

// depth is how deep objects and arrays nest in a valid JSON value.
func depth(b []byte) int {
	d, most, inString, escaped := 0, 0, false, false
	for _, c := range b {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			d++
			most = max(most, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return most
}
