// Package secretstest makes live-shaped secrets and puts them where agent
// transcripts hold text, for the tests of secret redaction (the rules in
// store/secrets, and the whole ingest in cmd/ledger). Only tests import
// it.
package secretstest
