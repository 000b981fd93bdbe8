package secrets

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
)

// RedactJSON returns doc, a JSON document, with the secrets of its strings
// (keys and values) replaced, and how many it found; a document that does
// not decode is redacted as text. Each string is scanned decoded, which is
// what a rule must read (an escaped quote or newline hides an assignment
// from it), on its own and, for a member's value, after its name ("name:
// value": a rule that reads the name a value is assigned to sees it). A
// replacement never breaks the document: the strings are encoded again.
// A document with nothing to replace is returned as it is, byte for byte.
func (r *Redactor) RedactJSON(doc string) (string, int) {
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber() // an int64 stays exact
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return r.Redact(doc)
	}
	// Found in each string, replaced in all: a secret found in one is
	// replaced wherever it occurs, as Redact does in a text.
	var fs []finding
	r.findValue("", v, &fs)
	if len(fs) == 0 {
		return doc, 0
	}
	fs = dedupe(fs)
	v = replaceValue(v, fs)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return r.Redact(doc)
	}
	return strings.TrimSuffix(b.String(), "\n"), len(fs)
}

// findValue appends the secrets in v, a decoded JSON value that is name's
// value ("" in an array or at the top), to fs: each string's own, and
// those reading it after its name finds.
func (r *Redactor) findValue(name string, v any, fs *[]finding) {
	switch v := v.(type) {
	case string:
		if plainID(v) {
			return
		}
		*fs = append(*fs, r.find(v)...)
		// After its name only when the name holds a keyword: a rule that
		// reads a name needs its keyword there; any other match is in the
		// value alone.
		if name != "" && r.hasKeyword(name) {
			for _, f := range r.find(name + ": " + v) {
				if strings.Contains(v, f.secret) {
					*fs = append(*fs, f)
				}
			}
		}
	case []any:
		for _, x := range v {
			r.findValue(name, x, fs)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys) // the same scans, and so the same result, every time
		for _, k := range keys {
			r.findValue("", k, fs)
			r.findValue(k, v[k], fs)
		}
	}
}

// replaceValue replaces the findings in every string of v, keys included.
func replaceValue(v any, fs []finding) any {
	switch v := v.(type) {
	case string:
		return apply(v, fs)
	case []any:
		for i, x := range v {
			v[i] = replaceValue(x, fs)
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[apply(k, fs)] = replaceValue(x, fs)
		}
		return out
	}
	return v
}

// hasKeyword tells whether s holds one of the rules' keywords.
func (r *Redactor) hasKeyword(s string) bool {
	r.load()
	found := false
	r.keywords.each(s, func(int, int) { found = true })
	return found
}
