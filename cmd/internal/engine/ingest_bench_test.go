package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/transcript"
)

// genCorpus writes sessions generated transcripts of messages each into
// dir and returns their paths and total size.
func genCorpus(b *testing.B, dir string, sessions, messages int) ([]string, int64) {
	b.Helper()
	var paths []string
	var total int64
	for i := range sessions {
		p := filepath.Join(dir, fmt.Sprintf("p%02d", i%7), fmt.Sprintf("s%04d.jsonl", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			b.Fatal(err)
		}
		f, err := os.Create(p)
		if err != nil {
			b.Fatal(err)
		}
		if err := transcript.Generate(f, transcript.GenOptions{Seed: uint64(i + 1), Messages: messages, CompactEvery: 400,
			Shape: transcript.GenReal}); err != nil {
			b.Fatal(err)
		}
		fi, _ := f.Stat()
		total += fi.Size()
		f.Close()
		paths = append(paths, p)
	}
	return paths, total
}

// BenchmarkIngest measures ingest throughput (MB/s of transcript JSONL,
// FTS indexing and the sessions' resume states included) into a fresh
// database per iteration: Engine.Ingest of a folder, as `ledger ingest`
// runs it, on the real-line-size corpus (about 1.1 KB per message).
func BenchmarkIngest(b *testing.B) {
	for _, size := range []struct{ sessions, messages int }{{10, 1000}, {40, 1000}} {
		b.Run(fmt.Sprintf("%dx%d", size.sessions, size.messages), func(b *testing.B) {
			ctx := context.Background()
			dir := b.TempDir()
			_, total := genCorpus(b, filepath.Join(dir, "corpus"), size.sessions, size.messages)
			b.SetBytes(total)
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				s, err := store.Open(ctx, filepath.Join(dir, fmt.Sprintf("l%d.db", i)))
				if err != nil {
					b.Fatal(err)
				}
				e := engineOf(s)
				b.StartTimer()
				if _, err := e.Ingest(ctx, []string{filepath.Join(dir, "corpus")}, IngestOptions{}); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				s.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(size.sessions*size.messages)*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

// BenchmarkResumeState measures extracting a session's resume state from
// 1,000 generated messages held in memory (what ingest does beside its
// writer for every session it adds to) and storing it.
func BenchmarkResumeState(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	paths, _ := genCorpus(b, filepath.Join(dir, "corpus"), 1, 1000)
	s, err := store.Open(ctx, filepath.Join(dir, "l.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	fs, err := (&ingester{st: s}).file(ctx, paths[0])
	if err != nil {
		b.Fatal(err)
	}
	msgs, err := s.Messages(ctx, fs.Session, 0)
	if err != nil {
		b.Fatal(err)
	}
	sess, err := s.Session(ctx, fs.Session)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		doc, err := extractMessages(ctx, s, sess, msgs)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.SaveResumeStates(ctx, []store.ResumeState{{SessionID: sess.ID, Key: "bench", Doc: doc}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(msgs)), "msgs/op")
}

// BenchmarkIngestNoop measures a re-ingest of files that have not changed:
// one cursor query, then a stat per file.
func BenchmarkIngestNoop(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	paths, _ := genCorpus(b, filepath.Join(dir, "corpus"), 200, 20)
	s, err := store.Open(ctx, filepath.Join(dir, "l.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	g := &ingester{st: s}
	for _, p := range paths {
		if _, err := g.file(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		cursors, err := s.Cursors(ctx)
		if err != nil {
			b.Fatal(err)
		}
		g := &ingester{st: s, cursors: cursors}
		for _, p := range paths {
			if _, err := g.file(ctx, p); err != errUnchanged {
				b.Fatalf("%s: %v, want unchanged", p, err)
			}
		}
	}
}
