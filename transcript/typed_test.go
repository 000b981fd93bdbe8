package transcript

import (
	"strings"
	"testing"
)

// TestClaudeWhoTyped: a user line is the user's own words, or Meta, by
// what the line records of who wrote it (origin, promptSource,
// turnOrigin, textNotTyped, handedOff, toolUseResult) on builds that
// record it; by its text's prefix on builds that do not.
func TestClaudeWhoTyped(t *testing.T) {
	t.Parallel()
	line := func(uuid, extra, content string) string {
		return `{"type":"user","uuid":"` + uuid + `","sessionId":"s1","timestamp":"2026-05-02T10:00:00Z",` + extra +
			`"message":{"role":"user","content":` + content + `}}`
	}
	cases := []struct {
		uuid, extra, content string
		meta                 bool
	}{
		{"typed", `"origin":{"kind":"human"},"promptSource":"typed",`, `"add a --dry-run flag to the sync command"`, false},
		{"queued", `"promptSource":"queued",`, `"and print what it would delete"`, false},
		{"sdk", `"turnOrigin":"sdk",`, `"run the migration script"`, false},
		{"notice", `"origin":{"kind":"task-notification"},`, `"{\"task_id\": \"b7\", \"status\": \"completed\"}"`, true},
		{"peer", `"origin":{"kind":"coordinator"},`, `"Teammate lint-bot finished its review"`, true},
		{"system", `"promptSource":"system",`, `"Continue with the remaining steps."`, true},
		{"not-typed", `"origin":{"kind":"human"},"textNotTyped":true,`, `"Implement the following plan: …"`, true},
		{"handed", `"handedOff":true,`, `"summary of the subagent's findings"`, true},
		{"tool", `"toolUseResult":{"stdout":"ok"},`, `"ok"`, true},
		// Older builds record none of it: the text decides.
		{"old-typed", ``, `"why is the cache cold after a deploy?"`, false},
		{"old-bash", ``, `"<bash-notification>\n<shell-id>b1</shell-id>\n<status>completed</status>\n</bash-notification>"`, true},
		{"old-slash", ``, `"Unknown slash command: frobnicate"`, true},
		{"unknown-origin", `"turnOrigin":"unknown",`, `"<task-notification>done</task-notification>"`, true},
	}
	var lines []string
	for _, c := range cases {
		lines = append(lines, line(c.uuid, c.extra, c.content))
	}
	recs, res, _ := readBytes(t, FormatClaude, []byte(strings.Join(lines, "\n")+"\n"))
	if res.Skipped != 0 {
		t.Fatalf("skipped %d lines", res.Skipped)
	}
	meta := map[string]bool{}
	for _, r := range recs {
		if r.Message != nil {
			meta[r.Message.UUID] = r.Message.Meta
		}
	}
	for _, c := range cases {
		got, ok := meta[c.uuid]
		if !ok {
			t.Errorf("%s: no message", c.uuid)
			continue
		}
		if got != c.meta {
			t.Errorf("%s: Meta = %v, want %v", c.uuid, got, c.meta)
		}
	}
}
