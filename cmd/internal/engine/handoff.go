package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/renameio/v2"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/handoff/gitrepo"
	"github.com/agentledger/ledger/store"
)

// preCompactDebounce is how close two PreCompact events of a session with
// no message yet must be to count as one compaction. Any other compaction
// is told by its point of the transcript (store.CompactionRecord).
const preCompactDebounce = time.Minute

// HandoffRequest says what handoff to write.
type HandoffRequest struct {
	Task    string
	Trigger string // "manual" or "auto"
	Budget  int    // of the Markdown, in tokens
	Out     string // the Markdown file; "" for the default place
	// InProject puts the Markdown file, when Out is "", in the project's
	// .ledger/handoffs folder rather than the database's folder.
	InProject bool
	Source    string // of the compaction record: "cli" or "hook"
	// Note is the user's instruction for this compaction (PreCompact's
	// custom_instructions): what they want kept, so it leads the next steps.
	Note string
	// Once makes the handoff one per compaction (the PreCompact hook): when
	// the session already has a record of the same source at the same point
	// of the transcript, nothing is written.
	Once bool
	// Attach makes the handoff that of the session's compaction read from
	// its transcript moments before, if there is one (OpenCode and Kilo
	// store a compaction before their pre-compaction event fires; see
	// store.CompactionRecord.Attach).
	Attach bool
	// Compacted is for agents that compact no branch ending with a
	// compaction (Pi): a handoff asked for at a point of the transcript
	// that a compaction follows already is that compaction's (see
	// store.CompactionRecord.Boundary).
	Compacted bool
}

// Handoff is a handoff the engine wrote (or found already written).
type Handoff struct {
	handoff.Doc
	// Path is the Markdown file.
	Path string
	// Written is false when a record of the same compaction was there
	// already (HandoffRequest.Once): then only Doc.ID is that handoff's.
	Written bool
	// Excluded is the pattern added to ExcludeFile (.git/info/exclude) to
	// keep a file the user asked for in a checkout out of git status; ""
	// when none was added (it was there already, or not needed).
	Excluded, ExcludeFile string
}

// Compact is `ledger compact`: it ingests what is new in the session's
// transcripts, then writes a handoff and its compaction record.
func (e *Engine) Compact(ctx context.Context, sessionID string, req HandoffRequest) (Handoff, error) {
	if err := e.IngestSession(ctx, sessionID); err != nil {
		return Handoff{}, err
	}
	return e.WriteHandoff(ctx, sessionID, req)
}

// WriteHandoff extracts a handoff from the session's messages, fits its
// Markdown to the budget, and stores it with a compaction record, its
// Markdown file written atomically inside the same transaction.
func (e *Engine) WriteHandoff(ctx context.Context, sessionID string, req HandoffRequest) (Handoff, error) {
	st, sess, err := e.Session(ctx, sessionID)
	if err != nil {
		return Handoff{}, err
	}
	msgs, err := st.Messages(ctx, sess.ID, 0)
	if err != nil {
		return Handoff{}, err
	}
	d, err := e.draftHandoff(ctx, st, sess, msgs, req)
	if err != nil {
		return Handoff{}, err
	}
	h, err := storeHandoff(ctx, st, d, true)
	if err != nil || (req.Out == "" && !req.InProject) {
		return h, err
	}
	h.Excluded, h.ExcludeFile, err = excludeFromGit(h.Path)
	return h, err
}

// handoffDraft is a handoff made and not yet stored: its document
// (rendered from redacted sections), its Markdown file's path and its
// compaction record. A PreCompact hook that cannot write to the ledger
// keeps it in the pending folder (pending.go).
type handoffDraft struct {
	SessionID string                 `json:"session_id"`
	Doc       handoff.Doc            `json:"doc"`
	Path      string                 `json:"path"`
	Record    store.CompactionRecord `json:"record"`
	// Named is set when ledger named Path (not --out): the file then
	// goes to a free name beside it, never over a file (writeNewFile).
	// A pending draft keeps it: its file may be written by the flush.
	Named bool `json:"named,omitempty"`
}

// draftHandoff extracts the session's handoff from msgs, as of now.
func (e *Engine) draftHandoff(ctx context.Context, st *store.Store, sess store.Session, msgs []compact.Message, req HandoffRequest) (handoffDraft, error) {
	now := e.stamp()
	m := meterOf(SessionView{ID: sess.ID, Model: sess.Model, ContextWindow: sess.ContextWindow, Messages: msgs,
		Usage: codexUsage(sess)}, nil)
	notes, err := st.HandoffNotes(ctx, sess.ID)
	if err != nil {
		return handoffDraft{}, err
	}
	doc := handoff.Extract(msgs, handoff.ExtractOptions{Task: req.Task, SessionID: sess.ID, Project: sess.Project,
		Branch: sess.GitBranch, Trigger: req.Trigger, CreatedAt: now, ContextUsed: m.UsedTokens,
		ContextLimit: m.LimitTokens, Compactions: int(sess.Compactions), Notes: notes,
		WorkTree: e.workTree(ctx, sess)})
	doc = teamTasks(ctx, st, sess, doc)
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
	doc = st.RedactHandoff(doc).Rendered(req.Budget, compact.DefaultMemo())
	point, err := st.TranscriptPoint(ctx, sess.ID, lastMainUUID(msgs))
	if err != nil {
		return handoffDraft{}, err
	}
	d := handoffDraft{SessionID: sess.ID, Doc: doc, Path: req.Out,
		Record: store.CompactionRecord{Source: req.Source, Trigger: req.Trigger, At: now, PreTokens: m.UsedTokens,
			LogicalParent: point}}
	if d.Path == "" {
		d.Named = true
		d.Path = defaultHandoffPath(st.Path(), sess.Project, sess.ID, now)
		if fi, err := os.Stat(sess.Project); req.InProject && sess.Project != "" && err == nil && fi.IsDir() {
			d.Path = InProjectHandoffPath(sess.Project, sess.ID, filepath.Base(d.Path))
		}
	}
	if req.Attach {
		d.Record.Attach = preCompactDebounce
	}
	if req.Compacted && point != "" && point != lastMainUUID(msgs) {
		d.Record.Boundary = point
	}
	if req.Once {
		d.Record.Debounce = preCompactDebounce
	}
	return d, nil
}

