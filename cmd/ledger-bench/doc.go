// Command ledger-bench measures ledger as a user meets it: whole processes,
// wall time and peak RSS, on generated corpora of Claude Code transcripts,
// with ripgrep run beside `ledger search` in the same run. It prints one
// markdown table (and writes it to -out): one row per measure, one column
// per corpus size, the goal, and whether it is met. It is the one place the
// figures of docs/performance.md come from.
//
//	go run ./cmd/ledger-bench                                  # 1k and 100k messages
//	go run ./cmd/ledger-bench -messages 1000,100000,1000000    # adds 1M messages (~1.1 GB of JSONL)
//	go run ./cmd/ledger-bench -baseline /tmp/base              # the same, beside a baseline tree
//
// Corpora are sessions of 1,000 messages (transcript.Generate, the same
// bytes as `ledger-gen -sessions N -messages 1000`; -shape heavy for the
// older 2.6 KB-per-message shape), cached under -work so that a second run
// does not write them again; -clean removes them at the end. Every timed
// command runs -runs times and the median is reported, except the ingests,
// which run once each into a new database.
//
// Beside the corpus sizes it measures: a no-op re-ingest of many small
// files; one big session (-big-messages), its SessionEnd tail ingest and
// its resume; and every hook event on the largest session of the real
// corpus (-corpus). `ledger search` is also timed in-process
// (Store.Search) by a small driver compiled into each measured tree with
// `go build -overlay`, so that a baseline is measured with its own code.
// -profile DIR writes a CPU profile of one more run of every command.
package main
