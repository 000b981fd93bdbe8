package engine

import (
	"context"
	"time"

	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/handoff/gitrepo"
	"github.com/agentledger/ledger/store"
)

// A team of agents shares one task list across sessions: the lead creates
// the items, teammates take and close them, and each session's transcript
// names an item another session created only by its id. When a handoff
// holds such bare ids, what the sessions of the same project that were
// active at the same time hold of the list (their stored resume state, or
// their latest handoff: no transcript is read again) gives the items'
// subjects and closes what was closed there.

const (
	// maxTeamSessions caps the sessions looked at for a team's task list.
	maxTeamSessions = 8
	// teamSlack is how far apart two sessions may start and end and still
	// count as working at the same time.
	teamSlack = 10 * time.Minute
)

// teamTasks completes d's task-tool items known only by their id (see
// handoff.ResolveTasks). Anything amiss, and d is returned as it is.
func teamTasks(ctx context.Context, st *store.Store, sess store.Session, d handoff.Doc) handoff.Doc {
	if !handoff.MissingSubjects(d) || sess.Project == "" {
		return d
	}
	f := store.SessionFilter{Project: sess.Project, Exclude: sess.ID, Limit: maxTeamSessions}
	if g, ok := gitrepo.Read(sess.Project); ok {
		f.Project, f.Projects = g.Root, gitrepo.Worktrees(g.CommonDir)
	}
	started, last := sess.StartedAt, sess.LastAt
	if !started.IsZero() {
		f.Since = started.Add(-teamSlack) // still active when this one began
	}
	list, err := st.Sessions(ctx, f)
	if err != nil {
		return d
	}
	var known []handoff.Task
	for _, o := range list {
		if !last.IsZero() && o.StartedAt.After(last.Add(teamSlack)) {
			continue // began after this one ended
		}
		if rs, err := st.LoadResumeState(ctx, o.ID); err == nil {
			known = append(known, rs.Doc.Tasks...)
			continue
		}
		if h, err := st.LatestHandoff(ctx, o.ID); err == nil {
			if doc, err := h.Doc(); err == nil {
				known = append(known, doc.Tasks...)
			}
		}
	}
	return handoff.ResolveTasks(d, known)
}
