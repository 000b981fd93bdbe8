package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/cmd/internal/term"
	"github.com/agentledger/ledger/store"
)

// App holds what every command shares: where the database is, the standard
// streams, the environment, and the engine, whose store is opened on first
// use so that `--help` and completion touch nothing.
type App struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// StdoutTTY and StderrTTY say that Stdout and Stderr are terminals:
	// run sets them from the files, and tests set them to see what a
	// terminal is shown. On a terminal what ledger prints goes through a
	// term.Writer (control characters shown escaped), search highlights
	// its hits, and ingest shows a progress bar.
	StdoutTTY, StderrTTY bool
	// rawStderr is Stderr as it was given, for ingest's progress bar, the
	// one writer of control sequences of ledger's own.
	rawStderr io.Writer
	Getenv    func(string) string
	// Getwd is the working folder: the default project of resume, and
	// where hooks --scope project writes.
	Getwd func() (string, error)
	// Now is the clock (time.Now when nil): of handoffs, notes, records
	// and receipts' log lines, and what --since and --until count back
	// from. Tests fix it. (A hook's budget is kept on the real clock.)
	Now func() time.Time
	// Executable is the path of the ledger binary, written into the hooks,
	// MCP servers and commands ledger gives an agent (os.Executable when
	// nil). Tests that run commands in-process give the built binary.
	Executable func() (string, error)

	dbFlag     string
	cpuProfile string
	noRedact   bool
	engine     *engine.Engine
	// mode is how the running command opens the ledger: its entry in
	// ledgerModes, set before it runs.
	mode engine.Mode
	// hookTimeScale is the engine's HookTimeScale, and multiplies the
	// status line's waits: a test's, never a user's (0: the budgets as
	// promised).
	hookTimeScale float64
}

// noLedger is the mode of a command that never opens the ledger.
const noLedger engine.Mode = 0

// ledgerModes is what each command does with the ledger, by its path: the
// one place that says it. A command that only reads opens the ledger
// read-only, and a ledger that is not there is an error
// (*store.NoLedgerError), not a new empty one; a hook and the MCP server
// write when they can and still read a ledger they cannot write; doctor
// does too, creating nothing. Every command that runs is here
// (TestLedgerModes).
var ledgerModes = map[string]engine.Mode{
	"ledger init":            engine.Write,
	"ledger version":         engine.Read,
	"ledger ingest":          engine.Write,
	"ledger sessions":        engine.Read,
	"ledger audit":           engine.Read,
	"ledger search":          engine.Read,
	"ledger compact":         engine.Write,
	"ledger handoff":         engine.Read, // handoff SESSION --to AGENT
	"ledger handoff list":    engine.Read,
	"ledger handoff show":    engine.Read,
	"ledger note":            engine.Write,
	"ledger meter":           engine.Read,
	"ledger resume":          engine.Read,
	"ledger forget":          engine.Write,
	"ledger pause":           engine.Write,
	"ledger unpause":         engine.Write,
	"ledger export":          engine.Write,
	"ledger doctor":          engine.Inspect,
	"ledger redact":          engine.Write,
	"ledger hooks install":   noLedger,
	"ledger hooks uninstall": noLedger,
	"ledger hooks log":       engine.Read,
	"ledger statusline":      engine.Read,
	"ledger hook":            engine.WriteOrRead,
	"ledger mcp":             engine.WriteOrRead,
	"ledger mcp install":     noLedger,
	"ledger mcp uninstall":   noLedger,
	"ledger serve":           engine.Read,
	"ledger sync":            engine.Write,
}

// lessGC is for a command that reads a bounded amount and exits (resume,
// search): Go's collector then waits until the heap has grown five times
// what the last collection left, not twice. Such a process ends before a
// collection pays off: it was ~1 ms of the 13 ms resume of a 50k-message
// session's handoff (1.1 MB of JSON decoded). It returns what restores the
// setting (commands also run in-process, in tests).
func lessGC() (restore func()) { return gcPercent(400) }

