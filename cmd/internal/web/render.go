package web

import (
	"fmt"
	"html/template"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dustin/go-humanize"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/compact"
)

// funcs are the templates' helpers. None returns unescaped text: the
// templates escape whatever a transcript said.
var funcs = template.FuncMap{
	"short":     engine.ShortID,
	"thousands": humanize.Comma,
	"when":      when,
	"pct": func(n, of int64) string {
		if of <= 0 {
			return ""
		}
		return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(of))
	},
	"sessionURL": func(id string) string { return "/sessions/" + url.PathEscape(id) },
	"messageURL": messageURL,
	"compactionURL": func(id int64) string {
		return "/compactions/" + strconv.FormatInt(id, 10)
	},
	"handoffURL": func(id int64) string { return "/handoffs/" + strconv.FormatInt(id, 10) },
	"derefInt": func(p *int64) string {
		if p == nil {
			return "-"
		}
		return humanize.Comma(*p)
	},
	"deref":   func(p *int64) int64 { return *p },
	"int64of": func(n int) int64 { return int64(n) },
	"timeOf":  func(t engine.Time) time.Time { return time.Time(t) },
	"list":    func(xs ...string) []string { return xs },
	"sectionName": func(s string) string {
		return map[string]string{"files": "Modified files", "tasks": "Open tasks", "errors": "Open errors",
			"requests": "User requests", "decisions": "Decisions"}[s]
	},
}

// when writes a time in UTC to the minute, "-" for none.
func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// maxBlockText is the most of one block a page shows: a tool's output can
// be megabytes, and a page must stay fast.
const maxBlockText = 20_000

// messageView is a message as the conversation shows it.
type messageView struct {
	Seq                        int64
	Role                       string
	At                         time.Time
	Model                      string
	Meta, Summary, Sidechain   bool
	Agent                      string
	Blocks                     []blockView
	ContextTokens, OutputToken int64
}

// blockView is one content block: text shown, thinking and tool calls
// folded.
type blockView struct {
	Kind    string // text, thinking, tool_use, tool_result, image
	Text    string
	Tool    string
	Error   bool
	Lines   int
	Omitted int // characters left out
}

func messageViews(msgs []compact.Message, seqs []int64) []messageView {
	out := make([]messageView, len(msgs))
	for i, m := range msgs {
		v := messageView{Seq: seqs[i], Role: string(m.Role), At: m.Time, Model: m.Model, Meta: m.Meta,
			Summary: m.CompactSummary, Sidechain: m.Sidechain, Agent: m.AgentID}
		if m.Usage != nil {
			v.ContextTokens, v.OutputToken = m.Usage.ContextTokens(), m.Usage.OutputTokens
		}
		for _, b := range m.Blocks {
			bv := blockView{Kind: string(b.Kind), Tool: b.ToolName, Error: b.IsError}
			switch b.Kind {
			case compact.BlockToolUse:
				bv.Text = b.Input
			case compact.BlockImage:
				bv.Text = "[image]"
			default:
				bv.Text = b.Text
			}
			bv.Text, bv.Omitted = clip(bv.Text, maxBlockText)
			bv.Lines = strings.Count(bv.Text, "\n") + 1
			v.Blocks = append(v.Blocks, bv)
		}
		out[i] = v
	}
	return out
}

// clip shortens s to at most n bytes, on a rune boundary, and says how
// many bytes it left out.
func clip(s string, n int) (string, int) {
	if len(s) <= n {
		return s, 0
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], len(s) - cut
}
