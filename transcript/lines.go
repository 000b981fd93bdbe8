package transcript

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// What one line may cost. A line up to maxWholeLine bytes is read whole.
// A longer one (a pasted image, a tool output of a whole log, a minified
// bundle read by a tool) is kept in bounded memory as it streams in: each
// JSON string in it longer than keepHead+keepTail bytes is cut to its first
// keepHead bytes, a marker that gives the size cut and the string's size,
// and its last keepTail bytes. The line stays valid JSON with every field
// in place, so its record is read as any other, and the end of a long
// output (where the error usually is) stays searchable. A line still
// longer than maxKeptLine after that (millions of short values) is skipped
// as too long. Reading a line of any length so holds at most maxWholeLine
// + maxKeptLine bytes.
const (
	maxWholeLine = 4 << 20
	keepHead     = 1 << 20
	keepTail     = 64 << 10
	maxKeptLine  = 8 << 20
)

// cutMarker is what replaces the middle of a cut string: JSON string
// content (its newlines escaped), with the bytes cut and the string's size.
func cutMarker(cut, size int64) string {
	return `\n[ledger: ` + strconv.FormatInt(cut, 10) + ` bytes cut from this text of ` + strconv.FormatInt(size, 10) + ` bytes]\n`
}

// skimFor is how long a read whose deadline came in the middle of a long
// line reads on to find its end (see lineReader.pass): scanning for a
// newline is many times faster than cutting, a few hundred MB in that
// time from the page cache, and it leaves a hook's budget room to commit.
// A variable so that a test can pass a line over many reads.
var skimFor = 200 * time.Millisecond

// skipFloor is the smallest line a read passes over: a shorter one is
// always left for the next read, which reads it whole in well under a
// hook's budget on any machine not starved of CPU (the cutter does ~75
// MB/s), so that a loaded machine, whose reads get little done, never
// loses a line it could have read. (A variable for tests.)
var skipFloor int64 = 16 << 20

// errLineSkipped is the reason of a line passed over because it could
// not be read in the time a read had.
type errLineSkipped struct{ size int64 }

func (e errLineSkipped) Error() string {
	return fmt.Sprintf("line too long to read in the time given (%d bytes): skipped", e.size)
}

// errSkimming: the read's time ran out in a line being passed over,
// before its end; lineReader.skimmed says how much of it has no newline.
var errSkimming = errors.New("passing over a long line")

// errLineTooLong is the reason of a line skipped for its size.
type errLineTooLong struct{ size int64 }

func (e errLineTooLong) Error() string {
	return fmt.Sprintf("line too long (%d bytes, over %d MB even with its long texts cut)", e.size, maxKeptLine>>20)
}

// lineReader yields lines of any length in bounded memory (see
// maxWholeLine).
type lineReader struct {
	br  *bufio.Reader
	ctx context.Context // checked between the chunks of a long line
	buf []byte          // gathers lines longer than br's buffer
	cut cutter          // shrinks lines longer than maxWholeLine
	// partial makes next return an unterminated last line (Detect reads
	// it) instead of dropping it.
	partial bool
	// pass lets a read whose deadline comes in the middle of a long line
	// pass over it rather than stop before it (see pass); before is what
	// the read got through before the line, resume how much of a line
	// passed over since an earlier read is known to have no newline, and
	// skimmed how much is when next returns errSkimming.
	pass                    bool
	before, resume, skimmed int64
}

