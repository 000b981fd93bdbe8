// Command ledger-gen writes a deterministic corpus of Claude Code
// transcripts for ledger's benchmarks and performance scripts:
//
//	ledger-gen -out /tmp/corpus -sessions 100 -messages 1000
//
// writes /tmp/corpus/<project>/<session>.jsonl, 100 sessions of 1,000
// messages each. The same flags always write the same bytes.
package main
