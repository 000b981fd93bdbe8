// Package migrations holds ledger's schema as goose SQL migrations, embedded
// in the binary so that `ledger` migrates its database wherever it runs.
package migrations
