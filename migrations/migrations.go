// Package migrations holds ledger's schema as goose SQL migrations, embedded
// in the binary so that `ledger` migrates its database wherever it runs.
package migrations

import "embed"

// FS holds the migrations, named NNNNN_description.sql.
//
//go:embed *.sql
var FS embed.FS
