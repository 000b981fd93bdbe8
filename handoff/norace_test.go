//go:build !race

package handoff

const raceEnabled = false
