package agentconfig

import (
	"fmt"

	"github.com/tidwall/gjson"
)

// LedgerHookCommands lists, by event, ledger's hook commands in a hooks
// document: Claude Code's settings.json and Codex's hooks.json share the
// shape {"hooks": {EVENT: [{"matcher", "hooks": [{"type", "command"}]}]}}.
// A missing or empty document has none.
func LedgerHookCommands(doc []byte) (map[string][]string, error) {
	out := map[string][]string{}
	if len(doc) == 0 {
		return out, nil
	}
	if !gjson.ValidBytes(doc) {
		return nil, fmt.Errorf("not valid JSON")
	}
	gjson.GetBytes(doc, "hooks").ForEach(func(event, groups gjson.Result) bool {
		groups.ForEach(func(_, g gjson.Result) bool {
			g.Get("hooks").ForEach(func(_, h gjson.Result) bool {
				if cmd := h.Get("command").String(); IsLedgerHook(cmd) {
					out[event.String()] = append(out[event.String()], cmd)
				}
				return true
			})
			return true
		})
		return true
	})
	return out, nil
}

// HookProgram is the program a hook command runs (its first word, as sh
// reads it).
func HookProgram(command string) string {
	if w := shellWords(command, 1); len(w) == 1 {
		return w[0]
	}
	return ""
}
