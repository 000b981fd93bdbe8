package transcript

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentledger/ledger/compact"
)

// WriteMarkdown writes a session as a transcript to read: a heading per
// message (its number, who, when), its text as written, thinking quoted, each tool call
// and result in a fenced block, and a rule where the context was compacted.
func WriteMarkdown(w io.Writer, s SessionFacts, msgs []compact.Message, bounds []compact.Boundary) error {
	bw := bufio.NewWriter(w)
	title := s.Title
	if title == "" {
		title = "Session " + s.ID
	}
	fmt.Fprintf(bw, "# %s\n\n", oneLine(title))
	fmt.Fprintf(bw, "- Session: %s\n", s.ID)
	if s.Project != "" {
		fmt.Fprintf(bw, "- Project: %s\n", s.Project)
	}
	if s.GitBranch != "" {
		fmt.Fprintf(bw, "- Branch: %s\n", s.GitBranch)
	}
	if s.Model != "" {
		fmt.Fprintf(bw, "- Model: %s\n", s.Model)
	}
	fmt.Fprintf(bw, "- Messages: %d\n", len(msgs))
	pending := bounds
	compacted := func(b compact.Boundary) {
		fmt.Fprintf(bw, "\n---\n\n*Context compacted (%s) at %s, %d tokens before.*\n", b.Trigger, stamp(b.Time), b.PreTokens)
	}
	for i, m := range msgs {
		for len(pending) > 0 && (pending[0].UUID == m.ParentUUID || !m.Time.IsZero() && pending[0].Time.Before(m.Time)) {
			compacted(pending[0])
			pending = pending[1:]
		}
		who := string(m.Role)
		switch {
		case m.CompactSummary:
			who = "compaction summary"
		case m.Meta:
			who += " (injected)"
		}
		if m.Sidechain {
			who += ", subagent"
			if m.AgentID != "" {
				who += " " + m.AgentID
			}
		}
		// msgs are the session's in order, so that i is the message's
		// number in the ledger (its seq), as the web view shows it.
		fmt.Fprintf(bw, "\n## #%d · %s · %s\n", i, who, stamp(m.Time))
		for _, b := range m.Blocks {
			bw.WriteString("\n")
			switch b.Kind {
			case compact.BlockText:
				bw.WriteString(strings.TrimRight(b.Text, "\n") + "\n")
			case compact.BlockThinking:
				if b.Text == "" {
					bw.WriteString("> *(thinking)*\n")
					continue
				}
				for _, l := range strings.Split(strings.TrimRight(b.Text, "\n"), "\n") {
					bw.WriteString(strings.TrimRight("> "+l, " ") + "\n")
				}
			case compact.BlockToolUse:
				fmt.Fprintf(bw, "**%s** call `%s`\n", oneLine(b.ToolName), b.ToolID)
				fenced(bw, b.Input)
			case compact.BlockToolResult:
				label := "result"
				if b.IsError {
					label = "error"
				}
				fmt.Fprintf(bw, "**%s** of `%s`\n", label, b.ToolID)
				fenced(bw, b.Text)
			case compact.BlockImage:
				bw.WriteString("*[image]*\n")
			}
		}
	}
	for _, b := range pending {
		compacted(b)
	}
	return bw.Flush()
}

// fenced writes text in a code fence longer than any run of backticks in it.
func fenced(w *bufio.Writer, text string) {
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	w.WriteString(fence + "\n" + strings.TrimRight(text, "\n") + "\n" + fence + "\n")
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "time unknown"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