// bulkGC is for `ledger ingest`: the collector waits until the heap has
// grown three times what the last collection left, not twice, and the
// soft memory limit (main.go) still bounds it. An ingest of 100k
// generated messages took 4% less CPU, its peak RSS 3-4.5 MB more (most of
// it is SQLite's page cache, outside Go's heap).
func bulkGC() (restore func()) { return gcPercent(200) }

func gcPercent(p int) (restore func()) {
	old := debug.SetGCPercent(p)
	return func() { debug.SetGCPercent(old) }
}

// now is the app's clock.
func (a *App) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// scaled is d, a hook's or the status line's wait, times hookTimeScale.
func (a *App) scaled(d time.Duration) time.Duration {
	if a.hookTimeScale <= 0 {
		return d
	}
	return time.Duration(float64(d) * a.hookTimeScale)
}

// executable is the ledger binary's path.
func (a *App) executable() (string, error) {
	if a.Executable != nil {
		return a.Executable()
	}
	return os.Executable()
}

// DBPath is the database path: --db, else the environment's
// (engine.DBPath).
func (a *App) DBPath() (string, error) {
	if a.dbFlag != "" {
		return a.dbFlag, checkDB("--db", a.dbFlag)
	}
	if env := a.Getenv("LEDGER_DB"); env != "" {
		return env, checkDB("$LEDGER_DB", env)
	}
	return engine.DBPath(a.Getenv)
}

// checkDB says, as a usage error, what is wrong with a database location
// the user gave (by name: --db or $LEDGER_DB) before anything opens it.
func checkDB(name, db string) error {
	if err := store.CheckLocation(db); err != nil {
		return usagef("%s %w", name, err)
	}
	if fi, err := os.Stat(db); err == nil && fi.IsDir() && !store.IsURL(db) {
		return usagef("%s %s is a folder, not a ledger file: give a file's path (%s, say)", name, db, filepath.Join(db, "ledger.db"))
	}
	return nil
}

// localPath is the SQLite ledger this machine would use ($LEDGER_DB
// aside): where a team ledger's files go on this machine.
func (a *App) localPath() string {
	local, _ := engine.DBPath(func(k string) string {
		if k == "LEDGER_DB" {
			return ""
		}
		return a.Getenv(k)
	})
	return local
}

// home is $HOME, else the system's idea of the user's home folder.
func (a *App) home() (string, error) {
	if h := a.Getenv("HOME"); h != "" {
		return h, nil
	}
	return os.UserHomeDir()
}

// Engine is the engine every command works through, made on first use in
// the command's mode (ledgerModes); it opens (and, writing, creates and
// migrates) the database when a command first needs it.
func (a *App) Engine() *engine.Engine {
	if a.engine == nil {
		home, _ := a.home()
		db, err := a.DBPath()
		e, oerr := engine.Open(engine.Config{DB: db, DBError: err, Mode: a.mode, Home: home, Now: a.Now,
			Host: a.Getenv("LEDGER_HOST"), Local: a.localPath(), NoRedact: a.noRedact, Warn: a.Stderr,
			HookTimeScale: a.hookTimeScale})
		if oerr != nil {
			// A command that opens the ledger without saying how (its
			// entry in ledgerModes): a bug, which every test of it shows.
			panic(fmt.Sprintf("ledger: %v (a command missing from ledgerModes?)", oerr))
		}
		a.engine = e
	}
	return a.engine
}

// Store opens the database on first use.
func (a *App) Store(ctx context.Context) (*store.Store, error) { return a.Engine().Store(ctx) }

func (a *App) close() {
	if a.engine != nil {
		a.engine.Close() // not when a hook run abandoned its work: see Engine.Close
	}
}

// Exit codes of docs/contract.md.
const (
	exitOK       = 0
	exitFailure  = 1
	exitUsage    = 2
	exitNotFound = 3
	// exitBlock is what a Claude Code hook exits with to block the event
	// (its stderr is shown); only clear mode's PreCompact uses it.
	exitBlock = 2
)

