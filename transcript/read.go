package transcript

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// readBufferSize is the bufio buffer of a Read. Lines longer than it are
// gathered in a growing slice, and past maxWholeLine cut as they stream in
// (see lineReader).
const readBufferSize = 64 << 10

// ctxCheckEvery is how many lines a Read handles between looks at its
// context: often enough for Ctrl-C to feel immediate, rare enough to cost
// nothing.
const ctxCheckEvery = 64

// Read streams the transcript lines of r, which a caller has positioned at
// byte offset start of a file whose line there is line startLine (1-based),
// and calls fn for every record they yield, in file order. st.Format picks
// the format and st carries what earlier reads learnt; Read updates it.
//
// Only complete lines (ending in '\n', optionally "\r\n") are read: a last
// line without its newline is left for a later read, and Result.End stops
// before it. Bad input is never fatal: a malformed line is counted in
// Result.Skipped and the read goes on. Read stops at the first error of r,
// of ctx or of fn (which it returns as is); the Result it returns then still
// describes the lines fully handled before the error, so a caller can
// commit them and resume from Result.End.
func Read(ctx context.Context, r io.Reader, st *State, start int64, startLine int, fn func(Record) error) (Result, error) {
	res := Result{End: start, NextLine: startLine}
	if st == nil {
		return res, errors.New("read transcript: nil state")
	}
	if startLine < 1 {
		startLine = 1
		res.NextLine = 1
	}
	emit := func(rec Record) error {
		scrubNUL(&rec)
		return fn(rec)
	}
	var p parser
	switch st.Format {
	case FormatClaude:
		p = newClaudeParser(st, emit)
	case FormatCodex:
		p = newCodexParser(st, emit)
	case FormatGemini:
		p = newGeminiParser(st, emit)
	case FormatQwen:
		p = newQwenParser(st, emit)
	case FormatCopilot:
		p = newCopilotParser(st, emit)
	case FormatPi:
		p = newPiParser(st, emit)
	default:
		return res, fmt.Errorf("read transcript: unknown format %q", st.Format)
	}

	lr := lineReader{ctx: ctx, pass: true}
	if sk := st.Skim; sk != nil {
		st.Skim = nil
		if sk.At == start && sk.Past > 0 {
			// An earlier read was passing over the line that starts here:
			// go on from where it got to.
			var err error
			if s, ok := r.(io.Seeker); ok {
				_, err = s.Seek(sk.Past, io.SeekCurrent)
			} else {
				_, err = io.CopyN(io.Discard, r, sk.Past)
			}
			if err != nil {
				return res, fmt.Errorf("read transcript: %w", err)
			}
			lr.resume = sk.Past
		}
	}
	lr.br = bufio.NewReaderSize(r, readBufferSize)
	for {
		if res.Lines%ctxCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return res, finish(p, err)
			}
		}
		lr.before = res.End - start
		raw, size, err := lr.next()
		var tooLong errLineTooLong
		var skipped errLineSkipped
		switch {
		case errors.As(err, &tooLong):
			res.skip(res.NextLine, tooLong.Error())
		case errors.As(err, &skipped):
			res.skip(res.NextLine, skipped.Error())
		case errors.Is(err, errSkimming):
			// Stopped in a line being passed over: the next read goes on
			// with it from where this one got to.
			st.Skim = &Skim{At: res.End, Past: lr.skimmed}
			return res, finish(p, ctx.Err())
		case errors.Is(err, io.EOF):
			return res, finish(p, nil)
		case ctx.Err() != nil && errors.Is(err, ctx.Err()):
			return res, finish(p, err)
		case err != nil:
			return res, finish(p, fmt.Errorf("read line %d: %w", res.NextLine, err))
		}
		lineNo, off := res.NextLine, res.End
		line := trimEOL(raw)
		if len(bytes.TrimSpace(line)) > 0 {
			line, repaired := repair(line)
			saved := st.snapshot()
			reason, err := p.line(line, lineNo, off)
			if err != nil {
				// The line is not fully handled: End stays before it, and
				// so does st, for a read that starts again there.
				st.restore(saved)
				return res, err
			}
			if repaired {
				res.Repaired++
			}
			if reason != "" {
				res.skip(lineNo, reason)
			}
		}
		res.Lines++
		res.NextLine++
		res.End += size
	}
}

