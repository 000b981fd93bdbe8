package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// HookWarning is the one line a hook that failed open reports, event first;
// it is also appended to the hook log, $XDG_STATE_HOME/ledger/hook.log
// (stateDir is $XDG_STATE_HOME, else ~/.local/state), when that can be
// written: a log that cannot be written is no reason to fail either.
func (e *Engine) HookWarning(stateDir, event string, err error) string {
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	if event != "" {
		msg = event + ": " + msg
	}
	if !filepath.IsAbs(stateDir) {
		if e.home == "" {
			return msg
		}
		stateDir = filepath.Join(e.home, ".local", "state")
	}
	dir := filepath.Join(stateDir, "ledger")
	if os.MkdirAll(dir, 0o700) != nil {
		return msg
	}
	f, ferr := os.OpenFile(filepath.Join(dir, "hook.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if ferr != nil {
		return msg
	}
	fmt.Fprintf(f, "%s %s\n", e.now().UTC().Format(time.RFC3339), msg)
	f.Close()
	return msg
}
