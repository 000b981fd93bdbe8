// Package bpe counts cl100k_base tokens, the tokenizer compact's
// estimator is calibrated on, with no set-up cost: the vocabulary is a
// precomputed open-addressing hash table (cl100k.bin, embedded, read in
// place from the binary's read-only data) instead of a 100,000-entry Go
// map built in every process, and the pre-tokenizer is cl100k's split
// pattern written out in Go instead of a regular expression. Its counts
// are those of github.com/tiktoken-go/tokenizer, the library it replaces
// at run time, which its tests hold it to; TestTable -update regenerates
// the table from that library.
package bpe
