package postgres

import "embed"

// FS holds the migrations, named NNNNN_description.sql.
//
//go:embed *.sql
var FS embed.FS
