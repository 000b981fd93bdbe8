package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/transcript"
)

// A hook run keeps its event's budget whatever happens: a transcript that
// never ends, a write lock another process holds, stdin that is never
// closed. Its clocks, all from the run's start:
//
//	lockBy    the ingest waits for the write lock until then (35% of the
//	          budget), then leaves the transcript's new lines for later
//	readBy    the transcript is read until then (45%); what was read is
//	          committed, the rest left for the next event
//	handoff   PreCompact's handoff waits for the write lock until then
//	          (50%), then is written as a Markdown file, its row pending
//	work      the event's work must end by then (the budget less
//	          hookReserve): its context's deadline
//	hard      the budget less hookExit: whatever the work is doing, the
//	          run returns then, with a receipt that says so; the process
//	          exits, and SQLite's transactions make that as safe as a kill
const (
	hookLockShare    = 0.35
	hookReadShare    = 0.45
	hookHandoffShare = 0.5
	hookReserve      = 250 * time.Millisecond
	hookExit         = 50 * time.Millisecond
	// hookReceiptWait is how long a receipt waits for the write lock
	// before it goes to the hook log.
	hookReceiptWait = 100 * time.Millisecond
	// hookInputWait bounds the wait for the hook's input: Claude Code
	// writes it at once and closes stdin.
	hookInputWait = time.Second
)

// HookRun is what one hook run did, for its front door to report.
type HookRun struct {
	// Output is what to print on stdout (nil for nothing).
	Output any
	// Err is the clear-mode block (a BlockError), or nil: every other
	// failure is Warning.
	Err error
	// Warning is the one line to show on stderr ("" for none), already in
	// the hook log. A part of the work left for later is no warning: the
	// receipt says so.
	Warning string
	Receipt store.HookReceipt
}

// RunHook runs one hook: it reads the hook's input from stdin, handles its
// event within the event's budget, and leaves a receipt. It never fails:
// whatever goes wrong is a warning (fail open), except clear mode's block.
// An event ledger does not handle gets nothing, not even a receipt.
//
// When the budget runs out while the work is still going (stuck in a
// system call, say), RunHook returns without it; the caller then exits the
// process, and Close leaves the store to the work (see Engine.Close).
func (e *Engine) RunHook(ctx context.Context, stdin io.Reader, o HookOptions) HookRun {
	start := time.Now()
	wait := e.scaled(hookInputWait)
	in, err := readHookInput(ctx, stdin, wait, o)
	if err != nil {
		return e.hookEnd(ctx, o, HookInput{}, start, start.Add(wait), hookResult{outcome: store.OutcomeFailed, err: err})
	}
	budget, ok := HookBudget(in.Event)
	if !ok {
		return HookRun{}
	}
	if in.TranscriptPath == "" && o.Database != "" {
		in.TranscriptPath = o.Database // OpenCode's and Kilo's plugin (plugins.go)
	}
	budget = e.scaled(budget)
	hard := start.Add(budget - hookExit)
	share := func(f float64) time.Time { return start.Add(time.Duration(float64(budget) * f)) }
	c := hookClocks{lockBy: share(hookLockShare), readBy: share(hookReadShare), handoffLockBy: share(hookHandoffShare)}
	wctx, cancel := context.WithDeadline(ctx, start.Add(budget-hookReserve))
	defer cancel()
	done := make(chan hookResult, 1)
	go func() { done <- e.hook(wctx, in, o, c) }()
	timer := time.NewTimer(time.Until(hard))
	defer timer.Stop()
	select {
	case r := <-done:
		if r.err != nil && !errors.As(r.err, new(BlockError)) {
			r.outcome = store.OutcomeFailed
			if wctx.Err() != nil {
				r.err = fmt.Errorf("budget of %v spent after %v (the rest is picked up later): %w", budget, time.Since(start).Round(time.Millisecond), r.err)
			}
		}
		return e.hookEnd(ctx, o, in, start, hard, r)
	case <-timer.C:
		e.Abandon()
		r := hookResult{outcome: store.OutcomeTimeout,
			detail: fmt.Sprintf("the budget of %v ran out with the work unfinished: left for the next event", budget)}
		return e.hookEnd(ctx, o, in, start, hard, r)
	}
}

// scaled is d times the engine's HookTimeScale.
func (e *Engine) scaled(d time.Duration) time.Duration {
	if e.hookScale <= 0 {
		return d
	}
	return time.Duration(float64(d) * e.hookScale)
}

// readHookInput decodes the hook's input, waiting for it at most wait
// (and not once ctx is done).
func readHookInput(ctx context.Context, stdin io.Reader, wait time.Duration, o HookOptions) (HookInput, error) {
	type decoded struct {
		in  HookInput
		err error
	}
	ch := make(chan decoded, 1)
	go func() {
		in, err := DecodeAgentHookInput(stdin, o)
		ch <- decoded{in, err}
	}()
	select {
	case d := <-ch:
		return d.in, d.err
	case <-time.After(wait):
		return HookInput{}, fmt.Errorf("no complete hook input on stdin within %v", wait)
	case <-ctx.Done():
		return HookInput{}, fmt.Errorf("reading the hook input: interrupted (%w)", ctx.Err())
	}
}

