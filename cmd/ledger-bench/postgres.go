package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, to make the databases
)

// pgServer is -postgres: a PostgreSQL server on which each size is also
// ingested and searched (a role that may create databases).
var pgServer string

// Goals of a team ledger (issue 31): ingest and search within 2x of
// SQLite's, an up-to-date sync within 100 ms.
const (
	goalPGvsSQLite = 2.0
	goalSyncAgain  = 100 * time.Millisecond
)

// pgResult is one size's figures on PostgreSQL, beside SQLite's.
type pgResult struct {
	messages int
	bytes    int64
	ingest   sample
	// search is each query on PostgreSQL, lite the same on SQLite, the
	// runs of the two alternating (so that both meet the same load).
	search, lite []searchResult
	// syncFresh is `ledger sync --to` of the size's SQLite ledger into a
	// new database; syncAgain the median of syncs with nothing new,
	// alternating with `ledger --db URL version` (version: the floor of a
	// process that connects).
	syncFresh, syncAgain, version sample
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
		lite := b.dbPath(strconv.Itoa(n))
		for _, q := range searchQueries(rare) {
			s, out, err := b.alternate([]string{"--db", db, "search", q.q, "--limit", "20", "--json"},
				[]string{"--db", lite, "search", q.q, "--limit", "20", "--json"})
			if err != nil {
				return err
			}
			var counts [2]int
			for i := range out {
				var hits []json.RawMessage
				if err := json.Unmarshal(out[i].head, &hits); err != nil {
					return fmt.Errorf("search %q: %w", q.q, err)
				}
				counts[i] = len(hits)
			}
			r.search = append(r.search, searchResult{label: q.label, query: q.q, ledger: s[0], hits: counts[0]})
			r.lite = append(r.lite, searchResult{label: q.label, query: q.q, ledger: s[1], hits: counts[1]})
			b.logf("  search %q: %v (%d hits), SQLite %v (%d hits)", q.q, s[0].wall.Round(time.Microsecond), counts[0], s[1].wall.Round(time.Microsecond), counts[1])
		}
		sdb, err := pgDatabase(b.ctx, fmt.Sprintf("ledger_bench_sync_%d", n))
		if err != nil {
			return fmt.Errorf("make database: %w", err)
		}
		if r.syncFresh, _, err = b.exec("", nil, "--db", lite, "sync", "--to", sdb); err != nil {
			return err
		}
		again, _, err := b.alternate([]string{"--db", lite, "sync", "--to", sdb}, []string{"--db", sdb, "version"})
		if err != nil {
			return err
		}
		r.syncAgain, r.version = again[0], again[1]
		b.logf("  sync: %v into a new database, %v with nothing new (version %v)", r.syncFresh.wall.Round(time.Millisecond),
			r.syncAgain.wall.Round(time.Millisecond), r.version.wall.Round(time.Millisecond))
		pgResults = append(pgResults, r)
	}
	return nil
}

// alternate runs the current ledger with each of two argument lists in
// turn, b.runs times after a warm-up run of each, and returns the median
// of each and the output of its warm-up run.
func (b *bench) alternate(a, c []string) ([2]sample, [2]*capped, error) {
	var out [2]*capped
	var walls, cpus [2][]time.Duration
	var rss [2]int64
	for i := range b.runs + 1 {
		for k, args := range [][]string{a, c} {
			s, o, err := b.exec("", nil, args...)
			if err != nil {
				return [2]sample{}, out, err
			}
			if i == 0 {
				out[k] = o
				continue
			}
			walls[k] = append(walls[k], s.wall)
			cpus[k] = append(cpus[k], s.cpu)
			rss[k] = max(rss[k], s.rss)
		}
	}
	var med [2]sample
	for k := range med {
		slices.Sort(walls[k])
		slices.Sort(cpus[k])
		med[k] = sample{wall: walls[k][len(walls[k])/2], cpu: cpus[k][len(cpus[k])/2], rss: rss[k]}
	}
	return med, out, nil
}

// pgTable is the PostgreSQL figures beside the SQLite ones of the same
// run, each with its goal and whether the current build meets it.
func (b *bench) pgTable() string {
	if len(pgResults) == 0 {
		return ""
	}
	t := b.targets[len(b.targets)-1]
	var sb strings.Builder
	sb.WriteString("\nSQLite and PostgreSQL (the same binary; PostgreSQL on this machine, over a unix socket; searches after ANALYZE, " +
		"each PostgreSQL run alternating with the same search on SQLite):\n\n| measure | goal |")
	for _, r := range pgResults {
		fmt.Fprintf(&sb, " SQLite %s | PostgreSQL %s |", human(r.messages), human(r.messages))
	}
	sb.WriteString(" met |\n|---|---|")
	sb.WriteString(strings.Repeat("---|---|", len(pgResults)))
	sb.WriteString("---|\n")
	// Speed against SQLite is judged at 100k messages and above: at 1k a
	// new database's creation (ingest) and a connection (search) are most
	// of the time.
	judged := func(r *pgResult) bool { return r.messages >= 100_000 }
	var v verdict
	sb.WriteString("| `ledger ingest DIR` (new database) | ≤ 2x SQLite's time at 100k |")
	for _, r := range pgResults {
		lite := t.sized[r.messages]
		x := ratio(r.ingest.wall, lite.ingest.wall)
		if judged(r) {
			v.check(x <= goalPGvsSQLite, fmt.Sprintf("%.2fx at %s", x, human(r.messages)))
		}
		fmt.Fprintf(&sb, " %s, %.1f MB/s | %s, %.1f MB/s (**%.2fx**) |", ms(lite.ingest.wall), mbps(r.bytes, lite.ingest.wall),
			ms(r.ingest.wall), mbps(r.bytes, r.ingest.wall), x)
	}
	fmt.Fprintf(&sb, " %s |\n", v)
	for i, q := range pgResults[0].search {
		v = verdict{}
		fmt.Fprintf(&sb, "| `ledger search %s --limit 20` (%s) | ≤ 2x SQLite's at 100k |", q.query, q.label)
		for _, r := range pgResults {
			pg, lite := r.search[i], r.lite[i]
			x := ratio(pg.ledger.wall, lite.ledger.wall)
			if judged(r) {
				v.check(x <= goalPGvsSQLite, fmt.Sprintf("%.2fx at %s", x, human(r.messages)))
			}
			fmt.Fprintf(&sb, " %s (%d hits) | %s (%d hits, **%.2fx**) |", ms(lite.ledger.wall), lite.hits, ms(pg.ledger.wall), pg.hits, x)
		}
		fmt.Fprintf(&sb, " %s |\n", v)
	}
	sb.WriteString("| `ledger sync --to URL` of the SQLite ledger into a new database | |")
	for _, r := range pgResults {
		fmt.Fprintf(&sb, " | %s |", ms(r.syncFresh.wall))
	}
	sb.WriteString(" |\n")
	v = verdict{}
	sb.WriteString("| `ledger sync --to URL` again, nothing new (beside `ledger --db URL version`, the floor of a process that connects) | ≤ 100 ms |")
	for _, r := range pgResults {
		v.check(r.syncAgain.wall <= goalSyncAgain, fmt.Sprintf("%s at %s", ms(r.syncAgain.wall), human(r.messages)))
		fmt.Fprintf(&sb, " | **%s** (version %s) |", ms(r.syncAgain.wall), ms(r.version.wall))
	}
	fmt.Fprintf(&sb, " %s |\n", v)
	return sb.String()
}
