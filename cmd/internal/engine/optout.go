package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentledger/ledger/handoff/gitrepo"
	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/transcript"
)

// IgnoreFile is the file that, at a repository's top folder (or in a
// project folder that is no checkout), keeps ledger out of the project:
// nothing of its sessions is stored, and no hook injects anything there.
const IgnoreFile = ".ledgerignore"

// optOut says which projects the user keeps out of the ledger: the paused
// ones (`ledger pause`, below them included) and those with a .ledgerignore
// file. It is safe for concurrent use.
type optOut struct {
	paused []string
	// stored is a path as the ledger stores it (store.StoredKey): a paused
	// path that holds a secret is stored redacted.
	stored func(string) string
	mu     sync.Mutex
	ignore map[string]string // folder -> its .ledgerignore, or ""
}

// loadOptOut reads the paused projects.
func loadOptOut(ctx context.Context, st *store.Store) (*optOut, error) {
	ps, err := st.PausedProjects(ctx)
	if err != nil {
		return nil, err
	}
	return newOptOut(st, ps), nil
}

// newOptOut is the opt-out of the paused projects ps.
func newOptOut(st *store.Store, ps []store.PausedProject) *optOut {
	o := &optOut{ignore: map[string]string{}, stored: st.StoredKey}
	for _, p := range ps {
		o.paused = append(o.paused, p.Project)
	}
	return o
}

