// Command ledger-bench measures ledger as a user meets it: whole processes,
// wall time and peak RSS, on generated corpora of Claude Code transcripts,
// with ripgrep run beside `ledger search` in the same run. It prints one
// markdown table (and writes it to -out): one row per measure, one column
// per corpus size, the goal, and whether it is met.
//
//	go run ./cmd/ledger-bench                                  # 1k and 100k messages, ~2 minutes
//	go run ./cmd/ledger-bench -messages 1000,100000,1000000    # adds 1M messages (~2.6 GB of JSONL)
//
// Corpora are sessions of 1,000 messages (transcript.Generate, the same
// bytes as `ledger-gen -sessions N -messages 1000`), cached under -work so
// that a second run does not write them again; -clean removes them at the
// end. Every timed command runs -runs times and the median is reported,
// except the ingests, which run once each into a new database.
package main
