package transcript

import (
	"strings"

	"github.com/agentledger/ledger/compact"
)

// NUL characters never reach a record: SQLite's text functions stop at
// them, and no transcript means one. repair removes raw NUL bytes from a
// line before it is parsed; a NUL written as the JSON escape \u0000
// decodes into a string after that, and is removed here, from every string
// a record carries. A tool input is raw JSON: an escaped NUL in it is
// removed as the escape, which is where a reader of the input would meet
// it (an escaped backslash followed by u0000 is text, and stays).

// scrubNUL removes NUL characters from rec's strings, in place.
func scrubNUL(rec *Record) {
	if m := rec.Message; m != nil {
		for _, s := range []*string{&m.UUID, &m.ParentUUID, &m.SessionID, &m.Model, &m.ResponseID, &m.AgentID} {
			dropNUL(s)
		}
		role := string(m.Role)
		if dropNUL(&role) {
			m.Role = compact.Role(role)
		}
		for i := range m.Blocks {
			b := &m.Blocks[i]
			dropNUL(&b.Text)
			dropNUL(&b.ToolName)
			dropNUL(&b.ToolID)
			dropNUL(&b.Input)
			if isJSONText(b.Input) {
				b.Input = dropEscapedNUL(b.Input)
			}
		}
	}
	if b := rec.Boundary; b != nil {
		for _, s := range []*string{&b.UUID, &b.SessionID, &b.Trigger, &b.LogicalParentUUID, &b.Summary} {
			dropNUL(s)
		}
	}
	if s := rec.Session; s != nil {
		for _, p := range []*string{&s.ID, &s.Project, &s.GitBranch, &s.Title, &s.Model} {
			dropNUL(p)
		}
	}
}

// dropNUL removes the NUL characters of *s and reports whether there were
// any.
func dropNUL(s *string) bool {
	if strings.IndexByte(*s, 0) < 0 {
		return false
	}
	*s = strings.ReplaceAll(*s, "\x00", "")
	return true
}

// dropEscapedNUL removes the escapes \u0000 of a JSON text, leaving an
// escaped backslash followed by u0000 alone.
func dropEscapedNUL(s string) string {
	const esc = `\u0000`
	i := strings.Index(s, esc)
	if i < 0 {
		return s
	}
	var b strings.Builder
	for i >= 0 {
		// The escape is one only when the backslashes before it pair up.
		n := 0
		for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			b.WriteString(s[:i])
		} else {
			b.WriteString(s[:i+len(esc)])
		}
		s = s[i+len(esc):]
		i = strings.Index(s, esc)
	}
	b.WriteString(s)
	return b.String()
}

// isJSONText tells whether a tool input is JSON (an object or an array)
// rather than raw text (a Codex apply_patch).
func isJSONText(s string) bool {
	s = strings.TrimLeft(s, " \t\r\n")
	return s != "" && (s[0] == '{' || s[0] == '[')
}
