package store

import (
	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/store/secrets"
)

// Option configures a Store at Open.
type Option func(*Store)

// WithoutRedaction stores text as it comes, secrets included: in the
// database, in its WAL and in the full-text index, where search finds
// them, until `ledger redact --rescan` removes them.
func WithoutRedaction() Option { return func(s *Store) { s.redactor = nil } }

// Redacts tells whether the store replaces secrets in what it writes.
func (s *Store) Redacts() bool { return s.redactor != nil && !s.readOnly }

// SecretRulesLoaded tells whether the store's Redactor has compiled its
// rules: only writing does, so commands that only read never pay for it.
func (s *Store) SecretRulesLoaded() bool { return s.redactor != nil && s.redactor.Loaded() }

// RedactHandoff returns d with the secrets in its sections replaced (d is
// not changed); with redaction off it returns d. Callers that render or
// write a handoff before storing it (a --task typed on the command line
// can carry a secret) redact it first; AddHandoff redacts again anyway.
func (s *Store) RedactHandoff(d handoff.Doc) handoff.Doc {
	if s.redactor != nil {
		d, _ = secrets.RedactStrings(s.redactor, d)
	}
	return d
}

// StoredKey is a key (a session id, a project's or a file's path) as the
// store writes it: redacted as any text it stores, so that a lookup by the
// key an agent or a user gives finds the row a write stored under it. It
// is k itself with redaction off, and for ids made of hex digits and
// dashes (UUIDs), which need no scan and load no rules.
func (s *Store) StoredKey(k string) string {
	if s.redactor == nil {
		return k
	}
	k, _ = s.redactor.Redact(k)
	return k
}

// otherKey is the stored form of k when it differs from k: the second key
// a lookup that missed k tries ("" when there is none).
func (s *Store) otherKey(k string) string {
	if sk := s.StoredKey(k); sk != k {
		return sk
	}
	return ""
}

// RedactFile returns data, the content of a file ledger writes (a
// handoff's Markdown, a pending draft, an export), with its secrets
// replaced as the store's connection replaces them in what it writes: a
// JSON document string by string, anything else as text. With redaction
// off it is data itself.
func (s *Store) RedactFile(data []byte) []byte {
	if s.redactor == nil {
		return data
	}
	if r, _ := redactValue(s.redactor, string(data)); r != string(data) {
		return []byte(r)
	}
	return data
}

// RedactText returns text (a log line) with its secrets replaced, unless
// redaction is off.
func (s *Store) RedactText(text string) string {
	if s.redactor == nil {
		return text
	}
	text, _ = s.redactor.Redact(text)
	return text
}

// defaultRedactor redacts for RedactText, when no store is open. It
// compiles nothing until a text needs it.
var defaultRedactor = secrets.New()

// RedactText returns text with its secrets replaced by the default rules:
// for what ledger writes when no store could be opened (the hook log).
func RedactText(text string) string {
	text, _ = defaultRedactor.Redact(text)
	return text
}
