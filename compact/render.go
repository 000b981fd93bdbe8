package compact

import (
	"fmt"
	"strings"
)

// RenderTranscript writes msgs as a plain-text transcript for a model to
// read: one paragraph per block, tagged with who wrote it; tool calls with
// their input, tool outputs shortened to about toolResultChars characters
// (0: not shortened). Thinking is left out.
func RenderTranscript(msgs []Message, toolResultChars int) string {
	var b strings.Builder
	for _, m := range msgs {
		who := string(m.Role)
		if m.Meta {
			who += " (injected)"
		}
		if m.CompactSummary {
			who = "summary of an earlier compaction"
		}
		for _, blk := range m.Blocks {
			switch blk.Kind {
			case BlockText:
				if strings.TrimSpace(blk.Text) == "" {
					continue
				}
				fmt.Fprintf(&b, "[%s]\n%s\n\n", who, blk.Text)
			case BlockToolUse:
				fmt.Fprintf(&b, "[%s calls tool %s]\n%s\n\n", who, blk.ToolName, blk.Input)
			case BlockToolResult:
				text := blk.Text
				if toolResultChars > 0 {
					text = shorten(text, toolResultChars)
				}
				tag := "tool result"
				if blk.IsError {
					tag = "tool error"
				}
				fmt.Fprintf(&b, "[%s]\n%s\n\n", tag, text)
			case BlockImage:
				fmt.Fprintf(&b, "[%s attaches an image]\n\n", who)
			}
		}
	}
	return b.String()
}