// storeHandoff stores a drafted handoff and its compaction record in one
// transaction. With writeMD its Markdown file is written inside it (the
// file exists exactly when its row does); without, the file is there
// already (a pending handoff's, mostly: see flushPending).
func storeHandoff(ctx context.Context, st *store.Store, d handoffDraft, writeMD bool) (Handoff, error) {
	h := Handoff{Doc: d.Doc, Path: d.Path}
	rec := d.Record
	written := "" // the file written, once: the transaction may be retried
	var err error
	h.ID, h.Written, err = st.AddHandoff(ctx, store.NewHandoff{Doc: d.Doc, Path: d.Path, Record: &rec,
		BeforeCommit: func() (string, error) {
			if !writeMD {
				return d.Path, nil
			}
			if written != "" {
				return written, nil
			}
			p, err := d.Path, error(nil)
			if d.Named {
				p, err = writeNewFile(st, d.Path, []byte(d.Doc.Markdown))
			} else {
				err = writeFile(st, d.Path, []byte(d.Doc.Markdown))
			}
			if err != nil {
				return "", fmt.Errorf("write handoff file: %w", err)
			}
			written = p
			return p, nil
		}})
	if err != nil {
		if written != "" {
			os.Remove(written)
		}
		return Handoff{}, err
	}
	if written != "" {
		h.Path = written
	}
	return h, nil
}

// workTreeTimeout bounds the git commands a handoff runs: a hook has a
// deadline, and the transcript tells nearly as much.
const workTreeTimeout = 2 * time.Second

// workTree reads the live state of the session's project, when the
// project is a git checkout on this machine and the session is its latest
// (an older session's changes are mixed with newer ones in the checkout):
// what git reports uncommitted, and the files of the commits made since the
// session started. Anything amiss, and the transcript alone speaks.
func (e *Engine) workTree(ctx context.Context, sess store.Session) *handoff.WorkTree {
	g, ok := gitrepo.Read(sess.Project)
	if !ok || g.Root != sess.Project {
		return nil
	}
	if latest, err := e.LatestProjectSession(ctx, sess.Project, ""); err != nil || latest.ID != sess.ID {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, workTreeTimeout)
	defer cancel()
	changes, err := gitrepo.Status(ctx, g.Root)
	if err != nil {
		return nil
	}
	wt := &handoff.WorkTree{Branch: g.Branch, Head: g.Head}
	for _, c := range changes {
		wt.Changed = append(wt.Changed, handoff.FileChange{Path: c.Path, From: c.From, Status: c.Status})
	}
	if started := sess.StartedAt; !started.IsZero() {
		if wt.Committed, err = gitrepo.CommittedSince(ctx, g.Root, started); err != nil {
			return nil
		}
	}
	return wt
}

// lastMainUUID is the uuid of the last message of the main conversation
// (not a subagent's): the compact_boundary that follows names it.
func lastMainUUID(msgs []compact.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if !msgs[i].Sidechain {
			return msgs[i].UUID
		}
	}
	return ""
}

// defaultHandoffPath is handoffs/<project>/<session>/<time>.md in the
// database's folder: out of the project's working tree, where `git status`
// would show it and `git add -A` commit it. <project> is the project's path
// spelt as one folder name (ProjectDirName), <session> the session's id
// as IDName spells it.
func defaultHandoffPath(dbPath, project, session string, at time.Time) string {
	name := at.UTC().Format("20060102T150405Z") + ".md"
	return filepath.Join(HandoffsDir(dbPath, project), IDName(session), name)
}

// writeNewFile writes data to a new file at path or, when a file has that
// name, at path with -2, -3... before its extension (handoffs of one
// session in the same second share a name): never over a file. The file
// appears whole, owner-only and durably: a temporary file in the same
// folder, synced, linked to the name (which fails when the name is taken),
// the folder synced. A file system without hard links gets the name
// created exclusively instead, then written. It returns the path written.
// data is redacted with the store's rules first, as writeFile's.
func writeNewFile(st *store.Store, path string, data []byte) (string, error) {
	data = st.RedactFile(data)
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, ".handoff-*.tmp")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	ext := filepath.Ext(path)
	for n := 1; n <= 1000; n++ {
		p := path
		if n > 1 {
			p = fmt.Sprintf("%s-%d%s", strings.TrimSuffix(path, ext), n, ext)
		}
		err := os.Link(tmp.Name(), p)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			err = createNew(p, data)
		}
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		d, err := os.Open(dir)
		if err != nil {
			return p, err
		}
		defer d.Close()
		return p, d.Sync()
	}
	return "", fmt.Errorf("%s: a thousand files of that name already", path)
}

// createNew writes data to a file it creates at path, failing (with
// fs.ErrExist) when one is there.
func createNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

// writeFile replaces path with data, its secrets redacted by the store's
// rules (store.RedactFile: every file ledger writes from recorded text
// comes through here or writeNewFile), owner-only, atomically and durably:
// a temporary file in the same folder, synced, renamed over path, and the
// folder synced so that the rename itself survives a crash.
func writeFile(st *store.Store, path string, data []byte) error {
	data = st.RedactFile(data)
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := renameio.WriteFile(path, data, 0o600); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