// skip counts a bad line, and lists the first MaxSkipsListed.
func (res *Result) skip(line int, reason string) {
	res.Skipped++
	if len(res.Skips) < MaxSkipsListed {
		res.Skips = append(res.Skips, Skip{Line: line, Reason: reason})
	}
}

// finish lets the parser hand over what it held back (a Claude title
// waiting for its session id) and returns err, or the parser's error when
// err is nil.
func finish(p parser, err error) error {
	if ferr := p.finish(); err == nil {
		return ferr
	}
	return err
}

// parser turns the lines of one format into records.
type parser interface {
	// line handles one complete, non-blank, repaired line without its
	// newline. It returns the reason the line is bad input ("" when it was
	// used or skipped on purpose) or the error of the callback.
	line(data []byte, lineNo int, off int64) (reason string, err error)
	// finish emits whatever the parser held back for a later line.
	finish() error
}

// trimEOL drops a line's "\n" or "\r\n".
func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}

// repair drops a UTF-8 byte order mark the line starts with (an editor
// saves one at the start of a file; no JSON text begins with it, and every
// reader met its first record as invalid JSON), replaces invalid UTF-8
// with U+FFFD and removes NUL bytes (which no JSON text may hold raw, and
// which SQLite text handles badly). It reports whether the line needed it.
func repair(line []byte) ([]byte, bool) {
	line, bom := bytes.CutPrefix(line, []byte("\uFEFF"))
	if utf8.Valid(line) && bytes.IndexByte(line, 0) < 0 {
		return line, bom
	}
	s := strings.ToValidUTF8(string(line), "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "")
	return []byte(s), true
}

// jsonReason names why a line failed to decode as a record of format f:
// "invalid json" when it is not JSON at all, "not a <f> record" when it is
// JSON of the wrong shape (an array, a number), else "malformed <f>
// record" with the field that had the wrong type.
func jsonReason(f Format, data []byte, err error) string {
	var syn *json.SyntaxError
	if errors.As(err, &syn) || !json.Valid(data) {
		return "invalid json"
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) && typ.Field != "" {
		return fmt.Sprintf("malformed %s record (%s)", f, typ.Field)
	}
	return fmt.Sprintf("not a %s record", f)
}

// parseTime reads an RFC 3339 timestamp; a missing or bad one is the zero
// time, not a reason to drop the line.
func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	// A valid time can fall past year 9999 in UTC (9999-12-31T23:59-23:00),
	// where no backend keeps it: unknown too.
	if y := t.UTC().Year(); err != nil || y < 1 || y > 9999 {
		return time.Time{}
	}
	return t
}

// timeText is a line's timestamp field: its text when it is a JSON
// string, else "" (the time unknown): a line whose timestamp is of
// another type (a number of milliseconds) keeps its record.
type timeText string

func (t *timeText) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) != nil {
		s = ""
	}
	*t = timeText(s)
	return nil
}

// lineUUID is the uuid of a line that has none of its own: a hash of its
// bytes, so that reading a file again yields the same uuids.
func lineUUID(prefix string, data []byte) string {
	sum := sha256.Sum256(data)
	return prefix + hex.EncodeToString(sum[:12])
}

// present records that a JSON key was there without keeping its value.
type present bool

// UnmarshalJSON implements json.Unmarshaler.
func (p *present) UnmarshalJSON(b []byte) error {
	*p = present(!bytes.Equal(b, []byte("null")))
	return nil
}

