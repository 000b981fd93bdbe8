package store

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/agentledger/ledger/store/pgtest"
	"github.com/agentledger/ledger/transcript"
)

// benchBackends are where the benchmarks keep their ledger: a SQLite file,
// or a database on the test PostgreSQL server (skipped without one).
var benchBackends = []struct {
	name string
	at   func(b testing.TB) string
}{
	{"sqlite", func(b testing.TB) string { return filepath.Join(b.TempDir(), "ledger.db") }},
	{"postgres", func(b testing.TB) string { return pgtest.URL(b) }},
}

// genLedger writes sessions generated Claude Code sessions of 1,000
// messages each into a new SQLite ledger (the corpus of cmd/ledger-bench)
// and returns it with a rare identifier that its first session mentions.
func genLedger(b testing.TB, sessions int) (*Store, string) {
	return genLedgerAt(b, filepath.Join(b.TempDir(), "ledger.db"), sessions)
}

// genLedgerAt is genLedger with the ledger at a location of any backend.
func genLedgerAt(b testing.TB, at string, sessions int) (*Store, string) {
	b.Helper()
	ctx := context.Background()
	s, err := Open(ctx, at, WithLocalPath(filepath.Join(b.TempDir(), "ledger.db")))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	var rare string
	for i := range sessions {
		if r := writeGenerated(b, s, i); i == 0 {
			rare = r
		}
	}
	return s, rare
}

// writeGenerated writes the generated session of seed i, in one writer
// transaction, and returns a rare identifier it mentions.
func writeGenerated(b testing.TB, s *Store, i int) string {
	b.Helper()
	ctx := context.Background()
	var buf bytes.Buffer
	if err := transcript.Generate(&buf, transcript.GenOptions{Seed: 1_000_003 + uint64(i), Messages: 1000,
		CompactEvery: 400, Project: fmt.Sprintf("/home/dev/src/project%02d", i%17)}); err != nil {
		b.Fatal(err)
	}
	m := regexp.MustCompile(`FAIL: ([A-Za-z]+/case_[0-9]{5})`).FindSubmatch(buf.Bytes())
	if m == nil {
		b.Fatal("no numbered subtest in the generated session")
	}
	w, err := s.NewWriter(ctx, string(transcript.FormatClaude))
	if err != nil {
		b.Fatal(err)
	}
	st := transcript.State{Format: transcript.FormatClaude}
	if _, err := transcript.Read(ctx, &buf, &st, 0, 1, func(r transcript.Record) error {
		if si := r.Session; si != nil && si.ID != "" {
			if err := w.PatchSession(ctx, SessionPatch{ID: si.ID, Project: si.Project,
				GitBranch: si.GitBranch, Title: si.Title, Model: si.Model, Time: si.Time}); err != nil {
				return err
			}
		}
		if r.Message != nil {
			if _, err := w.AddMessage(ctx, *r.Message); err != nil {
				return err
			}
		}
		if r.Boundary != nil {
			if _, err := w.AddBoundary(ctx, *r.Boundary); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	if err := w.Commit(ctx, nil); err != nil {
		b.Fatal(err)
	}
	return string(m[1])
}

// BenchmarkSearch measures Store.Search over 10,000 generated messages for
// the queries cmd/ledger-bench asks: a rare identifier, a common word (it
// matches most messages: the cost of ranking), a path (a phrase), two words
// and the any-word fallback (scored terms). The whole-process and
// in-process figures at 100k and 1M messages come from ledger-bench.
func BenchmarkSearch(b *testing.B) {
	for _, be := range benchBackends {
		b.Run(be.name, func(b *testing.B) { benchSearch(b, be.at(b)) })
	}
}

func benchSearch(b *testing.B, at string) {
	ctx := context.Background()
	s, rare := genLedgerAt(b, at, 10)
	for _, q := range []struct{ name, query string }{
		{"rare", rare},
		{"common", "timeout"},
		{"path", "pkg/auth/session_store.go"},
		{"two-words", "flaky timeout"},
		{"fallback", "zyxwvut flaky"},
	} {
		b.Run(q.name, func(b *testing.B) {
			o := SearchOptions{Query: ParseQuery(q.query), Limit: 20}
			for b.Loop() {
				res, err := s.Search(ctx, o)
				if err != nil {
					b.Fatal(err)
				}
				if len(res.Hits) == 0 {
					b.Fatalf("%q: no hits", q.query)
				}
			}
		})
	}
}

// BenchmarkWrite measures the store's side of an ingest: one generated
// session of 1,000 messages (and its compactions) written in one writer
// transaction, a new session each time, on each backend.
func BenchmarkWrite(b *testing.B) {
	for _, be := range benchBackends {
		b.Run(be.name, func(b *testing.B) {
			s, _ := genLedgerAt(b, be.at(b), 0)
			i := 0
			for b.Loop() {
				writeGenerated(b, s, i)
				i++
			}
		})
	}
}
