package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, to make the databases
)

// pgServer is -postgres: a PostgreSQL server on which each size is also
// ingested and searched (a role that may create databases).
var pgServer string

// pgResult is one size's figures on PostgreSQL, beside SQLite's.
type pgResult struct {
	messages int
	bytes    int64
	ingest   sample
	search   []searchResult
	// syncFresh is `ledger sync --to` of the size's SQLite ledger into a
	// new database; syncAgain the median of syncs with nothing new.
	syncFresh, syncAgain sample
}

var pgResults []*pgResult

// pgDatabase makes an empty database for a size on the server (dropping
// what an earlier run left) and returns its URL.
func pgDatabase(ctx context.Context, name string) (string, error) {
	admin, err := sql.Open("pgx", pgServer)
	if err != nil {
		return "", err
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
		return "", err
	}
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE `+name+` TEMPLATE template0 ENCODING 'UTF8'`); err != nil {
		return "", err
	}
	u, err := url.Parse(pgServer)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

// pgAnalyze gathers the planner's statistics of the ledger at db.
func pgAnalyze(ctx context.Context, db string) error {
	conn, err := sql.Open("pgx", db)
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = conn.ExecContext(ctx, `ANALYZE`)
	return err
}

// measurePostgres ingests each size's corpus into a new PostgreSQL ledger
// (once, as into SQLite) and times the same searches (the median of
// b.runs, after ANALYZE), with the current ledger.
func (b *bench) measurePostgres() error {
	b.cur = b.targets[len(b.targets)-1]
	for _, n := range b.sizes {
		c, err := b.corpus(n)
		if err != nil {
			return err
		}
		db, err := pgDatabase(b.ctx, fmt.Sprintf("ledger_bench_%d", n))
		if err != nil {
			return fmt.Errorf("make database: %w", err)
		}
		r := &pgResult{messages: n, bytes: c.bytes}
		if r.ingest, _, err = b.exec("", nil, "--db", db, "ingest", c.dir); err != nil {
			return err
		}
		b.logf("%s messages on PostgreSQL: ingest %v, %.1f MB/s", human(n), r.ingest.wall.Round(time.Millisecond), mbps(c.bytes, r.ingest.wall))
		// The searches run on the statistics autovacuum gathers within a
		// minute of a bulk ingest: without them the planner guesses.
		if err := pgAnalyze(b.ctx, db); err != nil {
			return fmt.Errorf("analyze: %w", err)
		}
		rare, err := rareIdent(sessionPath(c.dir, 0))
		if err != nil {
			return err
		}
		for _, q := range searchQueries(rare) {
			s, out, err := b.median("", nil, "--db", db, "search", q.q, "--limit", "20", "--json")
			if err != nil {
				return err
			}
			var hits []json.RawMessage
			if err := json.Unmarshal(out.head, &hits); err != nil {
				return fmt.Errorf("search %q: %w", q.q, err)
			}
			r.search = append(r.search, searchResult{label: q.label, query: q.q, ledger: s, hits: len(hits)})
			b.logf("  search %q: %v (%d hits)", q.q, s.wall.Round(time.Microsecond), len(hits))
		}
		sdb, err := pgDatabase(b.ctx, fmt.Sprintf("ledger_bench_sync_%d", n))
		if err != nil {
			return fmt.Errorf("make database: %w", err)
		}
		lite := b.dbPath(strconv.Itoa(n))
		if r.syncFresh, _, err = b.exec("", nil, "--db", lite, "sync", "--to", sdb); err != nil {
			return err
		}
		if r.syncAgain, _, err = b.median("", nil, "--db", lite, "sync", "--to", sdb); err != nil {
			return err
		}
		b.logf("  sync: %v into a new database, %v with nothing new", r.syncFresh.wall.Round(time.Millisecond), r.syncAgain.wall.Round(time.Millisecond))
		pgResults = append(pgResults, r)
	}
	return nil
}

// pgTable is the PostgreSQL figures beside the SQLite ones of the same run.
func (b *bench) pgTable() string {
	if len(pgResults) == 0 {
		return ""
	}
	t := b.targets[len(b.targets)-1]
	var sb strings.Builder
	sb.WriteString("\nSQLite and PostgreSQL (the same binary; PostgreSQL on this machine, over a unix socket):\n\n| measure |")
	for _, r := range pgResults {
		fmt.Fprintf(&sb, " SQLite %s | PostgreSQL %s |", human(r.messages), human(r.messages))
	}
	sb.WriteString("\n|---|")
	sb.WriteString(strings.Repeat("---|---|", len(pgResults)))
	sb.WriteString("\n| `ledger ingest DIR` (new database) |")
	for _, r := range pgResults {
		lite := t.sized[r.messages]
		fmt.Fprintf(&sb, " %s, %.1f MB/s | %s, %.1f MB/s |", ms(lite.ingest.wall), mbps(r.bytes, lite.ingest.wall), ms(r.ingest.wall), mbps(r.bytes, r.ingest.wall))
	}
	for i, q := range pgResults[0].search {
		fmt.Fprintf(&sb, "\n| `ledger search %s --limit 20` (%s) |", q.query, q.label)
		for _, r := range pgResults {
			lite := t.sized[r.messages].search[i]
			fmt.Fprintf(&sb, " %s (%d hits) | %s (%d hits) |", ms(lite.ledger.wall), lite.hits, ms(r.search[i].ledger.wall), r.search[i].hits)
		}
	}
	sb.WriteString("\n| `ledger sync --to URL` of the SQLite ledger: into a new database · nothing new (goal ≤ 100 ms) |")
	for _, r := range pgResults {
		fmt.Fprintf(&sb, " | %s · **%s** |", ms(r.syncFresh.wall), ms(r.syncAgain.wall))
	}
	sb.WriteString("\n")
	return sb.String()
}
