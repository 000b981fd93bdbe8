package handoff

import (
	"encoding/json"
	"strconv"
	"strings"
)

// An outcome is what a tool result says about the command that produced it.
type outcome struct {
	exit      int
	exitKnown bool
	// background is the id of a command still running in the background.
	background string
	// text is the result's text with terminal escapes and wrappers
	// (Codex JSON envelopes) removed.
	text string
}

var (
	reExitLine    = lazyRegexp(`(?m)^(?:Exit code:?|Process exited with code) (-?\d+)\s*$`)
	reExitTag     = lazyRegexp(`<exit_code>(-?\d+)</exit_code>`)
	reExitParen   = lazyRegexp(`\(exit code (-?\d+)\)`)
	reBackground  = lazyRegexp(`(?:running in background with ID|Process running with session ID):? *([\w-]+)`)
	reStatusTag   = lazyRegexp(`<status>(\w+)</status>`)
	reTaskID      = lazyRegexp(`<task-id>([\w-]+)</task-id>`)
	reFailCount   = lazyRegexp(`(?i)\b[1-9]\d* (?:failures?|failed|failing|errors?)\b`)
	reFailField   = lazyRegexp(`(?i)\b(?:failures|errors|failed): *[1-9]`)
	reFailMarkers = lazyRegexp(`(?m)^\s*(?:--- )?FAIL\b|\bFAILED\b|^error(?:\[E\d+\])?:|^npm (?:ERR!|error)|` +
		`^make(?:\[\d+\])?: \*\*\* .*Error \d+|^\*\* \(\w+Error\)|^panic: |^Exit code [1-9]`)
)

// readOutcome reads a tool result's text.
func readOutcome(text string) outcome {
	var o outcome
	text = stripANSI(text)
	// Older Codex shell outputs are JSON: {"output": ..., "metadata": {"exit_code": n}}.
	if t := strings.TrimSpace(text); strings.HasPrefix(t, "{") && strings.Contains(t, `"exit_code"`) {
		var env struct {
			Output   string `json:"output"`
			Metadata struct {
				ExitCode *int `json:"exit_code"`
			} `json:"metadata"`
		}
		if json.Unmarshal([]byte(t), &env) == nil && env.Metadata.ExitCode != nil {
			o.exit, o.exitKnown = *env.Metadata.ExitCode, true
			text = env.Output
		}
	}
	o.text = text
	if !o.exitKnown {
		for _, re := range []*lazyRE{reExitLine, reExitTag, reExitParen} {
			if m := re.FindStringSubmatch(text); m != nil {
				o.exit, _ = strconv.Atoi(m[1])
				o.exitKnown = true
				break
			}
		}
	}
	if !o.exitKnown {
		if m := reBackground.FindStringSubmatch(text); m != nil {
			o.background = m[1]
		}
	}
	return o
}

// testFailed reads a test runner's output for a failure its exit status may
// hide.
func testFailed(text string) bool {
	return reFailCount.MatchString(text) || reFailField.MatchString(text) || reFailMarkers.MatchString(text)
}
