//go:build race

package bpe

// raceEnabled is true under -race, which slows the reference's regular
// expressions tenfold: the sweeps that run them sample less.
const raceEnabled = true
