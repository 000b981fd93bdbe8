package transcript

// A small validating JSON scanner for the Claude reader's hot path.
//
// encoding/json scans every byte of a line with a state machine at least
// twice (checkValid, then decode) and twice more for a json.RawMessage it
// hands back, which made the reader spend most of its time re-reading
// bytes it throws away: the toolUseResult copy of every tool output, the
// data of progress lines, signatures. This scanner validates a line in one
// pass that skims strings a table lookup per byte, hands back the spans of
// the fields the reader wants, and unquotes only those. It accepts exactly
// the JSON that encoding/json accepts (FuzzScanner checks that) and it
// decodes strings as encoding/json does, given valid UTF-8 (Read repairs
// lines before parsing).

import (
	"bytes"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth is the deepest nesting accepted, as in encoding/json.
const maxDepth = 10000

// strPlain marks the bytes that may stand in a JSON string unescaped.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func skipWS(d []byte, i int) int {
	for i < len(d) {
		switch d[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue returns the index just after the value at d[i], or -1 when
// there is no valid value there.
func skipValue(d []byte, i, depth int) int {
	if i >= len(d) {
		return -1
	}
	switch c := d[i]; {
	case c == '"':
		return skipString(d, i)
	case c == '{':
		return skipObject(d, i, depth+1, nil)
	case c == '[':
		return skipArray(d, i, depth+1, nil)
	case c == 't':
		return skipLiteral(d, i, "true")
	case c == 'f':
		return skipLiteral(d, i, "false")
	case c == 'n':
		return skipLiteral(d, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return skipNumber(d, i)
	}
	return -1
}

func skipLiteral(d []byte, i int, lit string) int {
	if len(d)-i < len(lit) || string(d[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

func skipString(d []byte, i int) int {
	i++
	for {
		for i < len(d) && strPlain[d[i]] {
			i++
		}
		if i >= len(d) {
			return -1
		}
		switch d[i] {
		case '"':
			return i + 1
		case '\\':
			if i+1 >= len(d) {
				return -1
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if hex4(d[i+2:]) < 0 {
					return -1
				}
				i += 6
			default:
				return -1
			}
		default: // a control character
			return -1
		}
	}
}

// hex4 is the value of the four hex digits d starts with, or -1.
func hex4(d []byte) rune {
	if len(d) < 4 {
		return -1
	}
	var r rune
	for _, c := range d[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

func skipDigits(d []byte, i int) int {
	for i < len(d) && d[i] >= '0' && d[i] <= '9' {
		i++
	}
	return i
}

func skipNumber(d []byte, i int) int {
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		i = skipDigits(d, i+1)
	default:
		return -1
	}
	if i < len(d) && d[i] == '.' {
		j := skipDigits(d, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := skipDigits(d, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

// skipObject skips the object at d[i], calling fn (when not nil) with the
// raw key (quotes included) and raw value of each field as it goes. A
// caller must ignore what fn saw when skipObject then returns -1.
func skipObject(d []byte, i, depth int, fn func(key, val []byte)) int {
	if depth > maxDepth {
		return -1
	}
	i = skipWS(d, i+1)
	if i < len(d) && d[i] == '}' {
		return i + 1
	}
	for {
		if i >= len(d) || d[i] != '"' {
			return -1
		}
		ks := i
		if i = skipString(d, i); i < 0 {
			return -1
		}
		ke := i
		if i = skipWS(d, i); i >= len(d) || d[i] != ':' {
			return -1
		}
		vs := skipWS(d, i+1)
		if i = skipValue(d, vs, depth); i < 0 {
			return -1
		}
		if fn != nil {
			fn(d[ks:ke], d[vs:i])
		}
		if i = skipWS(d, i); i >= len(d) {
			return -1
		}
		switch d[i] {
		case ',':
			i = skipWS(d, i+1)
		case '}':
			return i + 1
		default:
			return -1
		}
	}
}

// skipArray is skipObject for arrays: fn sees each element.
func skipArray(d []byte, i, depth int, fn func(val []byte)) int {
	if depth > maxDepth {
		return -1
	}
	i = skipWS(d, i+1)
	if i < len(d) && d[i] == ']' {
		return i + 1
	}
	for {
		vs := i
		if i = skipValue(d, i, depth); i < 0 {
			return -1
		}
		if fn != nil {
			fn(d[vs:i])
		}
		if i = skipWS(d, i); i >= len(d) {
			return -1
		}
		switch d[i] {
		case ',':
			i = skipWS(d, i+1)
		case ']':
			return i + 1
		default:
			return -1
		}
	}
}

// scanKind says what scanObject found.
type scanKind int

const (
	scanInvalid   scanKind = iota // not JSON
	scanNotObject                 // JSON, but not an object
	scanObject                    // an object: fn saw its fields
)

// eachField checks that d (white space around it allowed) is one JSON
// value and, when it is an object, calls fn for each field.
func eachField(d []byte, fn func(key, val []byte)) scanKind {
	i := skipWS(d, 0)
	if i < len(d) && d[i] == '{' {
		if end := skipObject(d, i, 1, fn); end >= 0 && skipWS(d, end) == len(d) {
			return scanObject
		}
		return scanInvalid
	}
	if end := skipValue(d, i, 0); end >= 0 && skipWS(d, end) == len(d) {
		return scanNotObject
	}
	return scanInvalid
}

// fieldsOf calls fn for each field of val, a value the scanner already
// validated, and reports whether it is an object.
func fieldsOf(val []byte, fn func(key, val []byte)) bool {
	if len(val) == 0 || val[0] != '{' {
		return false
	}
	return skipObject(val, 0, 1, fn) >= 0
}

// elemsOf calls fn for each element of val, a validated value, and
// reports whether it is an array.
func elemsOf(val []byte, fn func(val []byte)) bool {
	if len(val) == 0 || val[0] != '[' {
		return false
	}
	return skipArray(val, 0, 1, fn) >= 0
}

// key returns raw key k decoded, without allocating for plain keys used in
// a switch.
func key(k []byte) string {
	if bytes.IndexByte(k, '\\') < 0 {
		return string(k[1 : len(k)-1])
	}
	return unquote(k)
}

// unquote decodes a validated JSON string literal, as encoding/json does:
// a lone or reversed surrogate becomes U+FFFD.
func unquote(s []byte) string {
	s = s[1 : len(s)-1]
	i := bytes.IndexByte(s, '\\')
	if i < 0 {
		return string(s)
	}
	b := make([]byte, 0, len(s))
	for {
		b = append(b, s[:i]...)
		s = s[i:]
		if len(s) == 0 {
			return string(b)
		}
		// s[0] == '\\'
		switch c := s[1]; c {
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r := hex4(s[2:])
			s = s[6:]
			if utf16.IsSurrogate(r) {
				if len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
					if dec := utf16.DecodeRune(r, hex4(s[2:])); dec != unicode.ReplacementChar {
						b = utf8.AppendRune(b, dec)
						s = s[6:]
						goto next
					}
				}
				r = unicode.ReplacementChar
			}
			b = utf8.AppendRune(b, r)
			goto next
		default: // '"', '\\', '/'
			b = append(b, c)
		}
		s = s[2:]
	next:
		if i = bytes.IndexByte(s, '\\'); i < 0 {
			i = len(s)
		}
	}
}

// asString returns the string a validated value holds: ok is false when it
// is not a string (null is "", like a missing field).
func asString(v []byte) (string, bool) {
	switch {
	case len(v) > 0 && v[0] == '"':
		return unquote(v), true
	case string(v) == "null":
		return "", true
	}
	return "", false
}

// asBool is asString for booleans.
func asBool(v []byte) (bool, bool) {
	switch string(v) {
	case "true":
		return true, true
	case "false", "null":
		return false, true
	}
	return false, false
}

// asInt is asString for integers.
func asInt(v []byte) (int64, bool) {
	if string(v) == "null" {
		return 0, true
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}
