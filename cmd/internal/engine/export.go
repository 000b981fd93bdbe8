package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/transcript"
)

// ExportRequest says what `ledger export` writes.
type ExportRequest struct {
	Session string // an id or unique prefix
	// Format is "jsonl" (the agent's own transcript format) or "md".
	Format string
	// Out is the file to write; "" with Restore unset: w.
	Out string
	// Restore writes the JSONL where the agent looks for the session's
	// transcript (RestorePath), refusing to replace a file there.
	Restore bool
	// ClaudeDir and CodexHome are the agents' folders (~/.claude and
	// ~/.codex unless set otherwise).
	ClaudeDir, CodexHome string
}

// Exported is what Export wrote.
type Exported struct {
	Session  store.Session
	Path     string // "" when written to the caller's writer
	Messages int
}

// Export writes a session's transcript, rebuilt from the ledger
// (transcript.WriteClaude, WriteCodex, WriteMarkdown), to w, req.Out or,
// with req.Restore, where the agent expects it. A restored file is
// recorded as read in full, so that ingest does not read it back (a
// Codex session's messages would come back with new uuids).
func (e *Engine) Export(ctx context.Context, req ExportRequest, w io.Writer) (Exported, error) {
	st, sess, err := e.Session(ctx, req.Session)
	if err != nil {
		return Exported{}, err
	}
	if req.Restore && sess.Source != string(transcript.FormatClaude) && sess.Source != string(transcript.FormatCodex) {
		// Its JSONL would be Claude Code's: restored, it would be a Claude
		// Code session, not the agent's own.
		return Exported{Session: sess}, fmt.Errorf("restore %s: ledger writes back Claude Code and Codex sessions only, not %s's (--out writes it as Claude Code's JSONL)",
			sess.ID, AgentName(sess.Source))
	}
	msgs, err := st.Messages(ctx, sess.ID, 0)
	if err != nil {
		return Exported{}, err
	}
	comps, err := st.Compactions(ctx, store.CompactionFilter{SessionID: sess.ID})
	if err != nil {
		return Exported{}, err
	}
	var bounds []compact.Boundary
	for _, c := range comps {
		if c.BoundaryUUID == "" {
			continue // a hook's or cli record: not a line of the transcript
		}
		b := compact.NewBoundary(sess.ID, c.BoundaryUUID, c.Trigger, c.At, orZero(c.PreTokens), orZero(c.PostTokens))
		b.LogicalParentUUID, b.Summary = c.LogicalParentUUID, c.Summary
		bounds = append(bounds, b)
	}
	facts := transcript.SessionFacts{ID: sess.ID, Project: sess.Project, GitBranch: sess.GitBranch, Title: sess.Title,
		Model: sess.Model, Started: sess.StartedAt}
	var buf bytes.Buffer
	switch {
	case req.Format == "md":
		err = transcript.WriteMarkdown(&buf, facts, msgs, bounds)
	case sess.Source == string(transcript.FormatCodex):
		err = transcript.WriteCodex(&buf, facts, msgs, bounds)
	default:
		err = transcript.WriteClaude(&buf, facts, msgs, bounds)
	}
	if err != nil {
		return Exported{}, fmt.Errorf("export %s: %w", sess.ID, err)
	}
	out := Exported{Session: sess, Path: req.Out, Messages: len(msgs)}
	if req.Restore {
		out.Path = RestorePath(sess, req.ClaudeDir, req.CodexHome)
		if _, err := os.Stat(out.Path); err == nil {
			return out, fmt.Errorf("restore %s: %s is there already (use --out to write elsewhere)", sess.ID, out.Path)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return out, fmt.Errorf("restore %s: %w", sess.ID, err)
		}
	}
	if out.Path == "" {
		_, err := w.Write(buf.Bytes())
		return out, err
	}
	if err := writeFile(st, out.Path, buf.Bytes()); err != nil {
		return out, fmt.Errorf("export %s: %w", sess.ID, err)
	}
	if req.Restore {
		if err := markRead(ctx, st, out.Path); err != nil {
			return out, fmt.Errorf("restore %s: %w", sess.ID, err)
		}
	}
	return out, nil
}

// RestorePath is where the agent looks for a session's transcript: Claude
// Code's <claudeDir>/projects/<project>/<session>.jsonl (the project's path
// with every character but a letter or digit as "-"), Codex's
// <codexHome>/sessions/YYYY/MM/DD/rollout-<start>-<session>.jsonl; the
// session's id as IDName spells it (a real agent's id is its own name).
func RestorePath(sess store.Session, claudeDir, codexHome string) string {
	if sess.Source == string(transcript.FormatCodex) {
		t := sess.StartedAt.Local()
		if t.IsZero() {
			t = time.Now()
		}
		return filepath.Join(codexHome, "sessions", t.Format("2006"), t.Format("01"), t.Format("02"),
			"rollout-"+t.Format("2006-01-02T15-04-05")+"-"+IDName(sess.ID)+".jsonl")
	}
	return filepath.Join(claudeDir, "projects", ProjectDirName(sess.Project), IDName(sess.ID)+".jsonl")
}

// markRead records a transcript file as read to its end, writing none of
// its records: the ledger holds them already.
func markRead(ctx context.Context, st *store.Store, path string) error {
	f, err := transcript.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	format, err := transcript.DetectContext(ctx, f)
	if err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	state := transcript.State{Format: format}
	if format == transcript.FormatClaude {
		state.SessionID = transcript.SessionHint(path)
	}
	res, err := transcript.Read(ctx, f, &state, 0, 1, func(transcript.Record) error { return nil })
	if err != nil {
		return err
	}
	c, err := newCursor(f, fi, path, state, res)
	if err != nil {
		return err
	}
	w, err := st.NewWriter(ctx, string(format))
	if err != nil {
		return err
	}
	defer w.Rollback()
	return w.Commit(ctx, c)
}