// next returns the next line with its '\n' (which a partial last line
// lacks) and the number of bytes it took in the input. The slice is valid
// until the next call. A line too long even once cut comes back empty,
// with its size in an errLineTooLong. At the end of input next returns
// io.EOF and drops an unterminated last line, unless lr.partial: that line
// is not complete yet.
func (lr *lineReader) next() (line []byte, size int64, err error) {
	if lr.resume > 0 {
		n := lr.resume
		lr.resume = 0
		return lr.passOver(n, true)
	}
	b, err := lr.br.ReadSlice('\n')
	if err == nil {
		return b, int64(len(b)), nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return lr.end(b, int64(len(b)), err)
	}
	lr.buf = append(lr.buf[:0], b...)
	size = int64(len(b))
	cutting := false
	for {
		if lr.ctx != nil {
			if cerr := lr.ctx.Err(); cerr != nil {
				if lr.pass && errors.Is(cerr, context.DeadlineExceeded) {
					return lr.passOver(size, false)
				}
				return nil, size, cerr
			}
		}
		b, err = lr.br.ReadSlice('\n')
		size += int64(len(b))
		switch {
		case cutting:
			lr.cut.write(b)
		case len(lr.buf)+len(b) > maxWholeLine:
			cutting = true
			lr.cut.reset(keepHead, keepTail, maxKeptLine)
			lr.cut.write(lr.buf)
			lr.cut.write(b)
		default:
			lr.buf = append(lr.buf, b...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if cutting {
			out, ok := lr.cut.finish()
			if !ok {
				if err != nil {
					return lr.end(nil, size, err)
				}
				return nil, size, errLineTooLong{size}
			}
			return lr.end(out, size, err)
		}
		return lr.end(lr.buf, size, err)
	}
}

// passOver is what a read does when its deadline comes in the middle of a
// long line, of which it has read size bytes. The next read would start
// on that line with no more time than this one had, and so on at every
// hook: a line a hook cannot read in its budget (150 MB, say) would hold
// back every line after it for good. So the read looks for the line's
// end, keeping nothing, for skimFor more. A line longer than all this
// read got through by its deadline (the lines before it and this one's
// part) cannot be read by the next either: it is skipped, counted as
// such, and the read ends after it. A shorter one, or one under
// skipFloor, is left for the next read, which starts on it. A line whose end is not found in time is
// passed over across reads (errSkimming; the State keeps how far), as is
// one the read started on already judged (judged). A read without a
// deadline looks until the end.
func (lr *lineReader) passOver(size int64, judged bool) ([]byte, int64, error) {
	read := size
	until, bounded := lr.ctx.Deadline()
	if now := time.Now(); until.Before(now) {
		until = now
	}
	until = until.Add(skimFor)
	for !bounded || time.Now().Before(until) {
		b, err := lr.br.ReadSlice('\n')
		size += int64(len(b))
		if err == nil {
			if judged || size > max(lr.before+read, skipFloor) {
				return nil, size, errLineSkipped{size}
			}
			return nil, read, lr.ctx.Err() // left for the next read
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if !errors.Is(err, io.EOF) {
				return nil, 0, err
			}
			break // the line is not complete yet
		}
	}
	if judged || size > max(lr.before+read, skipFloor) {
		lr.skimmed = size
		return nil, 0, errSkimming
	}
	return nil, read, lr.ctx.Err()
}

// end returns a line read up to err (nil: a complete line).
func (lr *lineReader) end(line []byte, size int64, err error) ([]byte, int64, error) {
	switch {
	case err == nil:
		return line, size, nil
	case errors.Is(err, io.EOF) && lr.partial && size > 0:
		return line, size, nil
	}
	return nil, 0, err
}

// cutter copies a long line, cutting its long JSON strings (see
// maxWholeLine). It follows the JSON only as far as strings go (where one
// starts and ends, and its escapes); the parser validates the rest. Cuts
// fall between whole characters and escapes, so the output is valid UTF-8
// and JSON wherever the input was.
type cutter struct {
	// The limits: keepHead, keepTail and maxKeptLine but in tests.
	keepHead, keepTail, maxOut int
	out                        []byte
	over                       bool // out passed maxOut: the line is too long
	// The string being copied: inside one, the escape being read (after a
	// backslash; hex digits of a \u still to come), its content's size so
	// far, how much of it went to the output as its head, and its tail
	// window with the bytes the window dropped.
	inStr   bool
	afterBS bool
	hex     int
	hexVal  rune
	// pair is set after the escape of a high surrogate: the low one that
	// follows is part of the same character.
	pair    bool
	size    int64
	head    int64
	inHead  bool
	tail    []byte
	tailCut int64
}

// reset readies c for a line, with its limits.
func (c *cutter) reset(keepHead, keepTail, maxOut int) {
	*c = cutter{keepHead: keepHead, keepTail: keepTail, maxOut: maxOut, out: c.out[:0], tail: c.tail[:0]}
}

// write copies b, a chunk of the line, cutting its strings.
func (c *cutter) write(b []byte) {
	for i := 0; i < len(b); {
		if !c.inStr {
			// Structure: copied up to and with the next string's quote.
			j := i
			for j < len(b) && b[j] != '"' {
				j++
			}
			if j < len(b) {
				j++
				c.inStr, c.afterBS, c.hex, c.size, c.head, c.inHead, c.tail, c.tailCut = true, false, 0, 0, 0, true, c.tail[:0], 0
			}
			c.emit(b[i:j])
			i = j
			continue
		}
		// Inside a string: its content, up to the closing quote, to the
		// head while it is within keepHead, then to the tail window.
		run := i
		for ; i < len(b); i++ {
			ch := b[i]
			boundary := !c.afterBS && c.hex == 0 && utf8.RuneStart(ch)
			if boundary && ch == '"' {
				break
			}
			if boundary {
				boundary = !(c.pair && ch == '\\')
				c.pair = false
			}
			if boundary && c.inHead && c.head >= int64(c.keepHead) {
				c.emit(b[run:i])
				run, c.inHead = i, false
			}
			switch {
			case c.afterBS:
				c.afterBS = false
				if ch == 'u' {
					c.hex, c.hexVal = 4, 0
				}
			case c.hex > 0:
				c.hex--
				c.hexVal = c.hexVal<<4 | hexDigit(ch)
				c.pair = c.hex == 0 && utf16.IsSurrogate(c.hexVal) && c.hexVal < 0xdc00
			case ch == '\\':
				c.afterBS = true
			}
			c.size++
			if c.inHead {
				c.head++
			}
		}
		if c.inHead {
			c.emit(b[run:i])
		} else {
			c.tail = append(c.tail, b[run:i]...)
			if len(c.tail) >= 2*c.keepTail {
				c.shiftTail()
			}
		}
		if i < len(b) { // the closing quote
			c.closeString()
			c.emit(b[i : i+1])
			i++
		}
	}
}

// shiftTail drops the start of the tail window, keeping its last keepTail
// bytes or a little more: it starts on a character or escape.
func (c *cutter) shiftTail() {
	at := unitStart(c.tail, len(c.tail)-c.keepTail)
	c.tailCut += int64(at)
	c.tail = append(c.tail[:0], c.tail[at:]...)
}

// closeString ends the current string: its tail, after a marker when
// anything was cut.
func (c *cutter) closeString() {
	c.inStr = false
	if len(c.tail) > c.keepTail {
		c.shiftTail()
	}
	if c.tailCut > 0 {
		c.emit([]byte(cutMarker(c.size-c.head-int64(len(c.tail)), c.size)))
	}
	c.emit(c.tail)
}

// emit appends to the output unless it is over its cap.
func (c *cutter) emit(b []byte) {
	if c.over {
		return
	}
	if len(c.out)+len(b) > c.maxOut {
		c.over, c.out = true, c.out[:0]
		return
	}
	c.out = append(c.out, b...)
}

// finish returns the cut line, or false when it is too long even cut.
func (c *cutter) finish() ([]byte, bool) {
	if c.inStr {
		// No closing quote (not JSON): what was kept goes to the parser,
		// which says so.
		c.emit(c.tail)
	}
	return c.out, !c.over
}

// unitStart is the first offset at or after from (within s) where a
// character or an escape of the JSON string content s starts: never inside
// a UTF-8 sequence or an escape, which is told by scanning s from its
// start (which is one). An escape that s holds only the start of (its
// end still to come) is where it stops, before from if need be: the
// window never drops part of one.
func unitStart(s []byte, from int) int {
	from = max(0, min(from, len(s)))
	i := 0
	for i < from {
		n := escapeLen(s[i:])
		if n > len(s)-i {
			return i
		}
		i += n
	}
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return min(i, len(s))
}

// escapeLen is how many bytes the unit of string content at the start of s
// takes: an escape (a surrogate pair of \u escapes is one character), or
// one byte. It may be more than len(s) when s ends inside the unit; a high
// surrogate's escape at s's end counts as the start of a pair.
func escapeLen(s []byte) int {
	switch {
	case s[0] != '\\':
		return 1
	case len(s) < 2:
		return 2
	case s[1] != 'u':
		return 2
	}
	r := hex4(s[2:])
	if r < 0 && len(s) < 6 {
		return 6
	}
	if r >= 0xd800 && r < 0xdc00 {
		// A surrogate pair is one character.
		if len(s) < 8 || s[6] == '\\' && s[7] == 'u' {
			return 12
		}
	}
	return 6
}

// hexDigit is the value of a hex digit (0 for anything else: the parser
// rejects what is not JSON).
func hexDigit(c byte) rune {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c - 'a' + 10)
	case c >= 'A' && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return 0
}
