package mcpserver

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/store"
)

// session resolves the session a call is about (the one named: an id or a
// unique prefix; else the latest session of project, else of the server's
// project) and ingests what is new in its transcripts, so that the answer
// is current. It returns the session as it is after that ingest, and a
// warning line when the ingest failed (the answer then comes from the
// ledger as it was).
func (s *Server) session(ctx context.Context, arg, project string) (store.Session, string, error) {
	sess, err := s.resolve(ctx, arg, project)
	if err != nil {
		return store.Session{}, "", err
	}
	warn := s.ingest(ctx, sess.ID)
	if _, again, err := s.eng.Session(ctx, sess.ID); err == nil {
		sess = again
	}
	return sess, warn, nil
}

// resolve finds the session a call names, or the latest of the project.
func (s *Server) resolve(ctx context.Context, arg, project string) (store.Session, error) {
	arg = strings.TrimSpace(arg)
	if arg != "" {
		_, sess, err := s.eng.Session(ctx, arg)
		if errors.Is(err, engine.ErrNotFound) {
			return sess, errNoSession{arg}
		}
		return sess, err
	}
	dir := s.projectOf(project)
	if dir == "" {
		return store.Session{}, usageErrorf("no session given and no project known: pass session (see the sessions tool) or project (a folder)")
	}
	sess, err := s.eng.LatestProjectSession(ctx, dir, "")
	if errors.Is(err, engine.ErrNotFound) {
		return sess, errNoProjectSession{dir}
	}
	return sess, err
}

// projectOf is the project a call is about: its argument, else the
// server's.
func (s *Server) projectOf(arg string) string {
	if arg = strings.TrimSpace(arg); arg != "" {
		return arg
	}
	return s.project
}

// freshen ingests what is new in the transcripts of the latest session of
// a project (the argument, else the server's), for the tools whose answer
// spans sessions: the one the agent is most likely in is then current. A
// project with no session in the ledger is no error here.
func (s *Server) freshen(ctx context.Context, project string) string {
	dir := s.projectOf(project)
	if dir == "" {
		return ""
	}
	sess, err := s.eng.LatestProjectSession(ctx, dir, "")
	if err != nil {
		if !errors.Is(err, engine.ErrNotFound) {
			s.log.Warn("find the project's latest session", "project", handoff.Shorten(dir, maxLogged), "err", err)
		}
		return ""
	}
	return s.ingest(ctx, sess.ID)
}

// ingest reads what is new in a session's transcripts into the ledger: the
// one write besides notes. A failure (a transcript gone unreadable, a
// database busy past its retries) is logged and becomes a warning line:
// the tool still answers from what the ledger holds.
func (s *Server) ingest(ctx context.Context, sessionID string) string {
	if st, err := s.eng.Store(ctx); err == nil && st.ReadOnly() {
		return "(the ledger is read-only for this server: what is new in the transcripts since it was last written is not in this answer)\n"
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := s.eng.IngestSession(ctx, sessionID); err != nil {
		s.log.Warn("ingest before answering", "session", sessionID, "err", err)
		return "(ledger could not read what is new in this session's transcript just now; this answer is from the ledger as it was)\n"
	}
	return ""
}
