//go:build !unix

package store

import (
	"context"
	"database/sql"
)

// migrationLock is nothing where there is no flock: processes that open a
// new ledger at once may then apply a migration twice (see the unix one).
type migrationLock struct{ path string }

func (*migrationLock) Lock(context.Context, *sql.DB) error   { return nil }
func (*migrationLock) Unlock(context.Context, *sql.DB) error { return nil }
