package store

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/agentledger/ledger/transcript"
)

// genLedger writes sessions generated Claude Code sessions of 1,000
// messages each into a new ledger (the corpus of cmd/ledger-bench) and
// returns it with a rare identifier that its first session mentions.
func genLedger(b testing.TB, sessions int) (*Store, string) {
	b.Helper()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "ledger.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	var rare string
	for i := range sessions {
		var buf bytes.Buffer
		if err := transcript.Generate(&buf, transcript.GenOptions{Seed: 1_000_003 + uint64(i), Messages: 1000,
			CompactEvery: 400, Project: fmt.Sprintf("/home/dev/src/project%02d", i%17)}); err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			m := regexp.MustCompile(`FAIL: ([A-Za-z]+/case_[0-9]{5})`).FindSubmatch(buf.Bytes())
			if m == nil {
				b.Fatal("no numbered subtest in the generated session")
			}
			rare = string(m[1])
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
	}
	return s, rare
}

// BenchmarkSearch measures Store.Search over 10,000 generated messages for
// the queries cmd/ledger-bench asks: a rare identifier, a common word (it
// matches most messages: the cost of ranking), a path (a phrase), two words
// and the any-word fallback (scored terms). The whole-process and
// in-process figures at 100k and 1M messages come from ledger-bench.
func BenchmarkSearch(b *testing.B) {
	ctx := context.Background()
	s, rare := genLedger(b, 10)
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
