package store

import (
	"database/sql/driver"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestRewritePG(t *testing.T) {
	args := func(vs ...any) []driver.NamedValue {
		out := make([]driver.NamedValue, len(vs))
		for i, v := range vs {
			out[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
		}
		return out
	}
	for _, tc := range []struct {
		name, in string
		args     []driver.NamedValue
		want     string
		wantArgs []any
	}{
		{"positional", `SELECT a FROM t WHERE b = ? AND c = ?`, args("x", int64(2)), `SELECT a FROM t WHERE b = $1 AND c = $2`, []any{"x", int64(2)}},
		{"named, one used twice", `UPDATE t SET a = :a WHERE b = :b OR a = :a`,
			[]driver.NamedValue{{Name: "b", Value: "B"}, {Name: "a", Value: "A"}}, `UPDATE t SET a = $1 WHERE b = $2 OR a = $1`, []any{"A", "B"}},
		{"literals, casts and comments kept", `SELECT '?', ':x', "offset", x::int -- what ?
			FROM t WHERE y = ?`, args(true), `SELECT '?', ':x', "offset", x::int -- what ?
			FROM t WHERE y = $1`, []any{int64(1)}},
		{"offset quoted, OFFSET kept", `SELECT offset FROM cursors LIMIT ? OFFSET ?`, args(1, 2), `SELECT "offset" FROM cursors LIMIT $1 OFFSET $2`, []any{1, 2}},
		{"written for PostgreSQL", `SELECT pg_advisory_xact_lock($1)`, args(int64(7)), `SELECT pg_advisory_xact_lock($1)`, []any{int64(7)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, gotArgs, err := rewritePG(tc.in, tc.args)
			if err != nil || got != tc.want {
				t.Fatalf("rewritePG = %q, %v; want %q", got, err, tc.want)
			}
			var vals []any
			for i, a := range gotArgs {
				if a.Ordinal != i+1 {
					t.Errorf("arg %d has ordinal %d", i, a.Ordinal)
				}
				vals = append(vals, a.Value)
			}
			if !reflect.DeepEqual(vals, tc.wantArgs) {
				t.Errorf("args %v, want %v", vals, tc.wantArgs)
			}
		})
	}
	if _, _, err := rewritePG(`SELECT :missing`, args(1)); err == nil {
		t.Error("a :name without its argument was accepted")
	}
	if _, _, err := rewritePG(`SELECT ?, ?`, args(1)); err == nil {
		t.Error("more ? than arguments was accepted")
	}
}

func TestIsURL(t *testing.T) {
	for in, want := range map[string]bool{
		"postgres://u@h/db": true, "postgresql://h/db": true, "POSTGRES://h/db": true,
		"postgres:": false, "postgres:db": false, "./postgres://x": false, "/tmp/ledger.db": false, "": false,
	} {
		if got := IsURL(in); got != want {
			t.Errorf("IsURL(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestPGDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1000", time.Second, true}, {"0", 0, true}, {"30s", 30 * time.Second, true}, {"2min", 2 * time.Minute, true},
		{"1.5h", 90 * time.Minute, true}, {"250ms", 250 * time.Millisecond, true}, {" 5 s ", 5 * time.Second, true},
		{"soon", 0, false}, {"5 weeks", 0, false}, {"", 0, false},
	} {
		got, ok := pgDuration(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("pgDuration(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	u := withTimeouts("postgres://u@h/db?statement_timeout=0")
	if !strings.Contains(u, "connect_timeout=10") || !strings.Contains(u, "statement_timeout=0") {
		t.Errorf("withTimeouts kept the URL's own and added the default: %s", u)
	}
}
