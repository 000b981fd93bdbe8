package engine

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/agentledger/ledger/cmd/internal/agentconfig"
	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/transcript"
)

// CheckupOptions say where the agents keep their files and which binary
// hooks should run.
type CheckupOptions struct {
	ClaudeDir string // ~/.claude ($CLAUDE_CONFIG_DIR)
	CodexHome string // ~/.codex ($CODEX_HOME)
	Exe       string // this ledger binary, symlinks resolved
	// Home and Getenv find the other agents' settings and sessions (their
	// own variables move them); nil Getenv skips them.
	Home   string
	Getenv func(string) string
}

// Checkup is what `ledger doctor` reports beyond the database's health:
// is ledger set up, and is it keeping up.
type Checkup struct {
	Hooks       []HookSetup         `json:"hooks"`
	Receipts    []store.HookReceipt `json:"last_hook_receipts"`
	Transcripts []TranscriptFolder  `json:"transcripts"`
	Excluded    []Excluded          `json:"excluded_projects"`
	FTSSegments map[string]int64    `json:"fts_segments"`
	Problems    []string            `json:"problems"`
	// NoLedger is the ledger's path when there is none there yet: the
	// set-up is checked all the same.
	NoLedger string `json:"no_ledger,omitempty"`
}

// HookSetup is one agent's hooks file and the ledger hooks in it.
type HookSetup struct {
	Agent string `json:"agent"` // an agent's source: "claude", "codex", "gemini", ...
	File  string `json:"file"`
	// Events are the events with a ledger hook, and Missing those ledger
	// hooks (Claude Code) that have none.
	Events  []string `json:"events"`
	Missing []string `json:"missing,omitempty"`
	// Elsewhere are the hook programs that are not this binary.
	Elsewhere []string `json:"elsewhere,omitempty"`
}

// TranscriptFolder is an agent's transcripts folder and how far the ledger
// is behind it.
type TranscriptFolder struct {
	Agent  string `json:"agent"`
	Path   string `json:"path"`
	Found  bool   `json:"found"`
	Files  int    `json:"files"`
	Behind int    `json:"files_behind"` // files with lines not yet ingested
	Bytes  int64  `json:"bytes_behind"`
	// Oldest is the modification time of the oldest file behind.
	Oldest *time.Time `json:"oldest_behind,omitempty"`
}

// Checkup checks ledger's set-up: the agents' hooks (installed, and
// running this binary), the last receipt of each hook event, the
// transcripts folders and how much of them is not ingested, the projects
// kept out, and the full-text indexes' segments.
func (e *Engine) Checkup(ctx context.Context, o CheckupOptions) (Checkup, error) {
	c := Checkup{Problems: []string{}, Receipts: []store.HookReceipt{}, Excluded: []Excluded{}}
	st, err := e.Store(ctx)
	var none *store.NoLedgerError
	switch {
	case errors.As(err, &none):
		// A new user's set-up, before the first ingest: everything but
		// what the ledger holds can be checked, and nothing is created.
		c.NoLedger = none.Path
	case err != nil:
		return c, err
	}
	claudeEvents := []string{}
	for _, ev := range HookEvents() {
		claudeEvents = append(claudeEvents, ev.Name)
	}
	for _, h := range []struct{ agent, file string }{
		{"claude", filepath.Join(o.ClaudeDir, "settings.json")},
		{"codex", filepath.Join(o.CodexHome, "hooks.json")},
	} {
		hs, err := hookSetup(h.agent, h.file, o.Exe)
		if err != nil {
			c.Problems = append(c.Problems, err.Error())
			continue
		}
		if h.agent == "claude" {
			for _, ev := range claudeEvents {
				if !contains(hs.Events, ev) {
					hs.Missing = append(hs.Missing, ev)
				}
			}
			if len(hs.Events) == 0 {
				c.Problems = append(c.Problems, "Claude Code has no ledger hooks in "+h.file+" (ledger hooks install)")
			} else if len(hs.Missing) > 0 {
				c.Problems = append(c.Problems, "Claude Code lacks ledger hooks for some events (ledger hooks install)")
			}
		}
		if len(hs.Elsewhere) > 0 {
			c.Problems = append(c.Problems, h.agent+" hooks run another ledger binary than "+o.Exe+" (ledger hooks install)")
		}
		c.Hooks = append(c.Hooks, hs)
	}
	c.Hooks = append(c.Hooks, agentHookSetups(o, &c)...)
	c.Hooks = append(c.Hooks, pluginSetups(o, &c)...)
	cursors := map[string]store.Cursor{}
	if st != nil {
		if c.Receipts, err = st.LastHookReceipts(ctx); err != nil {
			return c, err
		}
		if cursors, err = st.Cursors(ctx); err != nil {
			return c, err
		}
	}
	for _, t := range []struct{ agent, dir string }{
		{"claude", filepath.Join(o.ClaudeDir, "projects")},
		{"codex", filepath.Join(o.CodexHome, "sessions")},
	} {
		tf, err := transcriptFolder(ctx, t.agent, t.dir, cursors)
		if err != nil {
			return c, err
		}
		c.Transcripts = append(c.Transcripts, tf)
	}
	more, err := agentTranscriptFolders(ctx, o, cursors)
	if err != nil {
		return c, err
	}
	c.Transcripts = append(c.Transcripts, more...)
	c.Transcripts = append(c.Transcripts, pluginTranscripts(ctx, o, cursors)...)
	if st == nil {
		return c, nil
	}
	if c.Excluded, err = e.ExcludedProjects(ctx); err != nil {
		return c, err
	}
	if c.FTSSegments, err = st.FTSSegments(ctx); err != nil {
		// Not a reason to hide the rest of the report.
		c.Problems = append(c.Problems, err.Error())
	}
	return c, nil
}

