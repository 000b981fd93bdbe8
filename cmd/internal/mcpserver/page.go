package mcpserver

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentledger/ledger/handoff"
)

// Every result is capped: its text, and its structured content as JSON,
// each hold at most the server's MaxChars characters, so that no call
// floods the agent's context. Listings are cut between items; the text of
// a single document (a handoff's Markdown) between lines. What is left is
// one call away: the result says how much, and the cursor to pass.
//
// A cursor is an offset into the tool's full answer (for a handoff, the
// handoff's id with a character offset), so the pages of one answer are
// stable: calling again with the same arguments and cursor gives the same
// page, and the pages of an answer, in order, give the whole of it once,
// as long as the ledger holds the same data.

// notice labels a structured result: the fence of the text, in words.
const notice = handoff.RecordNote

// maxField is the most characters one free-text field of a listing (a
// snippet, a title) shows, so that one item always fits a page.
const maxField = 400

// chars is the length the cap counts.
func chars(s string) int { return utf8.RuneCountInString(s) }

// jsonLen is the length of v as JSON, as the cap counts it.
func jsonLen(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return utf8.RuneCount(b)
}

// offsetCursor reads a listing's cursor: "" is the start.
func offsetCursor(c string) (int, error) {
	if c == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(c)
	if err != nil || n < 0 {
		return 0, badCursor(c)
	}
	return n, nil
}

func badCursor(c string) error {
	return usageErrorf("cursor %q is not one this tool gave: pass the next_cursor of the previous result as it is, with the same other arguments, or leave cursor out to start from the beginning", c)
}

// moreLine is what follows a page that is not the last: how much is left
// and how to get it. It stands outside the fence: it is ledger's, not
// recorded data.
func moreLine(n int, unit, cursor string) string {
	return fmt.Sprintf("…%d more %s, call again with cursor=%s (the same other arguments)\n", n, unit, cursor)
}

// pageHead says what a page of a listing holds ("Sessions 1-5 of 12,
// newest activity first:", with items "sessions" and after ", newest
// activity first"), that no item is left, or, for a listing of none, empty.
func pageHead(p page, items, after, empty string) string {
	switch {
	case p.total == 0:
		return empty
	case p.n == 0:
		return fmt.Sprintf("No more %s: all %d were shown.\n", items, p.total)
	}
	return fmt.Sprintf("%s%s %d-%d of %d%s:\n", strings.ToUpper(items[:1]), items[1:], p.offset+1, p.offset+p.n, p.total, after)
}

// pageTail is the line after a page that is not the last.
func pageTail(p page, unit string) string {
	if c := p.next(); c != "" {
		return moreLine(p.more(), unit, c)
	}
	return ""
}

// page is one page of a listing of total items from offset on.
type page struct {
	offset, n, total int
}

// next is the cursor of the page after p, "" after the last.
func (p page) next() string {
	if p.offset+p.n >= p.total {
		return ""
	}
	return strconv.Itoa(p.offset + p.n)
}

// more is how many items follow p.
func (p page) more() int { return max(p.total-p.offset-p.n, 0) }

// fitPage finds the longest page of total items from offset on, at most
// limit of them (0: no limit), whose text and structured output render
// within max characters each; render(p) renders page p. A page holds at
// least one item when any is left: render clips long fields so that one
// always fits.
func fitPage(total, offset, limit, max int, render func(page) (string, any)) (string, any) {
	if offset > total {
		offset = total
	}
	hi := total - offset
	if limit > 0 && hi > limit {
		hi = limit
	}
	fits := func(n int) (string, any, bool) {
		text, out := render(page{offset, n, total})
		return text, out, chars(text) <= max && jsonLen(out) <= max
	}
	if text, out, ok := fits(hi); ok || hi <= 1 {
		return text, out
	}
	// The largest n in [1, hi) that fits: render costs grow with n, and
	// pages are tens of items, so a binary search is plenty.
	lo := 1
	for lo < hi-1 {
		mid := (lo + hi) / 2
		if _, _, ok := fits(mid); ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	text, out, _ := fits(lo)
	return text, out
}

// fenced wraps a listing's lines as recorded data, and puts ledger's own
// lines (what the page is, how to get more) outside the fence.
func fenced(head, body, tail string) string {
	var b strings.Builder
	b.WriteString(head)
	if body != "" {
		b.WriteString(handoff.Fence(body))
	}
	b.WriteString(tail)
	return b.String()
}

// textCursor is a cursor into one document: the document's id and a
// character offset in its text.
type textCursor struct {
	id     int64
	offset int
}

func (c textCursor) String() string { return fmt.Sprintf("%d:%d", c.id, c.offset) }

// parseTextCursor reads a textCursor; "" is none.
func parseTextCursor(c string) (textCursor, bool, error) {
	if c == "" {
		return textCursor{}, false, nil
	}
	a, b, ok := strings.Cut(c, ":")
	id, err1 := strconv.ParseInt(a, 10, 64)
	off, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || id <= 0 || off < 0 {
		return textCursor{}, false, badCursor(c)
	}
	return textCursor{id, off}, true, nil
}

// cutText is text from the character offset from on, at most n characters
// of it, cut after a line when one ends in the second half of the page;
// and the offset after the cut (len(text) at the end).
func cutText(text string, from, n int) (string, int) {
	r := []rune(text)
	if from >= len(r) {
		return "", len(r)
	}
	end := min(from+n, len(r))
	if end < len(r) {
		for i := end - 1; i > from+n/2; i-- {
			if r[i] == '\n' {
				end = i + 1
				break
			}
		}
	}
	return string(r[from:end]), end
}