// usageError marks a bad flag or argument: exit 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// Is makes a usageError engine.ErrInvalid.
func (e usageError) Is(target error) bool { return target == engine.ErrInvalid }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// exitCode maps an error to the contract's exit codes by its kind
// (engine.Kind); it is the one place that does. A bad flag or argument (a
// usageError, an invalid request, a --db that is no ledger) and an
// ambiguous session prefix exit 2, something that does not exist 3, a hook
// that blocks its event 2; a read-only ledger, a busy one and every other
// failure 1.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	switch engine.Kind(err) {
	case engine.ErrInvalid, engine.ErrAmbiguous:
		return exitUsage
	case engine.ErrBlocked:
		return exitBlock
	case engine.ErrNotFound:
		return exitNotFound
	default:
		return exitFailure
	}
}

// run builds the command tree, runs it and returns the exit code. Errors
// become one line on stderr: `ledger: <what went wrong>`.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	app := &App{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: getenv, Getwd: os.Getwd,
		StdoutTTY: term.IsTerminal(stdout), StderrTTY: term.IsTerminal(stderr)}
	defer app.close()
	return app.run(ctx, args)
}

// run runs one command line with the app's streams and environment.
func (app *App) run(ctx context.Context, args []string) int {
	app.rawStderr = app.Stderr
	if app.StdoutTTY {
		t := term.NewWriter(app.Stdout)
		app.Stdout = t
		defer t.Flush()
	}
	if app.StderrTTY {
		t := term.NewWriter(app.Stderr)
		app.Stderr = t
		defer t.Flush()
	}
	stdin, stdout, stderr := app.Stdin, app.Stdout, app.Stderr
	root := newRootCmd(app)
	root.SetArgs(queryArgs(root, args))
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err != nil && strings.HasPrefix(err.Error(), "unknown command ") {
		// cobra has no typed error for this one; it is a usage error.
		err = usageError{err}
	}
	if err != nil {
		msg := strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", " ")
		if ctx.Err() != nil && !strings.Contains(msg, "interrupted") {
			// Ctrl-C or SIGTERM, wherever the command was (opening the
			// ledger, say): that is what the user needs to read first.
			msg = "interrupted: " + msg
		}
		fmt.Fprintf(stderr, "ledger: %s\n", msg)
	}
	return exitCode(err)
}

func newRootCmd(app *App) *cobra.Command {
	var stopProfile func()
	root := &cobra.Command{
		Use:   "ledger",
		Short: "A memory for AI coding agents that survives the context window",
		Long: `ledger keeps a SQLite ledger of everything your coding agents (Claude Code,
Codex CLI) did. Instead of a long, lossy compaction summary it writes a short
structured handoff, and at the next session start it rebuilds fresh context
from the ledger: clear, don't compact.

The database is --db, else $LEDGER_DB, else $XDG_DATA_HOME/ledger/ledger.db
(~/.local/share/ledger/ledger.db). It is created on first use, owner-only.

Secrets (provider API keys, tokens, JWTs, private keys, passwords in URLs and
high-entropy values assigned to names like KEY, TOKEN, SECRET or PASSWORD) are
replaced with [REDACTED:<kind>] before anything is stored or indexed, using
gitleaks' rule set. --no-redact turns that off (see its risk below).

On a terminal, control characters in recorded text (a transcript's escape
sequences) are shown escaped, as \u001b; pipes and files get them as they are.`,
		Example: `  ledger ingest ~/.claude/projects ~/.codex/sessions
  ledger sessions --limit 5
  ledger audit --json`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			app.mode = ledgerModes[cmd.CommandPath()]
			// A bad --db is refused before a command uses it, or writes it
			// into an agent's configuration (install); the hook and the
			// status line find out when they open it, and fail open.
			if name := cmd.Name(); app.dbFlag != "" && name != "hook" && name != "statusline" {
				if err := checkDB("--db", app.dbFlag); err != nil {
					return err
				}
			}
			if app.cpuProfile == "" {
				return nil
			}
			f, err := os.OpenFile(app.cpuProfile, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
			if err != nil {
				return fmt.Errorf("cpu profile: %w", err)
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				f.Close()
				return fmt.Errorf("cpu profile: %w", err)
			}
			stopProfile = func() { pprof.StopCPUProfile(); f.Close() }
			return nil
		},
		PersistentPostRun: func(cmd *cobra.Command, args []string) {
			if stopProfile != nil {
				stopProfile()
			}
		},
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{flagError(err)} })
	root.PersistentFlags().StringVar(&app.dbFlag, "db", "", "database `path` (default $LEDGER_DB, else $XDG_DATA_HOME/ledger/ledger.db)")
	root.PersistentFlags().StringVar(&app.cpuProfile, "cpuprofile", "", "write a CPU profile to `file` (inspect with go tool pprof)")
	root.PersistentFlags().BoolVar(&app.noRedact, "no-redact", false,
		"store secrets as they come instead of as [REDACTED:<kind>]. RISK: API keys, tokens, passwords and\n"+
			"private keys then sit in plain text in the database, its WAL and the full-text index, and search\n"+
			"shows them; 'ledger redact --rescan' removes them later")
	root.AddCommand(
		newInitCmd(app),
		newVersionCmd(app),
		newIngestCmd(app),
		newSessionsCmd(app),
		newAuditCmd(app),
		newSearchCmd(app),
		newCompactCmd(app),
		newHandoffCmd(app),
		newNoteCmd(app),
		newMeterCmd(app),
		newResumeCmd(app),
		newForgetCmd(app),
		newPauseCmd(app), newUnpauseCmd(app), newExportCmd(app),
		newDoctorCmd(app),
		newRedactCmd(app),
		newHooksCmd(app),
		newStatuslineCmd(app),
		newHookCmd(app),
		newMCPCmd(app),
		newServeCmd(app),
		newSyncCmd(app),
	)
	return root
}

