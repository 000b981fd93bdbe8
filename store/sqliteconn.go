package store

import (
	"context"
	"database/sql"
	"database/sql/driver"

	"github.com/jmoiron/sqlx"
	"modernc.org/sqlite"
)

// sqliteDriver is the modernc driver the store's SQLite connections come
// from: a Driver of its own rather than the one the sqlite package
// registers as "sqlite", so that its connection hook (persistWAL) reaches
// the connections the store opens and no other connection of a program
// that imports store.
var sqliteDriver = func() *sqlite.Driver {
	d := &sqlite.Driver{}
	d.RegisterConnectionHook(persistWAL)
	return d
}()

// sqliteConnector opens sqliteDriver's connections to dsn, for
// sql.OpenDB: nothing is registered with database/sql.
type sqliteConnector struct{ dsn string }

func (c sqliteConnector) Connect(context.Context) (driver.Conn, error) {
	return sqliteDriver.Open(c.dsn)
}

func (c sqliteConnector) Driver() driver.Driver { return sqliteDriver }

// openSQLiteDB returns a pool of the store's connections to dsn. Like
// sql.Open it connects to nothing yet; the name "sqlite" tells sqlx (and
// schemaVersion) the dialect.
func openSQLiteDB(dsn string) *sqlx.DB {
	return sqlx.NewDb(sql.OpenDB(sqliteConnector{dsn}), "sqlite")
}
