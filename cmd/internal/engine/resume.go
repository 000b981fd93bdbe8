package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/handoff/gitrepo"
	"github.com/agentledger/ledger/store"
)

// MaxHookContext is the most additionalContext Claude Code injects whole:
// anything longer is cut to a 2 KB preview.
const MaxHookContext = 10_000

// resumeMessages is how many of a session's latest messages a handoff is
// extracted from when none was written.
const resumeMessages = 2000

// ResumeRequest says whose resume context to build, and how big.
type ResumeRequest struct {
	// Session is a session id or unique prefix; "" for the latest session
	// of Project.
	Session string
	// Project is a folder: its git checkout, every worktree of the same
	// repository, counts as the project. Used when Session is "".
	Project string
	// Exclude leaves one session out of the project's (the one asking).
	Exclude string
	// Budget is in tokens (at least handoff.MinBudget); MaxChars, when > 0,
	// caps the characters too.
	Budget, MaxChars int
}

// Resume is a session's resume context.
type Resume struct {
	Session   store.Session
	Markdown  string
	Tokens    int
	HandoffID *int64 // nil when the handoff was extracted now
	// Handoff is the handoff the context holds (CrossResume reads its
	// tasks).
	Handoff handoff.Doc
	// Unsaved is the resume state extracted now that a read-only ledger
	// could not store (see resumeDoc); nil when there is none. A caller
	// that can write stores it (store.SaveResumeStates), so that the next
	// resume reads it.
	Unsaved *store.ResumeState
}

// errPending says the handoff resume uses is a pending one (pending.go).
var errPending = errors.New("pending handoff")

// Resume assembles what a fresh session needs to carry on: the session's
// latest handoff (or one extracted now from its latest messages), its
// compactions, its latest requests, and what moved in the project since
// the handoff.
func (e *Engine) Resume(ctx context.Context, req ResumeRequest) (Resume, error) {
	st, err := e.Store(ctx)
	if err != nil {
		return Resume{}, err
	}
	sess, err := e.resumeSession(ctx, req)
	if err != nil {
		return Resume{}, err
	}
	if why, err := e.OptedOut(ctx, sess.Project); err != nil || why != "" {
		// The user keeps the project out of the ledger (optout.go):
		// nothing of it is injected, held from before or not.
		return Resume{}, cmp.Or(err, fmt.Errorf("%s: nothing to resume: %w", why, ErrNotFound))
	}
	in := handoff.ResumeInput{Session: sess.ID, Source: sess.Source, Project: sess.Project, Branch: sess.GitBranch}
	res := Resume{Session: sess}
	h, err := st.LatestHandoff(ctx, sess.ID)
	if doc, ok := latestPending(st.Path(), sess.ID); ok && (notFound(err) || err == nil && doc.CreatedAt.After(h.CreatedAt)) {
		// A PreCompact hook wrote this one while the ledger could not be
		// written: its row is pending, and it is the newest.
		in.Handoff = doc
		in.Stale = staleness(sess.Project, in.Handoff)
		err = errPending
	}
	switch {
	case errors.Is(err, errPending):
	case err == nil:
		if in.Handoff, err = h.Doc(); err != nil {
			return res, err
		}
		res.HandoffID = &h.ID
		in.Stale = staleness(sess.Project, in.Handoff)
	case notFound(err):
		if in.Handoff, res.Unsaved, err = e.resumeDoc(ctx, st, sess); err != nil {
			return res, err
		}
		in.Extracted = true
	default:
		return res, err
	}
	if !in.Extracted {
		// What the user asked after the handoff was written: an extracted
		// handoff holds every request already.
		reqs, err := st.RecentUserMessages(ctx, sess.ID, 20)
		if err != nil {
			return res, err
		}
		var since []compact.Message
		for _, m := range reqs {
			if m.Time.After(in.Handoff.CreatedAt) {
				since = append(since, m)
			}
		}
		in.Requests = handoff.UserRequests(since, 3)
	}
	c, n, err := st.LastCompaction(ctx, sess.ID)
	if err != nil {
		return res, err
	}
	if n > 0 {
		in.Compactions = n
		in.LastCompaction = handoff.CompactionNote{At: c.At, Trigger: c.Trigger, PreTokens: orZero(c.PreTokens), Source: c.Source}
	}
	// The team's other sessions may have moved on since: what they hold of
	// a shared task list now.
	in.Handoff = teamTasks(ctx, st, sess, in.Handoff)
	count := compact.DefaultMemo()
	res.Handoff = in.Handoff
	res.Markdown = fitResume(in, req.Budget, req.MaxChars, count)
	res.Tokens = count(res.Markdown)
	return res, nil
}

