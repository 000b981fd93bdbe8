package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
)

// Env is the variable that names the test server: a postgres:// URL of a
// role that may create databases.
const Env = "LEDGER_TEST_POSTGRES"

var seq atomic.Int64

// Server returns the test server's URL, or skips t (fails it in CI) when
// there is none.
func Server(t testing.TB) string {
	t.Helper()
	u := os.Getenv(Env)
	if u == "" {
		if os.Getenv("CI") != "" || os.Getenv("LEDGER_REQUIRE_POSTGRES") != "" {
			t.Fatalf("$%s is not set, and CI needs the PostgreSQL tests to run (.ci/run starts a server)", Env)
		}
		t.Skipf("no PostgreSQL server: set $%s (e.g. postgres://postgres@/postgres?host=/tmp/pg/sock) to run this test", Env)
	}
	return u
}

// URL creates an empty database on the test server for t, dropped when
// t ends, and returns its URL.
func URL(t testing.TB) string {
	t.Helper()
	server := Server(t)
	u, err := url.Parse(server)
	if err != nil {
		t.Fatalf("$%s: %v", Env, err)
	}
	name := fmt.Sprintf("ledger_test_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6, seq.Add(1))
	admin, err := sql.Open("pgx", server)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE `+name+` TEMPLATE template0 ENCODING 'UTF8'`); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("pgx", server)
		if err != nil {
			return
		}
		defer admin.Close()
		admin.ExecContext(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
	})
	u.Path = "/" + name
	return u.String()
}
