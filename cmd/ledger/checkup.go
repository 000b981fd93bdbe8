package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentledger/ledger/cmd/internal/engine"
)

// checkupOptions are where the agents keep their files, by the
// environment, and this binary.
func checkupOptions(app *App) engine.CheckupOptions {
	home, _ := app.home()
	o := engine.CheckupOptions{ClaudeDir: app.Getenv("CLAUDE_CONFIG_DIR"), CodexHome: app.Getenv("CODEX_HOME"), Home: home, Getenv: app.Getenv}
	if o.ClaudeDir == "" {
		o.ClaudeDir = filepath.Join(home, ".claude")
	}
	if o.CodexHome == "" {
		o.CodexHome = filepath.Join(home, ".codex")
	}
	if exe, err := app.executable(); err == nil {
		if p, err := filepath.EvalSymlinks(exe); err == nil {
			exe = p
		}
		o.Exe = exe
	}
	return o
}

// printCheckup renders doctor's set-up checks.
func printCheckup(app *App, c engine.Checkup) {
	w := app.Stdout
	var segs []string
	names := make([]string, 0, len(c.FTSSegments))
	for t := range c.FTSSegments {
		names = append(names, t)
	}
	sort.Strings(names)
	for _, t := range names {
		segs = append(segs, fmt.Sprintf("%s %d", strings.TrimSuffix(t, "_fts"), c.FTSSegments[t]))
	}
	if len(segs) > 0 { // PostgreSQL's GIN indexes have none
		fmt.Fprintf(w, "full-text segments: %s\n", strings.Join(segs, ", "))
	}
	for _, h := range c.Hooks {
		switch {
		case len(h.Events) == 0:
			fmt.Fprintf(w, "hooks (%s): none in %s\n", h.Agent, h.File)
		case len(h.Elsewhere) > 0:
			fmt.Fprintf(w, "hooks (%s): %s in %s, running %s (not this binary)\n", h.Agent, strings.Join(h.Events, ", "), h.File, strings.Join(h.Elsewhere, ", "))
		default:
			fmt.Fprintf(w, "hooks (%s): %s in %s, running this binary\n", h.Agent, strings.Join(h.Events, ", "), h.File)
		}
		if len(h.Missing) > 0 && len(h.Events) > 0 {
			fmt.Fprintf(w, "  missing: %s\n", strings.Join(h.Missing, ", "))
		}
	}
	if len(c.Receipts) == 0 {
		fmt.Fprintln(w, "last hook runs: none recorded")
	}
	for _, r := range c.Receipts {
		detail := ""
		if r.Detail != "" {
			detail = ": " + r.Detail
		}
		fmt.Fprintf(w, "last %s hook: %s, %s in %d ms%s\n", r.Event, r.At.Local().Format("2006-01-02 15:04:05"), r.Outcome, r.MS, detail)
	}
	for _, t := range c.Transcripts {
		switch {
		case !t.Found:
			fmt.Fprintf(w, "transcripts (%s): %s not found\n", t.Agent, t.Path)
		case t.Behind == 0:
			fmt.Fprintf(w, "transcripts (%s): %s, %d files, all ingested\n", t.Agent, t.Path, t.Files)
		default:
			fmt.Fprintf(w, "transcripts (%s): %s, %d files, %d not ingested yet (%s, the oldest changed %s)\n", t.Agent, t.Path,
				t.Files, t.Behind, humanBytes(t.Bytes), t.Oldest.Local().Format("2006-01-02 15:04"))
		}
	}
	if len(c.Excluded) == 0 {
		fmt.Fprintln(w, "excluded projects: none")
	} else {
		fmt.Fprintln(w, "excluded projects:")
		for _, x := range c.Excluded {
			how := "paused"
			if x.How != "paused" {
				how = "ignored by " + x.File
			}
			fmt.Fprintf(w, "  %s (%s)\n", x.Project, how)
		}
	}
	for _, p := range c.Problems {
		fmt.Fprintf(app.Stderr, "ledger: warning: %s\n", p)
	}
}
