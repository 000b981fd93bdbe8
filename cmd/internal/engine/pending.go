package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/store"
)

// A PreCompact hook that cannot write to the ledger in its budget (another
// process holds the write lock) still writes the handoff: its Markdown
// file now, in its usual place, and its row later. The row waits as a
// draft in the pending folder beside the database, written atomically
// before the file; the next hook or ingest that can write stores it
// (flushPending), and resume reads it meanwhile. forget removes a
// session's.

// pendingDir is the pending folder of the ledger at dbPath.
func pendingDir(dbPath string) string { return filepath.Join(filepath.Dir(dbPath), "pending") }

// pendingName is a draft's file name: the session first (forget finds
// it; IDName spells it, with no dot, so that one session's prefix is never
// another's), then the time, so that names sort oldest first, then what
// keeps two drafts of the same second apart.
func pendingName(d handoffDraft) string {
	return fmt.Sprintf("%s.%s.%d.%d.json", IDName(d.SessionID), d.Record.At.UTC().Format("20060102T150405Z"), time.Now().UnixNano(), os.Getpid())
}

// deferHandoff keeps the draft in the pending folder, then writes its
// Markdown file (setting d.Path to where it went: a name ledger chose is
// never a file's already), both owner-only and atomically. The draft goes
// first: a hook run cut off between the two (its budget spent on a busy
// machine, the process ended at its deadline) leaves what flushPending
// needs to write the file itself, rather than a file with no row ever.
func deferHandoff(st *store.Store, d *handoffDraft) (string, error) {
	p := filepath.Join(pendingDir(st.Path()), pendingName(*d))
	keep := func() error {
		b, err := json.Marshal(d)
		if err == nil {
			err = writeFile(st, p, b)
		}
		if err != nil {
			return fmt.Errorf("keep pending handoff: %w", err)
		}
		return nil
	}
	if err := keep(); err != nil {
		return "", err
	}
	if !d.Named {
		if err := writeFile(st, d.Path, []byte(d.Doc.Markdown)); err != nil {
			return "", fmt.Errorf("write handoff file: %w", err)
		}
		return p, nil
	}
	md, err := writeNewFile(st, d.Path, []byte(d.Doc.Markdown))
	if err != nil {
		return "", fmt.Errorf("write handoff file: %w", err)
	}
	if md != d.Path { // the name was taken: the draft says where the file went
		d.Path = md
		return p, keep()
	}
	return p, nil
}

// fileMissing tells whether the draft's Markdown file is still to be
// written: the run that deferred it ended before it (deferHandoff). A file
// at a name ledger chose that is not the draft's is another handoff's (the
// draft's goes to a free name beside it); one at a name given (--out) is
// left as it is.
func fileMissing(st *store.Store, d handoffDraft) bool {
	b, err := os.ReadFile(d.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	return err == nil && d.Named && !bytes.Equal(b, st.RedactFile([]byte(d.Doc.Markdown)))
}

// pendingDrafts lists the drafts of the ledger at dbPath, oldest first;
// of one session when session is not "". A draft that does not decode is
// left where it is (and listed nowhere).
func pendingDrafts(dbPath, session string) []pendingDraft {
	entries, err := os.ReadDir(pendingDir(dbPath))
	if err != nil {
		return nil
	}
	var out []pendingDraft
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasSuffix(name, ".json") || session != "" && !strings.HasPrefix(name, IDName(session)+".") {
			continue
		}
		p := filepath.Join(pendingDir(dbPath), name)
		b, err := os.ReadFile(p)
		var d handoffDraft
		if err != nil || json.Unmarshal(b, &d) != nil || d.SessionID == "" {
			continue
		}
		out = append(out, pendingDraft{file: p, handoffDraft: d})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].file < out[j].file })
	return out
}

// pendingDraft is a draft and the file that keeps it.
type pendingDraft struct {
	handoffDraft
	file string
}

// flushPending stores the pending handoffs whose session the ledger has,
// oldest first, and reports how many it stored, writing the Markdown file
// of a draft whose run ended before it (deferHandoff). One PreCompact can have
// fired several times: a draft of a compaction recorded already (the
// record's debounce) is dropped, and its Markdown file removed when it is
// not the stored handoff's. It stops at the first error (the write lock
// still held: the rest waits for the next try).
func (e *Engine) flushPending(ctx context.Context, st *store.Store) (int, error) {
	n := 0
	for _, p := range pendingDrafts(st.Path(), "") {
		if _, err := st.Session(ctx, p.SessionID); notFound(err) {
			continue // its transcript has not been ingested yet
		} else if err != nil {
			return n, err
		}
		missing := fileMissing(st, p.handoffDraft)
		h, err := storeHandoff(ctx, st, p.handoffDraft, missing)
		if err != nil {
			return n, err
		}
		if !h.Written {
			if stored, err := st.Handoff(ctx, h.ID); err == nil && stored.Path != p.Path && !missing {
				os.Remove(p.Path)
			}
		} else {
			n++
		}
		if err := os.Remove(p.file); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return n, err
		}
	}
	return n, nil
}

// latestPending is the session's newest pending handoff, if any.
func latestPending(dbPath, session string) (handoff.Doc, bool) {
	ds := pendingDrafts(dbPath, session)
	if len(ds) == 0 {
		return handoff.Doc{}, false
	}
	return ds[len(ds)-1].Doc, true
}

// forgetPending removes a session's pending handoffs (their Markdown files
// are the handoff files forget lists).
func forgetPending(dbPath, session string) []string {
	var files []string
	for _, p := range pendingDrafts(dbPath, session) {
		if os.Remove(p.file) == nil {
			files = append(files, p.Path)
		}
	}
	return files
}