// resumeDoc is the handoff resume shows for a session with none written:
// the stored resume state when it was extracted from what the session holds
// now (ingest and the Stop and SessionEnd hooks keep it so), else one
// extracted now. The two are the same document (extractForResume). One
// extracted now is stored, so that the next resume reads it: a bulk ingest
// stores the states of its projects' latest sessions only (resumeState).
// Best effort, and never a wait: a ledger another process is writing keeps
// its state for a later resume. On a read-only ledger it is returned as
// unsaved, for the caller to store if it can write elsewhere.
func (e *Engine) resumeDoc(ctx context.Context, st *store.Store, sess store.Session) (handoff.Doc, *store.ResumeState, error) {
	key, err := st.ResumeKey(ctx, sess)
	if err != nil {
		return handoff.Doc{}, nil, err
	}
	rs, err := st.LoadResumeState(ctx, sess.ID)
	switch {
	case err == nil && rs.Key == key:
		return rs.Doc, nil, nil
	case err != nil && !notFound(err):
		return handoff.Doc{}, nil, err
	}
	doc, err := extractForResume(ctx, st, sess)
	if err != nil {
		return doc, nil, err
	}
	state := &store.ResumeState{SessionID: sess.ID, Key: key, Doc: doc}
	if st.ReadOnly() {
		return doc, state, nil
	}
	_ = saveResumeState(ctx, st, *state)
	return doc, nil, nil
}

// KeepResumeState stores, once the context is printed, the resume state a
// resume extracted on the read-only ledger it opened (Resume.Unsaved; an
// ingest leaves an older session's to its first resume), when this
// process can write the ledger: so that the next resume reads it instead
// of extracting again. Best effort, and never a wait past resumeSaveWait
// for the lock: nothing is said when it cannot, and a ledger this process
// cannot write (or one on a server) stays as it is.
func (e *Engine) KeepResumeState(ctx context.Context, rs *store.ResumeState) {
	if rs == nil {
		return
	}
	w, done, err := e.writer(ctx)
	if err != nil {
		return
	}
	defer done()
	_ = saveResumeState(ctx, w, *rs)
}

// saveResumeState stores a resume state a resume extracted, waiting at
// most resumeSaveWait for another writer's lock.
func saveResumeState(ctx context.Context, st *store.Store, rs store.ResumeState) error {
	return st.SaveResumeStates(store.WithLockDeadline(ctx, time.Now().Add(resumeSaveWait)), []store.ResumeState{rs})
}

// resumeSaveWait is how long a resume waits for the write lock to store
// the state it extracted.
const resumeSaveWait = 20 * time.Millisecond

// extractForResume extracts the handoff resume shows for a session with
// none written: from its latest resumeMessages messages, with its notes.
func extractForResume(ctx context.Context, st *store.Store, sess store.Session) (handoff.Doc, error) {
	msgs, err := st.Messages(ctx, sess.ID, resumeMessages)
	if err != nil {
		return handoff.Doc{}, err
	}
	return extractMessages(ctx, st, sess, msgs)
}

// extractMessages extracts the handoff resume shows from the session's
// latest messages, with its notes.
func extractMessages(ctx context.Context, st *store.Store, sess store.Session, msgs []compact.Message) (handoff.Doc, error) {
	notes, err := st.HandoffNotes(ctx, sess.ID)
	if err != nil {
		return handoff.Doc{}, err
	}
	d := handoff.Extract(msgs, handoff.ExtractOptions{SessionID: sess.ID, Project: sess.Project,
		Branch: sess.GitBranch, Compactions: int(sess.Compactions), Notes: notes})
	return teamTasks(ctx, st, sess, d), nil
}

// refreshJob is a session whose resume state to extract.
type refreshJob struct {
	sessionID string
	// latestOnly skips a session no project resume reads (superseded:
	// neither its folder's latest nor active when that one began): a bulk
	// ingest's.
	latestOnly bool
}

// resumeState extracts a session's resume state unless the stored one
// is current; ok is false when it is (nothing to store). The key is read
// before the messages: a state is never stored under a key newer than what
// it was extracted from, so a write in between only makes it look stale.
func resumeState(ctx context.Context, st *store.Store, job refreshJob) (rs store.ResumeState, ok bool, err error) {
	sess, err := st.Session(ctx, job.sessionID)
	if err != nil {
		return rs, false, err
	}
	if job.latestOnly {
		if old, err := superseded(ctx, st, sess); err != nil || old {
			return rs, false, err
		}
	}
	key, err := st.ResumeKey(ctx, sess)
	if err != nil {
		return rs, false, err
	}
	if old, err := st.LoadResumeState(ctx, sess.ID); err == nil && old.Key == key {
		return rs, false, nil
	}
	doc, err := extractForResume(ctx, st, sess)
	if err != nil {
		return rs, false, err
	}
	return store.ResumeState{SessionID: sess.ID, Key: key, Doc: doc}, true, nil
}

