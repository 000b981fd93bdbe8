package secrets

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"

	"github.com/agentledger/ledger/compact"
)

// redactedPrefix starts every replacement, [REDACTED:<kind>] with kind the
// id of the rule that found the secret (aws-access-token, github-pat,
// generic-api-key, ...). A secret that contains it is a replacement found
// again, and is left alone.
const redactedPrefix = "[REDACTED:"

// minGlobalSecret is the shortest secret replaced wherever it occurs in a
// text; a shorter one (a URL's password "dev") is replaced only inside the
// match that found it, so that other words are not mangled.
const minGlobalSecret = 8

// apply replaces the findings in text, as they are and as they appear
// inside a JSON string (a tool input is raw JSON).
func apply(text string, fs []finding) string {
	for _, f := range fs {
		token := redactedPrefix + f.kind + "]"
		for _, v := range f.forms() {
			if len(f.secret) >= minGlobalSecret {
				text = strings.ReplaceAll(text, v.secret, token)
			} else if v.match != "" && strings.Contains(v.match, v.secret) {
				text = strings.ReplaceAll(text, v.match, strings.Replace(v.match, v.secret, token, 1))
			}
		}
	}
	return text
}

// forms is the finding as found and, when it differs, JSON-escaped.
func (f finding) forms() []finding {
	es, em := jsonEscape(f.secret), jsonEscape(f.match)
	if es == f.secret && em == f.match {
		return []finding{f}
	}
	return []finding{f, {kind: f.kind, secret: es, match: em}}
}

func jsonEscape(s string) string {
	if !strings.ContainsAny(s, "\"\\\n\r\t") {
		return s
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// left reports whether any finding is still in text.
func left(text string, fs []finding) bool {
	for _, f := range fs {
		for _, v := range f.forms() {
			if len(v.secret) >= minGlobalSecret && strings.Contains(text, v.secret) ||
				len(f.secret) < minGlobalSecret && v.match != "" && strings.Contains(text, v.match) {
				return true
			}
		}
	}
	return false
}

// Redact returns text with every secret replaced by [REDACTED:<kind>], and
// how many secrets it found. Only the secret is replaced, not the line
// around it, so the rest stays searchable.
func (r *Redactor) Redact(text string) (string, int) {
	if plainID(text) {
		return text, 0
	}
	fs := r.find(text)
	if len(fs) == 0 {
		return text, 0
	}
	return apply(text, fs), len(fs)
}

// redactInput redacts a tool input (raw JSON) as RedactMessage does.
func (r *Redactor) redactInput(input string) string {
	fs := r.find(input + decodedInput(input))
	return apply(input, fs)
}

// RedactMessage returns m with the secrets of its text, thinking, tool
// names, ids, inputs and tool results replaced, its search text (the result's
// SearchText), and how many secrets it found. m itself is not changed.
//
// The message is scanned once, as its search text plus the decoded
// strings of its tool inputs, and the findings replaced in each block. A
// tool input is raw JSON: a file written through it has its quotes escaped
// (const apiKey = \"...\"), and gitleaks' rules that read the name a
// value is assigned to do not see through the escapes; decoded, they do. A
// secret that spans two blocks sends each block through the scan on its
// own.
func (r *Redactor) RedactMessage(m compact.Message) (compact.Message, string, int) {
	text := m.SearchText()
	fs := r.find(text + decodedInputs(m) + toolIDs(m))
	if len(fs) == 0 {
		return m, text, 0
	}
	blocks := make([]compact.Block, len(m.Blocks))
	copy(blocks, m.Blocks)
	for i := range blocks {
		blocks[i].Text = apply(blocks[i].Text, fs)
		blocks[i].Input = apply(blocks[i].Input, fs)
		blocks[i].ToolName, _ = r.Redact(blocks[i].ToolName)
		blocks[i].ToolID, _ = r.Redact(blocks[i].ToolID)
	}
	m.Blocks = blocks
	text = m.SearchText()
	if left(text, fs) {
		for i := range blocks {
			blocks[i].Text, _ = r.Redact(blocks[i].Text)
			blocks[i].Input = r.redactInput(blocks[i].Input)
		}
		text = m.SearchText()
	}
	return m, text, len(fs)
}

// toolIDs is the message's tool ids, one a line after a newline ("" if
// none): the search text does not hold them, and a transcript may put a
// secret there too.
func toolIDs(m compact.Message) string {
	var sb strings.Builder
	for _, b := range m.Blocks {
		if b.ToolID != "" {
			sb.WriteString("\n" + b.ToolID)
		}
	}
	return sb.String()
}

// decodedInputs is the decoded strings of the message's tool inputs that
// hold escapes, one "name: value" per line, after a newline; "" if none.
func decodedInputs(m compact.Message) string {
	var sb strings.Builder
	for _, b := range m.Blocks {
		if b.Kind == compact.BlockToolUse {
			sb.WriteString(decodedInput(b.Input))
		}
	}
	return sb.String()
}

func decodedInput(input string) string {
	if !strings.Contains(input, `\`) {
		return ""
	}
	var v any
	if json.Unmarshal([]byte(input), &v) != nil {
		return ""
	}
	var sb strings.Builder
	var walk func(name string, v any)
	walk = func(name string, v any) {
		switch v := v.(type) {
		case string:
			sb.WriteString("\n")
			if name != "" {
				sb.WriteString(name + ": ")
			}
			sb.WriteString(v)
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys) // the same scan, and so the same result, every time
			for _, k := range keys {
				walk(k, v[k])
			}
		case []any:
			for _, x := range v {
				walk(name, x)
			}
		}
	}
	walk("", v)
	return sb.String()
}

// RedactStrings returns a copy of v (a struct, such as a handoff.Doc) with
// r.Redact applied to every exported string in it, slices and nested structs
// included, and how many secrets it found. v itself is not changed.
func RedactStrings[T any](r *Redactor, v T) (T, int) {
	n := 0
	var walk func(reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.String:
			if v.CanSet() {
				if s, k := r.Redact(v.String()); k > 0 {
					v.SetString(s)
					n += k
				}
			}
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		case reflect.Slice:
			if v.IsNil() || !v.CanSet() {
				return
			}
			// A fresh backing array, so the caller's slice is not written.
			c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			reflect.Copy(c, v)
			for i := range c.Len() {
				walk(c.Index(i))
			}
			v.Set(c)
		}
	}
	walk(reflect.ValueOf(&v).Elem())
	return v, n
}

// plainID tells whether s is made of lower-case hex digits and dashes
// only, no run of digits longer than 41 (a UUID, a commit, a hash): no
// rule can find a secret in it. The rules whose keywords such a text can
// hold (4b1d, acca, eaaa, eaac, a3-) either need the upper-case form or a
// longer run of letters and digits (TestPlainIDShortcut watches that list).
// Ids and hashes pass through the store's write path by the thousand:
// they are let through without a scan, and without loading the rules.
func plainID(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9' || 'a' <= c && c <= 'f':
			if run++; run > 41 {
				return false
			}
		case c == '-':
			run = 0
		default:
			return false
		}
	}
	return true
}