// hookSetup reads an agent's hooks file for ledger's hooks.
func hookSetup(agent, file, exe string) (HookSetup, error) {
	hs := HookSetup{Agent: agent, File: file, Events: []string{}}
	b, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return hs, err
	}
	read := agentconfig.LedgerHookCommands
	if agent == "copilot" {
		read = agentconfig.LedgerCopilotHookCommands
	}
	cmds, err := read(b)
	if err != nil {
		return hs, errors.New(file + ": " + err.Error())
	}
	seen := map[string]bool{}
	for ev, cs := range cmds {
		hs.Events = append(hs.Events, ev)
		for _, cmd := range cs {
			prog := agentconfig.HookProgram(cmd)
			if !sameFile(prog, exe) && !seen[prog] {
				seen[prog] = true
				hs.Elsewhere = append(hs.Elsewhere, prog)
			}
		}
	}
	sort.Strings(hs.Events)
	sort.Strings(hs.Elsewhere)
	return hs, nil
}

// sameFile tells whether a hook's program is the binary exe: the same
// file, symlinks resolved. A bare "ledger" is whatever PATH finds then, so
// it is not.
func sameFile(prog, exe string) bool {
	if prog == "" || exe == "" || !filepath.IsAbs(prog) {
		return false
	}
	a, err1 := os.Stat(prog)
	b, err2 := os.Stat(exe)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// transcriptFolder counts an agent's transcripts and what of them the
// ledger has not read, by the ingest cursors.
func transcriptFolder(ctx context.Context, agent, dir string, cursors map[string]store.Cursor) (TranscriptFolder, error) {
	tf := TranscriptFolder{Agent: agent, Path: dir}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return tf, nil
	}
	tf.Found = true
	err := transcript.Walk(ctx, []string{dir}, func(path string) error {
		fi, err := os.Stat(path)
		if err != nil {
			return nil
		}
		tf.Files++
		c, seen := cursors[AbsPath(path)]
		var behind int64
		switch {
		case seen && c.Size == fi.Size() && c.ModTime == fi.ModTime().UnixNano():
		case seen && c.Offset <= fi.Size():
			behind = fi.Size() - c.Offset
		default:
			behind = fi.Size()
		}
		if behind > 0 {
			tf.Behind++
			tf.Bytes += behind
			if mt := fi.ModTime().UTC(); tf.Oldest == nil || mt.Before(*tf.Oldest) {
				tf.Oldest = &mt
			}
		}
		return nil
	})
	return tf, err
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