// superseded tells whether a session of sess's project folder, or of a
// folder below it, has newer activity than sess and began after sess
// ended. Then neither `resume --project` nor the SessionStart of a new
// session there picks sess (they read the latest session of the folder,
// of its repository or of a folder above it), nor does that latest
// session's resume read its state for the team's task list (teamTasks
// reads the sessions active at the same time); only a resume by its id
// reads it: extracted then (resumeDoc) and stored, in tens of
// milliseconds, as for `resume --project` run from within the latest
// session, which leaves itself out. Extracting the state of every session
// of a bulk ingest cost it about as much CPU as writing the messages and
// their index; the second latest of each folder too, 4% more.
func superseded(ctx context.Context, st *store.Store, sess store.Session) (bool, error) {
	if sess.Project == "" {
		return false, nil
	}
	list, err := st.Sessions(ctx, store.SessionFilter{Project: sess.Project, Limit: 1})
	if err != nil || len(list) == 0 || list[0].ID == sess.ID {
		return false, err
	}
	return sess.LastAt.Before(list[0].StartedAt.Add(-teamSlack)), nil
}

// RefreshResumeState brings a session's stored resume state up to date,
// so that its next resume reads it instead of extracting.
func (e *Engine) RefreshResumeState(ctx context.Context, sessionID string) error {
	st, err := e.Store(ctx)
	if err != nil {
		return err
	}
	rs, ok, err := resumeState(ctx, st, refreshJob{sessionID: sessionID})
	if err != nil || !ok {
		return err
	}
	return st.SaveResumeStates(ctx, []store.ResumeState{rs})
}

// fitResume renders the resume context within budget tokens as count
// counts them (compact.DefaultMemo: each trial render shares most lines
// with the one before) and, when maxChars > 0, within that many
// characters.
func fitResume(in handoff.ResumeInput, budget, maxChars int, count func(string) int) string {
	md := handoff.Resume(in, budget, count)
	for maxChars > 0 && utf8.RuneCountInString(md) > maxChars && budget > handoff.MinBudget {
		// Tokens and characters do not convert exactly: shrink the budget
		// in proportion, a little more each round.
		budget = max(budget*maxChars/utf8.RuneCountInString(md)-20, handoff.MinBudget)
		md = handoff.Resume(in, budget, count)
	}
	return md
}

func (e *Engine) resumeSession(ctx context.Context, req ResumeRequest) (store.Session, error) {
	if req.Session != "" {
		_, sess, err := e.Session(ctx, req.Session)
		return sess, err
	}
	return e.LatestProjectSession(ctx, req.Project, req.Exclude)
}

// LatestProjectSession is the project's session with the newest activity,
// leaving out exclude. A project in a git checkout is the whole repository:
// every worktree of it, wherever in it the session was started. Outside
// one, a project is the folder itself: a session started in a folder below
// it is another project's (a note made in /tmp went to the session of
// /tmp/x/workspace).
func (e *Engine) LatestProjectSession(ctx context.Context, dir, exclude string) (store.Session, error) {
	st, err := e.Store(ctx)
	if err != nil {
		return store.Session{}, err
	}
	dir = AbsPath(dir)
	f := store.SessionFilter{Project: dir, Exclude: exclude, Limit: 1, Exact: true}
	if g, ok := gitrepo.Read(dir); ok {
		f.Project, f.Exact = g.Root, false
		f.Projects = gitrepo.Worktrees(g.CommonDir)
	}
	list, err := st.Sessions(ctx, f)
	if err == nil && len(list) == 0 && st.StoredKey(f.Project) != f.Project {
		// A project whose path holds a secret is stored redacted.
		f.Project = st.StoredKey(f.Project)
		for i, p := range f.Projects {
			f.Projects[i] = st.StoredKey(p)
		}
		list, err = st.Sessions(ctx, f)
	}
	if err != nil {
		return store.Session{}, err
	}
	if len(list) == 0 {
		return store.Session{}, fmt.Errorf("no session of project %s in the ledger (ingest its transcripts first): %w", dir, ErrNotFound)
	}
	return list[0], nil
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
	deleted := map[string]bool{}
	for _, f := range d.Files {
		if f.Status == handoff.FileDeleted {
			deleted[f.Path] = true
		}
	}
	for _, f := range d.FilesModified {
		if deleted[f] {
			continue // gone on purpose
		}
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
