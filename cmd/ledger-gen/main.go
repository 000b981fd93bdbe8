package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentledger/ledger/transcript"
)

func main() {
	out := flag.String("out", "", "folder to write the corpus into (required)")
	sessions := flag.Int("sessions", 100, "number of sessions")
	messages := flag.Int("messages", 1000, "messages per session")
	compactEvery := flag.Int("compact-every", 400, "a compaction every N messages (0: none)")
	seed := flag.Uint64("seed", 1, "random seed")
	shapeName := flag.String("shape", "real", "line sizes: real (about 1.1 KB of JSONL per message, as real Claude Code lines) or heavy (about 2.6 KB: long tool outputs, many hook progress lines)")
	flag.Parse()
	shape, err := transcript.ParseGenShape(*shapeName)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ledger-gen: -shape:", err)
		os.Exit(2)
	}
	if *out == "" || *sessions < 1 || *messages < 1 {
		fmt.Fprintln(os.Stderr, "ledger-gen: -out is required; -sessions and -messages must be positive")
		os.Exit(2)
	}
	if err := generate(*out, *sessions, *messages, *compactEvery, *seed, shape); err != nil {
		fmt.Fprintln(os.Stderr, "ledger-gen:", err)
		os.Exit(1)
	}
}

func generate(out string, sessions, messages, compactEvery int, seed uint64, shape transcript.GenShape) error {
	for i := range sessions {
		s := seed*1_000_003 + uint64(i)
		project := fmt.Sprintf("-home-dev-src-project%02d", i%17)
		dir := filepath.Join(out, project)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("session-%05d.jsonl", i)))
		if err != nil {
			return err
		}
		err = transcript.Generate(f, transcript.GenOptions{Seed: s, Messages: messages, CompactEvery: compactEvery,
			Project: fmt.Sprintf("/home/dev/src/project%02d", i%17), Shape: shape})
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}
