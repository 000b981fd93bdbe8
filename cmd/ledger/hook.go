package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// hookInput is what Claude Code writes on a hook's stdin: the common
// fields and those of the events ledger handles.
type hookInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	Event          string `json:"hook_event_name"`
	// PreCompact
	Trigger            string  `json:"trigger"`
	CustomInstructions *string `json:"custom_instructions"`
	// SessionStart
	Source string `json:"source"`
	// SessionEnd
	Reason string `json:"reason"`
	// PostToolUse
	ToolName string `json:"tool_name"`
}

// maxHookInput caps what ledger reads from stdin: hook inputs are small; a
// runaway writer must not make the hook slow.
const maxHookInput = 4 << 20

// hookDeadline is how long ledger itself allows each event, inside the
// timeout written to settings.json. SessionEnd's default timeout is 1.5 s:
// what does not fit is picked up by the next ingest.
var hookDeadline = map[string]time.Duration{
	"SessionStart": 5 * time.Second,
	"PreCompact":   45 * time.Second,
	"PostToolUse":  2 * time.Second,
	"Stop":         10 * time.Second,
	"SessionEnd":   1 * time.Second,
}

type hookOptions struct {
	Mode    string
	Startup bool
}

// errBlock asks Claude Code to block the event (exit 2, reason on stderr).
type errBlock struct{ reason string }

func (e errBlock) Error() string { return e.reason }

func newHookCmd(app *App) *cobra.Command {
	opts := &hookOptions{}
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "Run as a Claude Code hook (reads the hook's JSON on stdin)",
		Long: `Run as a Claude Code hook: read the hook input on stdin and act on its
hook_event_name. Installed by 'ledger hooks install'; you do not run it by hand.

  SessionStart  compact/resume: inject this session's resume context;
                clear: inject the latest handoff of the same project (the new
                session has a new id); startup: only with --startup.
  PreCompact    ingest the transcript, write a handoff and record the
                compaction (source hook). In --mode clear, an auto compaction
                is then blocked with a message to run /clear instead.
  PostToolUse   ingest what is new; past 80% of the context window, and at
                50, 100 and 150 tool calls, suggest a handoff and /clear (once
                per threshold).
  Stop          ingest what is new in the transcript.
  SessionEnd    the same, within 1 s (what is left is picked up later).

A hook never blocks or slows the agent: whatever goes wrong (bad input, no
database, a deadline), it exits 0 with one warning line on stderr and in
$XDG_STATE_HOME/ledger/hook.log. Only clear mode blocks, and only after the
handoff is safely written.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Mode != "assist" && opts.Mode != "clear" {
				return usagef("--mode %q: want assist or clear", opts.Mode)
			}
			return runHook(cmd.Context(), app, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Mode, "mode", "assist", "`assist` or clear (block auto-compaction after writing the handoff)")
	cmd.Flags().BoolVar(&opts.Startup, "startup", false, "inject the project's latest handoff at brand-new sessions too")
	return cmd
}

// runHook runs one hook event and fails open: every error becomes a
// warning, except the one clear-mode block, which is the hook's purpose.
func runHook(ctx context.Context, app *App, opts *hookOptions) error {
	start := time.Now()
	in, err := readHookInput(app.Stdin)
	if err != nil {
		hookWarn(app, "", err)
		return nil
	}
	deadline, ok := hookDeadline[in.Event]
	if !ok {
		return nil // an event ledger does not handle: nothing to do
	}
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	err = handleHook(ctx, app, opts, in)
	var block errBlock
	switch {
	case errors.As(err, &block):
		return err
	case err != nil:
		if ctx.Err() != nil {
			err = fmt.Errorf("deadline of %v reached after %v (the rest is picked up later): %w", deadline, time.Since(start).Round(time.Millisecond), err)
		}
		hookWarn(app, in.Event, err)
	}
	return nil
}

func readHookInput(r io.Reader) (hookInput, error) {
	var in hookInput
	b, err := io.ReadAll(io.LimitReader(r, maxHookInput+1))
	if err != nil {
		return in, fmt.Errorf("read hook input: %w", err)
	}
	if len(b) > maxHookInput {
		return in, fmt.Errorf("hook input larger than %d bytes", maxHookInput)
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return in, fmt.Errorf("hook input is not JSON: %w", err)
	}
	if in.Event == "" {
		return in, errors.New("hook input has no hook_event_name")
	}
	return in, nil
}

func handleHook(ctx context.Context, app *App, opts *hookOptions, in hookInput) error {
	switch in.Event {
	case "Stop", "SessionEnd":
		_, err := hookIngest(ctx, app, in)
		return err
	}
	return handleHookEvent(ctx, app, opts, in)
}

// hookIngest reads what is new in the hook's transcript.
func hookIngest(ctx context.Context, app *App, in hookInput) (fileStats, error) {
	if in.TranscriptPath == "" {
		return fileStats{}, errors.New("hook input has no transcript_path")
	}
	s, err := app.Store(ctx)
	if err != nil {
		return fileStats{}, err
	}
	g := &ingester{st: s}
	fs, err := g.ingestFile(ctx, expandHome(app, in.TranscriptPath))
	if errors.Is(err, errUnchanged) {
		err = nil
	}
	return fs, err
}

func expandHome(app *App, p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(app.Getenv("HOME"), rest)
	}
	return p
}

// hookWarn reports a failure without failing: one line on stderr, and the
// same line in the hook log.
func hookWarn(app *App, event string, err error) {
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	if event != "" {
		msg = event + ": " + msg
	}
	fmt.Fprintf(app.Stderr, "ledger: warning: %s\n", msg)
	dir := app.Getenv("XDG_STATE_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home := app.Getenv("HOME")
		if home == "" {
			return
		}
		dir = filepath.Join(home, ".local", "state")
	}
	dir = filepath.Join(dir, "ledger")
	if os.MkdirAll(dir, 0o700) != nil {
		return
	}
	f, ferr := os.OpenFile(filepath.Join(dir, "hook.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if ferr != nil {
		return
	}
	fmt.Fprintf(f, "%s %s\n", time.Now().UTC().Format(time.RFC3339), msg)
	f.Close()
}
