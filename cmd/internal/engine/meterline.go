package engine

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dustin/go-humanize"

	"github.com/agentledger/ledger/compact"
)

// meterParts is what the meter knows of a context, and nothing it does
// not: the model's usage split (cached, new, output) when the last API
// response reported it, the whole context when only that is known (a Codex
// session read from the ledger), and what the transcript itself shows
// (its estimated size, the tool results in it, the images). The system
// prompt, memory files and tool definitions are not in a transcript: they
// are neither shown nor counted as zero.
type meterParts struct {
	usage     *compact.Usage // the last response's, when known
	totalOnly bool           // usage holds the context's total only (InputTokens)
	ratio     float64
	live      []compact.Message
}

// categories are the meter's known categories: exact ones from the usage,
// estimated ones (their Chars set) from the transcript.
func (p meterParts) categories() (map[string]compact.Amount, []string) {
	est := compact.DefaultEstimator()
	cats := map[string]compact.Amount{}
	var order []string
	add := func(name string, a compact.Amount) {
		cats[name] = a
		order = append(order, name)
	}
	if u := p.usage; u != nil {
		if p.totalOnly {
			add("context", compact.Amount{Tokens: u.ContextTokens()})
		} else {
			add("cached", compact.Amount{Tokens: u.CacheReadInputTokens})
			add("new", compact.Amount{Tokens: u.InputTokens + u.CacheCreationInputTokens})
			add("output", compact.Amount{Tokens: u.OutputTokens})
		}
	}
	var tr compact.Amount
	images := int64(0)
	for _, m := range p.live {
		for _, b := range m.Blocks {
			switch b.Kind {
			case compact.BlockToolResult:
				tr.Chars += int64(utf8.RuneCountInString(b.Text))
				tr.Tokens += int64(est.Tokens(b.Text))
			case compact.BlockImage:
				images++
			}
		}
	}
	all := compact.Amount{Tokens: compact.EstimateMessages(p.live, est)}
	for _, m := range p.live {
		for _, b := range m.Blocks {
			all.Chars += int64(utf8.RuneCountInString(b.Text) + utf8.RuneCountInString(b.ToolName) + utf8.RuneCountInString(b.Input))
		}
	}
	add("transcript", all)
	add("tool_results", tr)
	if images > 0 {
		// Counted, not measured: the ledger keeps that an image was there.
		add("images", compact.Amount{Chars: images})
	}
	return cats, order
}

// line is the meter's one-line summary: exact figures as they are,
// estimates with "~", images as a count, and nothing for what the meter
// cannot know.
func (p meterParts) line() string {
	cats, order := p.categories()
	var b strings.Builder
	fmt.Fprintf(&b, "ctx %.0f%%", 100*p.ratio)
	if p.usage == nil {
		b.WriteString(" (estimated)")
	}
	for _, name := range order {
		a := cats[name]
		label := strings.ReplaceAll(name, "_", " ")
		switch {
		case name == "images":
			fmt.Fprintf(&b, " · %s %d", label, a.Chars)
		case name == "transcript" && p.usage != nil:
			// the usage says it all, exactly
		case name == "transcript" || name == "tool_results":
			fmt.Fprintf(&b, " · %s ~%s", label, humanize.Comma(a.Tokens))
		default:
			fmt.Fprintf(&b, " · %s %s", label, humanize.Comma(a.Tokens))
		}
	}
	return b.String()
}
