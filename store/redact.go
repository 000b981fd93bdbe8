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
func (s *Store) Redacts() bool { return s.redactor != nil }

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
