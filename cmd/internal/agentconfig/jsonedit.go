package agentconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// The edits below work on the user's bytes: gjson finds where a value is,
// sjson deletes and replaces values in place, and an insertion is spliced
// in after the last sibling in the file's own style (its indentation, or
// none for a one-line file). Deleting an element that has a sibling before
// it (sjson) removes exactly what inserting it added: a comma, the line
// break and indentation, and the value.

// errNotObject says a settings file is not a JSON object.
var errNotObject = errors.New("not a JSON object")

// root parses doc, which must be one JSON object.
func root(doc []byte) (gjson.Result, error) {
	if !gjson.ValidBytes(doc) {
		return gjson.Result{}, errors.New("not valid JSON")
	}
	r := gjson.ParseBytes(doc)
	if !r.IsObject() {
		return gjson.Result{}, errNotObject
	}
	return r, nil
}

// style is how a file lays out its JSON.
type style struct {
	unit      string // one level of indentation ("" for a one-line file)
	multiline bool
}

// styleOf reads the layout of doc from its first member: a file of one
// line stays on one line; otherwise the first member's indentation is one
// level (two spaces when the file gives no example).
func styleOf(doc []byte, r gjson.Result) style {
	if !bytes.Contains(doc, []byte("\n")) && len(bytes.TrimSpace(doc)) > 2 {
		return style{}
	}
	s := style{unit: "  ", multiline: true}
	r.ForEach(func(key, _ gjson.Result) bool {
		if in := lineIndent(doc, key.Index); in != "" {
			s.unit = in
		}
		return false
	})
	return s
}

// lineIndent is the white space that starts the line holding pos.
func lineIndent(doc []byte, pos int) string {
	start := bytes.LastIndexByte(doc[:pos], '\n') + 1
	end := start
	for end < len(doc) && (doc[end] == ' ' || doc[end] == '\t') {
		end++
	}
	return string(doc[start:end])
}

// encode writes v as JSON at the given indentation, in the file's style.
func (s style) encode(v any, indent string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if s.multiline {
		enc.SetIndent(indent, s.unit)
	}
	enc.Encode(v) // values ledger builds always encode
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// container is an object or array found at a path ("" for the root).
func container(doc []byte, path string) gjson.Result {
	if path != "" {
		return gjson.GetBytes(doc, path)
	}
	// gjson.Parse takes the root's Raw to the end of the input, white space
	// included, and leaves its Index at 0: bound it by its braces.
	start, end := bytes.IndexByte(doc, '{'), bytes.LastIndexByte(doc, '}')
	if start < 0 || end < start {
		return gjson.Result{}
	}
	r := gjson.ParseBytes(doc[start : end+1])
	r.Index = start
	return r
}

// insert adds a member (key != "") to the object at path, or an element
// (key == "") to the array at path, after its last one.
func insert(doc []byte, s style, path, key string, v any) ([]byte, error) {
	c := container(doc, path)
	switch {
	case key == "" && !c.IsArray():
		return nil, errors.New("not a list")
	case key != "" && !c.IsObject():
		return nil, errors.New("not an object")
	}
	var lastEnd, lastStart int
	c.ForEach(func(k, val gjson.Result) bool {
		lastStart, lastEnd = val.Index, val.Index+len(val.Raw)
		if c.IsObject() {
			lastStart = k.Index
		}
		return true
	})
	outer := lineIndent(doc, c.Index)
	indent := outer + s.unit
	if lastEnd > 0 {
		indent = lineIndent(doc, lastStart)
	}
	var item []byte
	if key != "" {
		item = append(s.encode(key, ""), ':')
		if s.multiline {
			item = append(item, ' ')
		}
	}
	item = append(item, s.encode(v, indent)...)
	nl := ""
	if s.multiline {
		nl = "\n"
	}
	if lastEnd > 0 {
		return splice(doc, lastEnd, lastEnd, ","+nl+indent+string(item)), nil
	}
	// An empty container: it becomes one holding the item.
	open, end := c.Raw[:1], c.Raw[len(c.Raw)-1:]
	raw := open + nl + indent + string(item) + nl + outer + end
	return splice(doc, c.Index, c.Index+len(c.Raw), raw), nil
}

func splice(doc []byte, from, to int, with string) []byte {
	out := make([]byte, 0, len(doc)+len(with))
	out = append(out, doc[:from]...)
	out = append(out, with...)
	return append(out, doc[to:]...)
}

// remove deletes the value at path with the comma before it (sjson), the
// inverse of insert. The only member of a container leaves it empty ("{}",
// "[]"), as insert found it.
func remove(doc []byte, path string) ([]byte, error) {
	parentPath := ""
	if i := lastDot(path); i >= 0 {
		parentPath = path[:i]
	}
	if p := container(doc, parentPath); p.IsObject() && len(p.Map()) == 1 || p.IsArray() && len(p.Array()) == 1 {
		return splice(doc, p.Index, p.Index+len(p.Raw), p.Raw[:1]+p.Raw[len(p.Raw)-1:]), nil
	}
	return sjson.DeleteBytes(doc, path)
}

// lastDot is the index of the last unescaped '.' of a path, or -1.
func lastDot(path string) int {
	last := -1
	for i := 0; i < len(path); i++ {
		switch path[i] {
		case '\\':
			i++
		case '.':
			last = i
		}
	}
	return last
}

// pathKey escapes a key for a gjson/sjson path.
func pathKey(k string) string {
	var b strings.Builder
	for _, r := range k {
		if strings.ContainsRune(`.*?|#@\!=<>%`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// EmptyObject tells a settings document that says nothing: an empty JSON
// object, white space around it.
func EmptyObject(doc []byte) bool {
	r := gjson.ParseBytes(doc)
	return r.IsObject() && len(r.Map()) == 0
}
