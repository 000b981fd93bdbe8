package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/handoff/gitrepo"
	"github.com/agentledger/ledger/store"
)

// maxHookContext is the most additionalContext Claude Code injects whole:
// anything longer is cut to a 2 KB preview.
const maxHookContext = 10_000

type resumeOptions struct {
	Session string
	Project string
	Budget  int
	Format  string
}

// resumeJSON is `ledger resume --format json` (CONTRACT.md).
type resumeJSON struct {
	Session   string `json:"session"`
	HandoffID *int64 `json:"handoff_id"`
	Tokens    int    `json:"tokens"`
	Markdown  string `json:"markdown"`
}

// hookOutput is Claude Code's SessionStart hook output.
type hookOutput struct {
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

func newResumeCmd(app *App) *cobra.Command {
	opts := &resumeOptions{}
	cmd := &cobra.Command{
		Use:   "resume [SESSION]",
		Short: "Fresh-session context from the latest ledger entries",
		Long: `Print what a fresh session needs to carry on: the session's latest handoff (or
one extracted now from its latest messages when none was written), its
compactions, its latest requests, and what moved since the handoff (branch,
HEAD, modified files changed on disk) when the project is a git checkout here.

Without SESSION it resumes the latest session of the project: --project, or
the current folder (the git checkout holding it, and every worktree of the same
repository). That is what a session started after /clear needs: it has a new id.

The output fits --budget tokens (default 2000, at least 200) by the meter's
count; the task and next steps always survive. --format hook prints Claude
Code's SessionStart output, with at most 10,000 characters of context (Claude
Code cuts anything longer to a preview).`,
		Example: `  ledger resume
  ledger resume 258c7280 --budget 1000
  ledger resume --project ~/src/app --format json
  ledger resume --format hook`,
		Args: argsUsage(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Session = args[0]
			}
			if opts.Budget < handoff.MinBudget {
				return usagef("--budget %d: want at least %d tokens", opts.Budget, handoff.MinBudget)
			}
			switch opts.Format {
			case "md", "json", "hook":
			default:
				return usagef("--format %q: want md, json or hook", opts.Format)
			}
			return runResume(cmd.Context(), app, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Project, "project", "", "resume the latest session of this project `folder` (default: the current folder)")
	cmd.Flags().IntVar(&opts.Budget, "budget", handoff.DefaultResumeBudget, "fit the context in `N` tokens")
	cmd.Flags().StringVar(&opts.Format, "format", "md", "`md`, json, or hook (Claude Code SessionStart output)")
	return cmd
}

func runResume(ctx context.Context, app *App, opts *resumeOptions) error {
	s, err := app.Store(ctx)
	if err != nil {
		return err
	}
	var sess store.Session
	if opts.Session != "" {
		sess, err = s.Session(ctx, opts.Session)
	} else {
		project := opts.Project
		if project == "" {
			if project, err = os.Getwd(); err != nil {
				return err
			}
		}
		sess, err = latestProjectSession(ctx, s, absPath(project), "")
	}
	if err != nil {
		return err
	}
	maxChars := 0
	if opts.Format == "hook" {
		maxChars = maxHookContext
	}
	r, err := buildResume(ctx, s, sess, opts.Budget, maxChars)
	if err != nil {
		return err
	}
	switch opts.Format {
	case "json":
		return writeJSON(app.Stdout, resumeJSON{Session: sess.ID, HandoffID: r.HandoffID, Tokens: r.Tokens, Markdown: r.Markdown})
	case "hook":
		return writeJSON(app.Stdout, sessionStartOutput(r.Markdown))
	}
	fmt.Fprint(app.Stdout, r.Markdown)
	return nil
}

func sessionStartOutput(md string) hookOutput {
	var out hookOutput
	out.HookSpecificOutput.HookEventName = "SessionStart"
	out.HookSpecificOutput.AdditionalContext = md
	return out
}

// latestProjectSession is the project's session with the newest activity.
// A project in a git checkout is the whole repository: every worktree of
// it, wherever in it the session was started.
func latestProjectSession(ctx context.Context, s *store.Store, dir, exclude string) (store.Session, error) {
	f := store.SessionFilter{Project: dir, Exclude: exclude, Limit: 1}
	if g, ok := gitrepo.Read(dir); ok {
		f.Project = g.Root
		f.Projects = gitrepo.Worktrees(g.CommonDir)
	}
	list, err := s.Sessions(ctx, f)
	if err != nil {
		return store.Session{}, err
	}
	if len(list) == 0 {
		return store.Session{}, fmt.Errorf("no session of project %s in the ledger (ingest its transcripts first): %w", dir, store.ErrNotFound)
	}
	return list[0], nil
}

type resumeResult struct {
	Markdown  string
	Tokens    int
	HandoffID *int64
}

// resumeMessages is how many of a session's latest messages a handoff is
// extracted from when none was written.
const resumeMessages = 2000

// buildResume assembles a session's resume context within budget tokens
// and, when maxChars > 0, within that many characters.
func buildResume(ctx context.Context, s *store.Store, sess store.Session, budget, maxChars int) (resumeResult, error) {
	in := handoff.ResumeInput{Session: sess.ID, Source: sess.Source, Project: sess.Project, Branch: sess.GitBranch}
	var res resumeResult
	h, err := s.LatestHandoff(ctx, sess.ID)
	switch {
	case err == nil:
		if in.Handoff, err = h.Doc(); err != nil {
			return res, err
		}
		res.HandoffID = &h.ID
		in.Stale = staleness(sess.Project, in.Handoff)
	case errors.Is(err, store.ErrNotFound):
		msgs, err := s.Messages(ctx, sess.ID, resumeMessages)
		if err != nil {
			return res, err
		}
		in.Handoff = handoff.Extract(msgs, handoff.ExtractOptions{SessionID: sess.ID, Project: sess.Project,
			Branch: sess.GitBranch, Compactions: int(sess.Compactions)})
		in.Extracted = true
	default:
		return res, err
	}
	reqs, err := s.RecentUserMessages(ctx, sess.ID, 20)
	if err != nil {
		return res, err
	}
	in.Requests = handoff.UserRequests(reqs, 3)
	cs, err := s.Compactions(ctx, store.CompactionFilter{SessionID: sess.ID})
	if err != nil {
		return res, err
	}
	for _, c := range cs {
		in.Compactions = append(in.Compactions, handoff.CompactionNote{At: c.At, Trigger: c.Trigger, PreTokens: c.PreTokens.Int64, Source: c.Source})
	}
	count := compact.DefaultEstimator().Tokens
	md := handoff.Resume(in, budget, count)
	for maxChars > 0 && utf8.RuneCountInString(md) > maxChars && budget > handoff.MinBudget {
		// Tokens and characters do not convert exactly: shrink the budget
		// in proportion, a little more each round.
		budget = max(budget*maxChars/utf8.RuneCountInString(md)-20, handoff.MinBudget)
		md = handoff.Resume(in, budget, count)
	}
	res.Markdown, res.Tokens = md, count(md)
	return res, nil
}

// staleness says what moved in the project since the handoff was written:
// the branch, HEAD, and modified files changed on disk (or gone).
func staleness(project string, d handoff.Doc) []string {
	if project == "" {
		return nil
	}
	var out []string
	if g, ok := gitrepo.Read(project); ok {
		if d.Branch != "" && g.Branch != "" && g.Branch != d.Branch {
			out = append(out, fmt.Sprintf("the branch is now %s (the handoff was written on %s)", g.Branch, d.Branch))
		}
		if d.Head != "" && g.Head != "" && g.Head != d.Head {
			out = append(out, fmt.Sprintf("HEAD moved from %s to %s", gitrepo.ShortHash(d.Head), gitrepo.ShortHash(g.Head)))
		}
	}
	var changed, gone []string
	for _, f := range d.FilesModified {
		p := f
		if !filepath.IsAbs(p) {
			p = filepath.Join(project, p)
		}
		rel := f
		if r, err := filepath.Rel(project, p); err == nil && !strings.HasPrefix(r, "..") {
			rel = r
		}
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, os.ErrNotExist):
			gone = append(gone, rel)
		// created_at has one-second precision: compare at that precision,
		// or an edit made earlier in the handoff's own second looks newer.
		case err == nil && fi.ModTime().Truncate(time.Second).After(d.CreatedAt):
			changed = append(changed, rel)
		}
	}
	if len(changed) > 0 {
		out = append(out, "changed on disk since: "+strings.Join(changed, ", "))
	}
	if len(gone) > 0 && len(gone) < len(d.FilesModified) {
		// all gone means the project is elsewhere, not that the files went
		out = append(out, "no longer on disk: "+strings.Join(gone, ", "))
	}
	return out
}
