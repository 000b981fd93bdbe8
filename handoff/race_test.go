//go:build race

package handoff

// raceEnabled is true under -race, which slows regular expressions tenfold:
// tests that run many of them sample less.
const raceEnabled = true