// flagError says what a flag given a value of the wrong kind wants, in
// place of pflag's message, which quotes Go's parser ("strconv.ParseInt:
// parsing "abc": invalid syntax").
func flagError(err error) error {
	var iv *pflag.InvalidValueError
	if !errors.As(err, &iv) {
		return err
	}
	want := map[string]string{
		"int": "a whole number", "int64": "a whole number", "uint": "a whole number", "float64": "a number",
		"bool": "true or false", "duration": "a duration such as 36h or 90m",
	}[iv.GetFlag().Value.Type()]
	if want == "" {
		return err
	}
	return fmt.Errorf("--%s %q: want %s", iv.GetFlag().Name, iv.GetValue(), want)
}

// noArgs, exactArgs and friends wrap cobra's argument checks as usage errors.
func argsUsage(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

// queryAnnotation marks a command whose positional arguments are a query
// that may start with '-' (search's -word and -"a phrase" exclusions).
const queryAnnotation = "ledger/query"

// queryArgs moves the words of a query command (queryAnnotation) that are
// not its flags, or a flag's value, after a "--", in their order, so that
// `ledger search -docker` searches instead of failing on a flag -d. Long
// flags (--json, --kind message) and -h stay flags wherever they are; an
// unknown long flag stays one too, and its error shows the -- form.
func queryArgs(root *cobra.Command, args []string) []string {
	cmd, _, err := root.Find(args)
	if err != nil || cmd.Annotations[queryAnnotation] == "" {
		return args
	}
	lookup := func(name string) *pflag.Flag {
		if f := cmd.Flags().Lookup(name); f != nil {
			return f
		}
		return cmd.InheritedFlags().Lookup(name)
	}
	var out, query []string
	named := false // the command's name was seen
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			query = append(query, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "--"):
			out = append(out, a)
			name, _, withValue := strings.Cut(a[2:], "=")
			if f := lookup(name); f != nil && !withValue && f.NoOptDefVal == "" && i+1 < len(args) {
				out = append(out, args[i+1])
				i++
			}
		case !named && strings.HasPrefix(a, "-"):
			out = append(out, a)
		case !named:
			named = a == cmd.Name()
			out = append(out, a)
		case a == "-h":
			out = append(out, a)
		default:
			query = append(query, a)
		}
	}
	if len(query) == 0 {
		return out
	}
	return append(append(out, "--"), query...)
}
