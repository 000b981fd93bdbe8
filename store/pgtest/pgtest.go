package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
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
	return create(t, "template0", "")
}

// URLInCLocale creates an empty database as URL does, with the C locale
// (LC_COLLATE and LC_CTYPE C, as initdb makes a cluster's when no locale
// is set), whatever the server's default.
func URLInCLocale(t testing.TB) string {
	t.Helper()
	return create(t, "template0", ` LC_COLLATE 'C' LC_CTYPE 'C'`)
}

// template is a database made once per test process, that others are
// copied from.
type template struct {
	once sync.Once
	name string
	err  error
}

var templates sync.Map // key → *template

// templatePrefix names the template databases; the Unix time of their
// making follows, so that a later process can drop those a killed one left.
const templatePrefix = "ledger_tmpl_"

// Migrated creates a database on the test server for t, dropped when t
// ends, as a copy of a template that prepare made (once per test process
// and key: migrated, say; prepare must close its connections), and
// returns its URL. A copy (CREATE DATABASE … TEMPLATE) costs the server
// a file copy, where running the migrations again would cost it every
// statement of every migration.
func Migrated(t testing.TB, key string, prepare func(url string) error) string {
	t.Helper()
	server := Server(t)
	v, _ := templates.LoadOrStore(key, &template{})
	tm := v.(*template)
	tm.once.Do(func() { tm.name, tm.err = makeTemplate(server, prepare) })
	if tm.err != nil {
		t.Fatalf("make the template database: %v", tm.err)
	}
	return create(t, tm.name, "")
}

// makeTemplate creates a database, has prepare fill it, and returns its
// name. It is left on the server when the process ends (a test process
// has no end of its own to drop it at): each new one drops those older
// than a day.
func makeTemplate(server string, prepare func(url string) error) (string, error) {
	u, err := url.Parse(server)
	if err != nil {
		return "", err
	}
	admin, err := sql.Open("pgx", server)
	if err != nil {
		return "", err
	}
	defer admin.Close()
	ctx := context.Background()
	dropStaleTemplates(ctx, admin)
	name := fmt.Sprintf("%s%d_%d_%d", templatePrefix, time.Now().Unix(), os.Getpid(), seq.Add(1))
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE `+name+` TEMPLATE template0 ENCODING 'UTF8'`); err != nil {
		return "", fmt.Errorf("create: %w", err)
	}
	u.Path = "/" + name
	if err := prepare(u.String()); err != nil {
		admin.ExecContext(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
		return "", fmt.Errorf("prepare: %w", err)
	}
	return name, nil
}

// dropStaleTemplates drops the template databases made more than a day
// ago: no test process lasts that long, so their makers are gone.
func dropStaleTemplates(ctx context.Context, admin *sql.DB) {
	rows, err := admin.QueryContext(ctx, `SELECT datname FROM pg_database WHERE datname LIKE $1`, templatePrefix+"%")
	if err != nil {
		return
	}
	var stale []string
	for rows.Next() {
		var name string
		if rows.Scan(&name) != nil {
			continue
		}
		made, _, _ := strings.Cut(strings.TrimPrefix(name, templatePrefix), "_")
		if sec, err := strconv.ParseInt(made, 10, 64); err == nil && time.Since(time.Unix(sec, 0)) > 24*time.Hour {
			stale = append(stale, name)
		}
	}
	rows.Close()
	for _, name := range stale {
		admin.ExecContext(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
	}
}

// create creates a database for t as a copy of the template database
// from, dropped when t ends, and returns its URL.
func create(t testing.TB, from, locale string) string {
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
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE `+name+` TEMPLATE `+from+` ENCODING 'UTF8'`+locale); err != nil {
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