// hookEnd makes the run's receipt, writes it (by hard, see writeReceipt)
// and the warning, if any.
func (e *Engine) hookEnd(ctx context.Context, o HookOptions, in HookInput, start, hard time.Time, r hookResult) HookRun {
	run := HookRun{Output: agentOutput(o, in, r.out)}
	if errors.As(r.err, new(BlockError)) {
		run.Err = r.err
		r.note("blocked the auto compaction (clear mode)")
	} else if err := cmpOrErr(r.err, r.warn); err != nil {
		run.Warning = e.HookWarning(o.StateDir, in.Event, err)
		r.note("%s", strings.ReplaceAll(err.Error(), "\n", " "))
	}
	if o.Agent != "" && o.Agent != "claude" {
		r.detail = o.Agent + ": " + r.detail
	}
	run.Receipt = store.HookReceipt{SessionID: in.SessionID, Event: in.Event, At: start.UTC(),
		MS: time.Since(start).Milliseconds(), Outcome: r.outcome, Detail: r.detail}
	e.writeReceipt(ctx, o.StateDir, run.Receipt, hard)
	return run
}

// writeReceipt stores a receipt in the ledger if it can by hard (the
// store open, the write lock free soon enough, the work not abandoned),
// else appends it to the hook log: a receipt never holds a hook past its
// budget.
func (e *Engine) writeReceipt(ctx context.Context, stateDir string, r store.HookReceipt, hard time.Time) {
	rctx, cancel := context.WithDeadline(ctx, hard)
	defer cancel()
	// After an abandoned run the work may still use the store: only the
	// log then.
	if !e.abandoned.Load() && e.Opened() == nil {
		e.Store(rctx) // a run that failed before it opened the ledger
	}
	if st := e.Opened(); !e.abandoned.Load() && st != nil && !st.ReadOnly() {
		by := time.Now().Add(e.scaled(hookReceiptWait))
		if by.After(hard) {
			by = hard
		}
		if st.AddHookReceipt(store.WithLockDeadline(rctx, by), r) == nil {
			return
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return
	}
	e.hookLog(stateDir, "receipt "+string(b))
}

// tailInfo is what the lines of a transcript not yet in the ledger say
// about their session.
type tailInfo struct {
	format          transcript.Format
	project, branch string
}

// maxUnread bounds what unreadMessages reads: the newest lines, which are
// what a handoff is about.
const maxUnread = 16 << 20

// unreadMessages reads, without writing to the ledger, the messages of the
// transcript at path that the ledger does not hold yet: from its cursor
// (or the start), at most the last maxUnread bytes; of an agent's database,
// the session's.
func unreadMessages(ctx context.Context, st *store.Store, path, session string) ([]compact.Message, tailInfo, error) {
	var info tailInfo
	if f, ok := transcript.DatabaseFormat(path); ok {
		return unreadDBMessages(ctx, st, AbsPath(path), f, session)
	}
	f, err := transcript.Open(path)
	if err != nil {
		return nil, info, fmt.Errorf("transcript_path %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, info, err
	}
	cur, err := st.Cursor(ctx, AbsPath(path))
	seen := err == nil
	if err != nil && !notFound(err) {
		return nil, info, err
	}
	plan, err := planRead(ctx, f, fi, cur, seen)
	if err != nil || plan.unchanged {
		return nil, info, err
	}
	start, line := plan.start, plan.line
	if fi.Size()-start > maxUnread {
		// Only the newest lines: from the first line that starts in the
		// last maxUnread bytes.
		start, line = fi.Size()-maxUnread, 0
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return nil, info, err
	}
	var r io.Reader = f
	if line == 0 {
		rest, skipped, err := skipPartialLine(f)
		if err != nil {
			return nil, info, err
		}
		r, start, line = rest, start+skipped, 1
	}
	state := plan.state
	info.format = state.Format
	var msgs []compact.Message
	_, err = transcript.Read(ctx, r, &state, start, line, func(rec transcript.Record) error {
		if s := rec.Session; s != nil {
			info.project = cmpOr(info.project, s.Project)
			info.branch = cmpOr(s.GitBranch, info.branch)
		}
		if rec.Message != nil {
			msgs = append(msgs, *rec.Message)
		}
		return nil
	})
	return msgs, info, err
}

// cmpOrErr is a when it is not nil, else b.
func cmpOrErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// cmpOr is a when it is not "", else b.
func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// skipPartialLine reads past the rest of a line started before f's
// offset, and returns a reader of what follows and how much it skipped.
func skipPartialLine(f *os.File) (io.Reader, int64, error) {
	br := bufio.NewReaderSize(f, 64<<10)
	var skipped int64
	for {
		b, err := br.ReadSlice('\n')
		skipped += int64(len(b))
		switch {
		case err == nil, errors.Is(err, io.EOF):
			return br, skipped, nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, 0, err
		}
	}
}

// redactLine is a line for the hook log or a warning, its secrets replaced
// by the store's rules (a receipt's detail, an error quoting a path or a
// line); by the default rules when the store could not be opened.
func (e *Engine) redactLine(line string) string {
	if st := e.Opened(); st != nil {
		return st.RedactText(line)
	}
	return store.RedactText(line)
}

// hookLog appends a line to the hook log, $XDG_STATE_HOME/ledger/hook.log
// (stateDir is $XDG_STATE_HOME, else ~/.local/state), when that can be
// written: a log that cannot be written is no reason to fail either.
func (e *Engine) hookLog(stateDir, line string) {
	if !filepath.IsAbs(stateDir) {
		if e.home == "" {
			return
		}
		stateDir = filepath.Join(e.home, ".local", "state")
	}
	dir := filepath.Join(stateDir, "ledger")
	if os.MkdirAll(dir, 0o700) != nil {
		return
	}
	f, err := os.OpenFile(filepath.Join(dir, "hook.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	fmt.Fprintf(f, "%s %s\n", e.now().UTC().Format(time.RFC3339), e.redactLine(line))
	f.Close()
}
