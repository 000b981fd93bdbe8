package engine

import "strings"

// HookWarning is the one line a hook that failed open reports, event first;
// it is also appended to the hook log, $XDG_STATE_HOME/ledger/hook.log
// (stateDir is $XDG_STATE_HOME, else ~/.local/state), when that can be
// written: a log that cannot be written is no reason to fail either.
func (e *Engine) HookWarning(stateDir, event string, err error) string {
	msg := e.redactLine(strings.ReplaceAll(err.Error(), "\n", " "))
	if event != "" {
		msg = event + ": " + msg
	}
	e.hookLog(stateDir, msg)
	return msg
}
