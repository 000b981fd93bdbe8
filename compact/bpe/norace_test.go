//go:build !race

package bpe

const raceEnabled = false
