// Package secrets finds and replaces secrets in text before ledger stores
// it: gitleaks' maintained rule set plus a few of ledger's own, run only
// near each rule's keywords so that scanning keeps up with ingest. A
// Redactor compiles nothing until its first scan, so commands that only
// read never pay for the rules.
package secrets
