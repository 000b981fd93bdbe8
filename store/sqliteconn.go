package store

import (
	"context"
	"database/sql"
	"database/sql/driver"

	"github.com/jmoiron/sqlx"
	"modernc.org/sqlite"

	"github.com/agentledger/ledger/store/secrets"
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
// sql.OpenDB: nothing is registered with database/sql. What they write is
// redacted with redactor (nil: nothing is; see redactdriver.go).
type sqliteConnector struct {
	dsn      string
	redactor *secrets.Redactor
}

func (c sqliteConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := sqliteDriver.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return &redactingConn{Conn: conn, redactor: c.redactor}, nil
}

func (c sqliteConnector) Driver() driver.Driver { return sqliteDriver }

// openSQLiteDB returns a pool of the store's connections to dsn, whose
// writes are redacted with r (nil: none are). Like sql.Open it connects
// to nothing yet; the name "sqlite" tells sqlx (and schemaVersion) the
// dialect.
func openSQLiteDB(dsn string, r *secrets.Redactor) *sqlx.DB {
	return sqlx.NewDb(sql.OpenDB(sqliteConnector{dsn, r}), "sqlite")
}