// hasAnyPrefix reports whether s, less leading white space, starts with
// one of prefixes.
func hasAnyPrefix(s string, prefixes []string) bool {
	s = strings.TrimLeft(s, " \t\r\n")
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// isTypeError reports whether err is a JSON value of the wrong type (the
// line is JSON, but not shaped as expected).
func isTypeError(err error) bool {
	var typ *json.UnmarshalTypeError
	return errors.As(err, &typ)
}

// carry is what a State carries between reads that its exported fields do
// not say: links of the Claude uuid chain through lines the reader
// skipped, and whether the last Codex user message was "/compact". It
// travels in the State's JSON (see State.MarshalJSON), bounded: only the
// most recent links, which are the ones a later read can meet.
type carry struct {
	aliases     aliasCache
	userCompact bool
	// compacting is set between a Codex compaction's answer and its
	// compacted line (whose token_count is the compaction request's).
	compacting bool
	// queued are prompts enqueued and not yet seen delivered; delivered
	// the latest prompts emitted from the queue, so that a prompt a build
	// records twice (remove and attachment) is one message. Both are only
	// appended to or replaced, never written in place, so that a line's
	// snapshot can share them.
	queued, delivered []string
	// gemini is what a Gemini CLI log's read carries (gemini.go).
	gemini geminiCarry
}

// maxQueued bounds the queue a State carries.
const maxQueued = 16

func (c *carry) enqueue(text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	c.queued = append(c.queued, text)
	if len(c.queued) > maxQueued {
		c.queued = c.queued[len(c.queued)-maxQueued:]
	}
}

// dequeue drops a pending prompt that arrived by another way.
func (c *carry) dequeue(text string) {
	for i, q := range c.queued {
		if sameText(q, text) {
			c.queued = append(c.queued[:i:i], c.queued[i+1:]...)
			return
		}
	}
}

// take removes the prompt a "remove" names: by its text when the line has
// it, else the oldest typed prompt pending.
func (c *carry) take(text string) (string, bool) {
	if text != "" {
		c.dequeue(text)
		return text, true
	}
	for i, q := range c.queued {
		if typedPrompt(q) {
			c.queued = append(c.queued[:i:i], c.queued[i+1:]...)
			return q, true
		}
	}
	return "", false
}

func (c *carry) deliver(text string) {
	c.delivered = append(c.delivered, text)
	if len(c.delivered) > maxQueued {
		c.delivered = c.delivered[len(c.delivered)-maxQueued:]
	}
}

func (c *carry) wasDelivered(text string) bool {
	for _, d := range c.delivered {
		if sameText(d, text) {
			return true
		}
	}
	return false
}

// redactedMark starts what the ledger's store puts in place of a secret
// ([REDACTED:<kind>]).
const redactedMark = "[REDACTED:"

// sameText tells whether a prompt the carry kept is text. The carry
// travels in the State's JSON, which a store may keep with its secrets
// replaced ([REDACTED:<kind>]): a kept prompt then stands for any text that
// has one or more characters where each replacement is.
func sameText(kept, text string) bool {
	if kept == text {
		return true
	}
	if !strings.Contains(kept, redactedMark) {
		return false
	}
	var pieces []string
	for rest := kept; ; {
		i := strings.Index(rest, redactedMark)
		if i < 0 {
			pieces = append(pieces, rest)
			break
		}
		j := strings.IndexByte(rest[i:], ']')
		if j < 0 {
			pieces = append(pieces, rest)
			break
		}
		pieces = append(pieces, rest[:i])
		rest = rest[i+j+1:]
	}
	if len(pieces) == 1 {
		return false
	}
	first, last := pieces[0], pieces[len(pieces)-1]
	if !strings.HasPrefix(text, first) || !strings.HasSuffix(text, last) || len(text) < len(first)+len(last)+len(pieces)-1 {
		return false
	}
	// Each piece between, in order, leftmost, one character at least
	// after the one before: the earliest placement leaves the most room.
	mid, end := len(first)+1, len(text)-len(last)
	for _, p := range pieces[1 : len(pieces)-1] {
		if mid > end {
			return false
		}
		i := strings.Index(text[mid:end], p)
		if i < 0 {
			return false
		}
		mid += i + len(p) + 1
	}
	return mid <= end
}

// carry returns st's carry, making it on first use.
func (st *State) carry() *carry {
	if st.c == nil {
		st.c = &carry{}
	}
	return st.c
}

// carriedLinks is how many recent skipped-line links a State's JSON keeps.
const carriedLinks = 32

// stateJSON is a State as JSON: its exported fields under their own names
// (so JSON written before the carry existed still reads), plus the carry.
type stateJSON struct {
	statePlain
	Links       [][2]string  `json:"links,omitempty"`
	UserCompact bool         `json:"userCompact,omitempty"`
	Compacting  bool         `json:"compacting,omitempty"`
	Queued      []string     `json:"queued,omitempty"`
	Delivered   []string     `json:"delivered,omitempty"`
	Gemini      *geminiCarry `json:"gemini,omitempty"`
}

// statePlain is State without its methods.
type statePlain State

// MarshalJSON implements json.Marshaler: a caller that stores a State
// between runs keeps, with the exported fields, the few facts about
// skipped lines that the next read needs.
func (st State) MarshalJSON() ([]byte, error) {
	v := stateJSON{statePlain: statePlain(st)}
	if st.c != nil {
		v.Links = st.c.aliases.tail(carriedLinks)
		v.UserCompact, v.Compacting = st.c.userCompact, st.c.compacting
		v.Queued, v.Delivered = st.c.queued, st.c.delivered
		if g := st.c.gemini; len(g.Parents) > 0 || g.Snapshot != "" {
			v.Gemini = &g
		}
	}
	return json.Marshal(v)
}

// UnmarshalJSON implements json.Unmarshaler.
func (st *State) UnmarshalJSON(b []byte) error {
	var v stateJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*st = State(v.statePlain)
	st.c = nil
	if len(v.Links) > 0 || v.UserCompact || v.Compacting || len(v.Queued) > 0 || len(v.Delivered) > 0 || v.Gemini != nil {
		c := st.carry()
		if v.Gemini != nil {
			c.gemini = *v.Gemini
		}
		c.userCompact, c.compacting = v.UserCompact, v.Compacting
		c.queued, c.delivered = v.Queued, v.Delivered
		for _, l := range v.Links {
			c.aliases.set(l[0], l[1])
		}
		c.aliases.recent = v.Links
	}
	return nil
}

// stateSnapshot is what reading one line may change in a State, except
// the alias cache, where reading a line again adds the same entries.
type stateSnapshot struct {
	st                      State
	userCompact, compacting bool
	queued, delivered       []string
	gemini                  geminiCarry
}

func (st *State) snapshot() stateSnapshot {
	s := stateSnapshot{st: *st}
	if st.c != nil {
		s.userCompact, s.compacting = st.c.userCompact, st.c.compacting
		// The carry's lists are never written in place (see carry), so
		// keeping the slices keeps their contents.
		s.queued, s.delivered = st.c.queued, st.c.delivered
		s.gemini = st.c.gemini
	}
	return s
}

func (st *State) restore(s stateSnapshot) {
	*st = s.st
	if st.c != nil {
		st.c.userCompact, st.c.compacting = s.userCompact, s.compacting
		st.c.queued, st.c.delivered = s.queued, s.delivered
		st.c.gemini = s.gemini
	}
}

// aliasGeneration bounds the alias cache: it holds between one and two
// generations of this many skipped uuids, the recent ones, which is where
// Claude Code's parents point.
const aliasGeneration = 4096

// aliasCache maps the uuid of a line skipped on purpose to its nearest
// ancestor that is a message or boundary ("" for a root).
type aliasCache struct {
	cur, prev map[string]string
	recent    [][2]string // the latest links, oldest first, for tail
}

// resolve returns the nearest used ancestor for parent uuid u: u itself
// unless u is a skipped line.
func (a *aliasCache) resolve(u string) string {
	if u == "" {
		return ""
	}
	if v, ok := a.cur[u]; ok {
		return v
	}
	if v, ok := a.prev[u]; ok {
		return v
	}
	return u
}

// add records that uuid was skipped and had parent as its parent.
func (a *aliasCache) add(uuid, parent string) {
	target := a.resolve(parent)
	a.set(uuid, target)
	if len(a.recent) >= 2*carriedLinks {
		a.recent = append(a.recent[:0], a.recent[carriedLinks:]...)
	}
	a.recent = append(a.recent, [2]string{uuid, target})
}

// set links uuid to target, a resolved ancestor.
func (a *aliasCache) set(uuid, target string) {
	if a.cur == nil || len(a.cur) >= aliasGeneration {
		a.prev, a.cur = a.cur, make(map[string]string, 64)
	}
	a.cur[uuid] = target
}

// tail returns the n latest links (fewer if there are fewer).
func (a *aliasCache) tail(n int) [][2]string {
	if len(a.recent) > n {
		return a.recent[len(a.recent)-n:]
	}
	return a.recent
}
