package engine

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentledger/ledger/store"
)

// Forgotten is what forgetting a session removed (or would remove).
type Forgotten struct {
	store.Forgotten
	// FilesRemoved are the handoff files deleted (with files set).
	FilesRemoved []string `json:"-"`
	// FileErrors are the handoff files that could not be deleted.
	FileErrors []error `json:"-"`
}

// Forget deletes a session and everything derived from it (with dryRun
// it only counts); with files it also deletes the handoff files ledger
// wrote for it.
func (e *Engine) Forget(ctx context.Context, sessionArg string, dryRun, files bool) (Forgotten, error) {
	st, sess, err := e.Session(ctx, sessionArg)
	if err != nil {
		return Forgotten{}, err
	}
	f, err := st.Forget(ctx, sess.ID, dryRun)
	if err != nil {
		return Forgotten{}, err
	}
	return forgetFiles(st, f, dryRun, files), nil
}

// forgetFiles adds to what the store forgot of a session the handoffs a
// PreCompact hook left pending (forgotten too unless dryRun), and with
// files removes the session's handoff files.
func forgetFiles(st *store.Store, f store.Forgotten, dryRun, files bool) Forgotten {
	for _, p := range pendingDrafts(st.Path(), f.SessionID) {
		f.HandoffFiles = append(f.HandoffFiles, p.Path)
		f.Handoffs++
	}
	if !dryRun {
		forgetPending(st.Path(), f.SessionID)
	}
	out := Forgotten{Forgotten: f}
	if !files || dryRun {
		return out
	}
	for _, p := range f.HandoffFiles {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			out.FileErrors = append(out.FileErrors, err)
			continue
		}
		out.FilesRemoved = append(out.FilesRemoved, p)
		pruneHandoffDirs(st.Path(), f.SessionID, p)
	}
	return out
}

// pruneHandoffDirs removes the folders ledger made for a forgotten
// session's handoff file, when they are left empty: their names are the
// session's id and its project's path. The file's folder goes when it is
// named after the session (<...>/<session>/<time>.md, in the ledger's
// handoffs folder or the project's .ledger/handoffs); the project's folder
// above it when it is in the ledger's own handoffs folder. A folder that
// still holds anything (another session's handoffs) stays, and so does a
// folder the user chose (compact --out).
func pruneHandoffDirs(dbPath, session, file string) {
	dir := filepath.Dir(file)
	if filepath.Base(dir) != session || os.Remove(dir) != nil {
		return
	}
	if project := filepath.Dir(dir); filepath.Dir(project) == filepath.Join(filepath.Dir(dbPath), "handoffs") {
		os.Remove(project)
	}
}