// why says why a project (or any folder in it) is kept out of the ledger,
// or "" when it is not.
func (o *optOut) why(dir string) string {
	if dir == "" {
		return ""
	}
	dir = filepath.Clean(dir)
	dirs := []string{dir}
	if len(o.paused) > 0 && o.stored != nil {
		if sd := o.stored(dir); sd != dir {
			dirs = append(dirs, sd)
		}
	}
	for _, p := range o.paused {
		for _, d := range dirs {
			if d == p || strings.HasPrefix(d, p+string(filepath.Separator)) || p == string(filepath.Separator) {
				return "recording is paused for " + p
			}
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if f, ok := o.ignore[dir]; ok {
		return f
	}
	f := ignoreFileOf(dir)
	if f != "" {
		f = "ignored by " + f
	}
	o.ignore[dir] = f
	return f
}

// ignoreFileOf is the .ledgerignore that covers dir: in the top folder of
// the checkout holding dir, or in dir itself; "" when there is none.
func ignoreFileOf(dir string) string {
	cands := []string{dir}
	if g, ok := gitrepo.Read(dir); ok && g.Root != dir {
		cands = append(cands, g.Root)
	}
	for _, d := range cands {
		f := filepath.Join(d, IgnoreFile)
		if fi, err := os.Stat(f); err == nil && !fi.IsDir() {
			return f
		}
	}
	return ""
}

// optedOut tells whether an ingested record belongs to a session of a
// project kept out of the ledger; such a record is read (the file's cursor
// moves past it) and not written. decided remembers each session's
// answer once its project is known: from the record itself, else from the
// session's row.
func (in *ingester) optedOut(ctx context.Context, rec transcript.Record, roots *projectRoots, decided map[string]bool) (bool, error) {
	id := ""
	switch {
	case rec.Session != nil && rec.Session.ID != "":
		id = rec.Session.ID
	case rec.Message != nil:
		id = rec.Message.SessionID
	case rec.Boundary != nil:
		id = rec.Boundary.SessionID
	}
	if id == "" {
		return false, nil
	}
	if out, ok := decided[id]; ok {
		return out, nil
	}
	if in.opt == nil {
		o, err := loadOptOut(ctx, in.st)
		if err != nil {
			return false, err
		}
		in.opt = o
	}
	project := ""
	if rec.Session != nil && rec.Session.Project != "" {
		project = roots.of(rec.Session.Project)
	} else if sess, err := in.st.Session(ctx, id); err == nil {
		project = sess.Project
	} else if !errors.Is(err, ErrNotFound) {
		return false, err
	}
	if project == "" {
		return false, nil // not known yet: a later record may say
	}
	why := in.opt.why(project)
	decided[id] = why != ""
	if f, ok := strings.CutPrefix(why, "ignored by "); ok && !in.ignoredNoted[project] {
		// Noted in the ingest's transaction (flushIgnored), so that
		// pause --list and doctor can name a project the ledger holds
		// nothing of.
		if in.ignoredNoted == nil {
			in.ignoredNoted = map[string]bool{}
		}
		in.ignoredNoted[project] = true
		in.ignoredNew = append(in.ignoredNew, [2]string{project, f})
	}
	return decided[id], nil
}

// clock is the ingest's time, to the second as the engine stamps records:
// the engine's clock when it has one.
func (in *ingester) clock() time.Time {
	now := time.Now
	if in.now != nil {
		now = in.now
	}
	return now().UTC().Truncate(time.Second)
}

// flushIgnored records in w's transaction the projects optedOut found
// ignored since the last flush.
func (in *ingester) flushIgnored(ctx context.Context, w *store.Writer) error {
	for _, p := range in.ignoredNew {
		if err := w.NoteIgnored(ctx, p[0], p[1], in.clock()); err != nil {
			return err
		}
	}
	in.ignoredNew = in.ignoredNew[:0]
	return nil
}

// decideAhead decides the sessions of a batch of records whose project
// the batch states: a record that states none (a title line, a message
// emitted before the line naming the folder) must not be written before a
// later record of the batch shows the project is kept out.
func (in *ingester) decideAhead(ctx context.Context, recs []preparedRecord, roots *projectRoots, decided map[string]bool) error {
	for _, rec := range recs {
		if s := rec.Session; s != nil && s.ID != "" && s.Project != "" {
			if _, ok := decided[s.ID]; !ok {
				if _, err := in.optedOut(ctx, rec.Record, roots, decided); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// hookOptedOut says why the hook's project is kept out of the ledger, or
// "" when it is not: the folder the agent runs in (its checkout's top
// folder for .ledgerignore), else the stored session's project.
func (e *Engine) hookOptedOut(ctx context.Context, in HookInput) string {
	dir := in.Cwd
	var st *store.Store
	var err error
	if dir != "" && ignoreFileOf(dir) != "" {
		return "ignored by " + ignoreFileOf(dir)
	}
	if st, err = e.Store(ctx); err != nil {
		return ""
	}
	if dir == "" && in.SessionID != "" {
		if sess, err := st.Session(ctx, in.SessionID); err == nil {
			dir = sess.Project
		}
	}
	o, err := loadOptOut(ctx, st)
	if err != nil {
		return ""
	}
	return o.why(dir)
}

// OptedOut says why a project folder (or a folder in it) is kept out of
// the ledger, or "" when it is not.
func (e *Engine) OptedOut(ctx context.Context, dir string) (string, error) {
	st, err := e.Store(ctx)
	if err != nil {
		return "", err
	}
	o, err := loadOptOut(ctx, st)
	if err != nil {
		return "", err
	}
	return o.why(AbsPath(dir)), nil
}

// ProjectOf is the project a folder belongs to: the top folder of the git
// checkout holding it, else the folder itself (as ingest records a
// session's project).
func ProjectOf(dir string) string {
	dir = AbsPath(dir)
	if g, ok := gitrepo.Read(dir); ok && g.Root != "" {
		return g.Root
	}
	return dir
}

// Pause pauses recording for a project folder; paused is false when it was
// paused already.
func (e *Engine) Pause(ctx context.Context, project string) (paused bool, err error) {
	st, err := e.Store(ctx)
	if err != nil {
		return false, err
	}
	return st.PauseProject(ctx, project, e.stamp())
}

// ResumeRecording resumes recording for a paused project folder; resumed
// is false when it was not paused.
func (e *Engine) ResumeRecording(ctx context.Context, project string) (resumed bool, err error) {
	st, err := e.Store(ctx)
	if err != nil {
		return false, err
	}
	return st.ResumeProject(ctx, project)
}

// Excluded is a project kept out of the ledger, and why.
type Excluded struct {
	Project string `json:"project"`
	// How is "paused" or "ledgerignore".
	How string `json:"how"`
	// File is the .ledgerignore file (How "ledgerignore").
	File string `json:"file,omitempty"`
}

// ExcludedProjects lists the projects kept out of the ledger: the paused
// ones, and those with a .ledgerignore now: the projects ingest skipped
// for one, and those the ledger holds sessions of (they stay until
// `ledger forget --project`).
func (e *Engine) ExcludedProjects(ctx context.Context) ([]Excluded, error) {
	st, err := e.Store(ctx)
	if err != nil {
		return nil, err
	}
	ps, projects, err := st.PausedAndStored(ctx)
	if err != nil {
		return nil, err
	}
	out := []Excluded{}
	for _, p := range ps {
		out = append(out, Excluded{Project: p.Project, How: "paused"})
	}
	ignored, err := st.IgnoredProjects(ctx)
	if err != nil {
		return nil, err
	}
	for _, p := range ignored {
		projects = append(projects, p.Project)
	}
	slices.Sort(projects)
	for _, p := range slices.Compact(projects) {
		// The file as it is now: a project whose .ledgerignore is gone is
		// no longer kept out.
		if f := ignoreFileOf(p); f != "" {
			out = append(out, Excluded{Project: p, How: "ledgerignore", File: f})
		}
	}
	return out, nil
}

// ForgetProject forgets every session of a project folder (and the
// folders below it), as Forget does one.
func (e *Engine) ForgetProject(ctx context.Context, project string, dryRun, files bool) ([]Forgotten, error) {
	st, err := e.Store(ctx)
	if err != nil {
		return nil, err
	}
	sessions, err := st.Sessions(ctx, store.SessionFilter{Project: project})
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(sessions))
	for i, s := range sessions {
		ids[i] = s.ID
	}
	// One transaction, one index merge and one file rewrite for them all.
	fs, err := st.ForgetSessions(ctx, ids, dryRun)
	if err != nil {
		return nil, err
	}
	out := []Forgotten{}
	for _, f := range fs {
		out = append(out, forgetFiles(st, f, dryRun, files))
	}
	return out, nil
}

// excludedFromSearch are the projects a search leaves out: the paused
// folders (and those below them), and the stored projects that have a
// .ledgerignore of their own (one stat each; a stored project is the top
// of its checkout, where the file is); and the opt-out dropExcluded checks
// the hits against.
func excludedFromSearch(ctx context.Context, st *store.Store) (trees, projects []string, o *optOut, err error) {
	paused, all, err := st.PausedAndStored(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	o = newOptOut(st, paused)
	trees = slices.Clone(o.paused)
	for _, p := range all {
		if fi, err := os.Stat(filepath.Join(p, IgnoreFile)); err == nil && !fi.IsDir() {
			projects = append(projects, p)
		}
	}
	return trees, projects, o, nil
}

// dropExcluded leaves out the search hits of sessions whose project is
// kept out of the ledger (o): what was stored before a pause (or before a
// .ledgerignore appeared) is not searched, until forget removes it. Each
// hit carries its session's project, read with its snippet.
func dropExcluded(o *optOut, hits []store.Hit) []store.Hit {
	out := hits[:0]
	excluded := map[string]bool{}
	for _, h := range hits {
		ex, ok := excluded[h.Project]
		if !ok {
			ex = o.why(h.Project) != ""
			excluded[h.Project] = ex
		}
		if !ex {
			out = append(out, h)
		}
	}
	return out
}
