package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/handoff/gitrepo"
	"github.com/agentledger/ledger/store"
)

type compactOptions struct {
	Session string
	Task    string
	Trigger string
	Out     string
	Budget  int
	JSON    bool
}

func newCompactCmd(app *App) *cobra.Command {
	opts := &compactOptions{}
	cmd := &cobra.Command{
		Use:   "compact SESSION",
		Short: "Clear, don't compact: write a handoff and a compaction record",
		Long: `Write a handoff for a session: what a fresh session needs to carry on (task,
files modified, decisions, tests run, unresolved errors, blockers, next steps,
context), extracted from the session's messages without an LLM and fitted to a
token budget. It first ingests what is new in the session's transcripts, so the
handoff is current.

The handoff goes to the ledger, with a compaction record (source cli) linked to
it, and its Markdown to --out, or to .ledger/handoffs/<session>/<time>.md in the
session's project (under the database's folder when the project is not on this
machine). Then /clear the agent and start it again: 'ledger resume' (or the
SessionStart hook) gives the new session the handoff.

The Markdown is trimmed to --budget tokens by priority (task, next steps,
errors, blockers, decisions, files, tests); the JSON keeps everything.`,
		Example: `  ledger compact 258c7280
  ledger compact 258c7280 --task "finish the retry refactor" --budget 600 --json
  ledger compact 258c7280 --out HANDOFF.md`,
		Args: argsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Session = args[0]
			if opts.Trigger != "manual" && opts.Trigger != "auto" {
				return usagef("--trigger %q: want manual or auto", opts.Trigger)
			}
			if opts.Budget < handoff.MinBudget {
				return usagef("--budget %d: want at least %d tokens", opts.Budget, handoff.MinBudget)
			}
			return runCompact(cmd.Context(), app, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Task, "task", "", "the `task` to state (default: the session's first request, and its latest)")
	cmd.Flags().StringVar(&opts.Trigger, "trigger", "manual", "`manual` or auto")
	cmd.Flags().StringVar(&opts.Out, "out", "", "write the Markdown to `path`")
	cmd.Flags().IntVar(&opts.Budget, "budget", handoff.DefaultBudget, "fit the Markdown in `N` tokens")
	jsonFlag(cmd, &opts.JSON)
	return cmd
}

func runCompact(ctx context.Context, app *App, opts *compactOptions) error {
	s, sess, err := app.openSession(ctx, opts.Session)
	if err != nil {
		return err
	}
	if err := ingestSession(ctx, s, sess.ID); err != nil {
		return err
	}
	w := handoffWriter{st: s, now: time.Now().UTC().Truncate(time.Second)}
	doc, err := w.write(ctx, sess.ID, handoffRequest{Task: opts.Task, Trigger: opts.Trigger, Budget: opts.Budget,
		Out: opts.Out, Source: "cli"})
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(app.Stdout, doc)
	}
	fmt.Fprint(app.Stdout, doc.Markdown)
	fmt.Fprintf(app.Stderr, "ledger: handoff %d written (%d tokens) to the ledger and %s\n", doc.ID, doc.Tokens, w.path)
	return nil
}

// ingestSession reads what is new in every transcript file of a session.
func ingestSession(ctx context.Context, s *store.Store, sessionID string) error {
	paths, err := s.SessionFiles(ctx, sessionID)
	if err != nil {
		return err
	}
	g := &ingester{st: s}
	for _, p := range paths {
		_, err := g.ingestFile(ctx, p)
		switch {
		case err == nil, errors.Is(err, errUnchanged), errors.Is(err, fs.ErrNotExist):
			// a transcript deleted since it was ingested: the ledger has it
		default:
			return fmt.Errorf("ingest %s: %w", p, err)
		}
	}
	return nil
}

// handoffRequest says what handoff to write.
type handoffRequest struct {
	Task    string
	Trigger string
	Budget  int
	Out     string // the Markdown file; "" for the default place
	Source  string // of the compaction record: "cli" or "hook"
	// Note is the user's instruction for this compaction (PreCompact's
	// custom_instructions): what they want kept, so it leads the next steps.
	Note string
}

// handoffWriter extracts, fits and stores a handoff and writes its file.
type handoffWriter struct {
	st   *store.Store
	now  time.Time
	path string // the file written
}

func (w *handoffWriter) write(ctx context.Context, sessionID string, req handoffRequest) (handoff.Doc, error) {
	sess, err := w.st.Session(ctx, sessionID)
	if err != nil {
		return handoff.Doc{}, err
	}
	msgs, err := w.st.Messages(ctx, sess.ID, 0)
	if err != nil {
		return handoff.Doc{}, err
	}
	m := meterOf(sessionView{ID: sess.ID, Model: sess.Model, ContextWindow: sess.ContextWindow, Messages: msgs,
		Usage: codexUsage(sess)}, nil)
	est := compact.DefaultEstimator()
	doc := handoff.Extract(msgs, handoff.ExtractOptions{Task: req.Task, SessionID: sess.ID, Project: sess.Project,
		Branch: sess.GitBranch, Trigger: req.Trigger, CreatedAt: w.now, ContextSummary: m.Summary,
		Compactions: int(sess.Compactions)})
	if req.Note != "" {
		doc.NextSteps = append([]string{"(asked at compaction) " + req.Note}, doc.NextSteps...)
	}
	if g, ok := gitrepo.Read(sess.Project); ok {
		doc.Head = g.Head
		if doc.Branch == "" {
			doc.Branch = g.Branch
		}
	}
	// Render from redacted sections: the file, the output and the ledger
	// all get the same secret-free document.
	doc = w.st.RedactHandoff(doc).Rendered(req.Budget, est.Tokens)
	w.path = req.Out
	if w.path == "" {
		w.path = defaultHandoffPath(w.st.Path(), sess.Project, sess.ID, w.now)
	}
	if err := writeAtomic(w.path, []byte(doc.Markdown), 0o600); err != nil {
		return handoff.Doc{}, fmt.Errorf("write handoff file: %w", err)
	}
	// The previous file of that name (a rerun within the same second) is
	// not worth a backup.
	os.Remove(w.path + ".bak")
	rec := &store.CompactionRecord{Source: req.Source, Trigger: req.Trigger, At: w.now, PreTokens: m.UsedTokens}
	for i := len(msgs) - 1; i >= 0; i-- {
		if !msgs[i].Sidechain {
			rec.LogicalParent = msgs[i].UUID
			break
		}
	}
	id, err := w.st.AddHandoff(ctx, doc, w.path, rec)
	if err != nil {
		os.Remove(w.path)
		return handoff.Doc{}, err
	}
	doc.ID = id
	return doc, nil
}

// codexUsage is a Codex session's latest usage, which the ledger keeps on
// the session (Codex reports usage apart from its messages).
func codexUsage(sess store.Session) *compact.Usage {
	if sess.Source != "codex" || sess.ContextTokens <= 0 {
		return nil
	}
	return &compact.Usage{InputTokens: sess.ContextTokens}
}

// defaultHandoffPath is .ledger/handoffs/<session>/<time>.md in the
// project, or beside the database when the project is not a folder here.
func defaultHandoffPath(dbPath, project, session string, at time.Time) string {
	name := at.UTC().Format("20060102T150405Z") + ".md"
	if fi, err := os.Stat(project); err == nil && fi.IsDir() && project != "" {
		return filepath.Join(project, ".ledger", "handoffs", session, name)
	}
	return filepath.Join(filepath.Dir(dbPath), "handoffs", session, name)
}
