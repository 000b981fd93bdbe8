package compact

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// Request is what an agent sends the model, by the categories a Meter
// reports.
type Request struct {
	// SystemPrompt is the system prompt.
	SystemPrompt string
	// Memory holds memory documents: CLAUDE.md, AGENTS.md and the like.
	Memory []string
	// Tools holds the tool definitions as sent (JSON schemas).
	Tools []string
	// Attachments holds the text of attached files.
	Attachments []string
	// Messages is the conversation.
	Messages []Message
}

// Amount is the size of one category of a request.
type Amount struct {
	Chars  int64 `json:"chars"`
	Tokens int64 `json:"tokens"`
}

// Category is one named Amount, as Meter.Categories lists them.
type Category struct {
	Name string `json:"name"`
	Amount
}

// Meter tells what fills a request and how close it is to the window. Its
// token figures are estimates unless Exact is set; Summary and Ratio use
// Used, which prefers Exact.
type Meter struct {
	// Limit is the context window, in tokens.
	Limit int64 `json:"limit_tokens"`
	// The request's categories, in characters and estimated tokens.
	Prompt      Amount `json:"prompt"`
	Memory      Amount `json:"memory"`
	Tools       Amount `json:"tools"`
	Attachments Amount `json:"attachments"`
	Transcript  Amount `json:"transcript"`
	// Exact is the context in use as the API reported it (see LastUsage),
	// 0 when not known.
	Exact int64 `json:"exact_tokens,omitempty"`
}

// NewMeter measures req against a window of limit tokens with est (nil:
// DefaultEstimator). Lines of one API response count its overhead once
// (EstimateMessages).
func NewMeter(req Request, limit int64, est Estimator) Meter {
	if est == nil {
		est = DefaultEstimator()
	}
	m := Meter{Limit: limit}
	m.Prompt = amountOf(est, req.SystemPrompt)
	m.Memory = amountOf(est, req.Memory...)
	m.Tools = amountOf(est, req.Tools...)
	m.Attachments = amountOf(est, req.Attachments...)
	for _, msg := range req.Messages {
		m.Transcript.Chars += int64(messageChars(msg))
	}
	m.Transcript.Tokens = EstimateMessages(req.Messages, est)
	return m
}

func amountOf(est Estimator, texts ...string) Amount {
	var a Amount
	for _, s := range texts {
		a.Chars += int64(utf8.RuneCountInString(s))
		a.Tokens += int64(est.Tokens(s))
	}
	return a
}

// WithUsage returns m with Exact set from the usage of the last API
// response: the context that request used.
func (m Meter) WithUsage(u Usage) Meter {
	m.Exact = u.ContextTokens()
	return m
}

// Categories lists the categories in a fixed order: prompt, memory, tools,
// attachments, transcript.
func (m Meter) Categories() []Category {
	return []Category{
		{"prompt", m.Prompt}, {"memory", m.Memory}, {"tools", m.Tools},
		{"attachments", m.Attachments}, {"transcript", m.Transcript},
	}
}

// Chars is the request's size in characters.
func (m Meter) Chars() int64 {
	var n int64
	for _, c := range m.Categories() {
		n += c.Chars
	}
	return n
}

// Estimate is the request's estimated size in tokens: the sum of the
// categories.
func (m Meter) Estimate() int64 {
	var n int64
	for _, c := range m.Categories() {
		n += c.Tokens
	}
	return n
}

// Used is the context in use: Exact when known, else Estimate.
func (m Meter) Used() int64 {
	if m.Exact > 0 {
		return m.Exact
	}
	return m.Estimate()
}

// Ratio is Used as a fraction of Limit (0 when Limit is not set).
func (m Meter) Ratio() float64 {
	if m.Limit <= 0 {
		return 0
	}
	return float64(m.Used()) / float64(m.Limit)
}

// ShouldCompact reports whether the context in use plus reserve tokens
// (room for the next turn: output, tool results) exceeds the window.
func (m Meter) ShouldCompact(reserve int64) bool {
	return m.Used()+reserve > m.Limit
}

// Summary is a one-line report for a status line, all figures in tokens:
// the share of the window in use, then each category's estimate, e.g.
//
//	ctx 21% · prompt 1200 · memory 200 · tools 400 · attachments 0 · transcript 5000
func (m Meter) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ctx %d%%", int64(math.Round(100*m.Ratio())))
	for _, c := range m.Categories() {
		fmt.Fprintf(&b, " · %s %d", c.Name, c.Tokens)
	}
	return b.String()
}

// LastUsage returns the usage of the last API response in msgs: its
// ContextTokens are the context in use now, exactly. Sidechain (subagent)
// messages are passed over unless msgs holds nothing else.
//
// A usage recorded before the latest compaction summary is stale: it
// measured the context before it was compacted. LastUsage reports none
// then (false), whether the stale usage comes before the summary in msgs or
// after it, in a zone the compaction preserved: older than the summary by
// Time. A message without a Time after a summary with one counts as older,
// the safe side (an agent loop that took a stale usage for current would
// compact again at once); messages after a summary without a Time count as
// newer.
func LastUsage(msgs []Message) (Usage, bool) {
	sidechain := true
	for _, m := range msgs {
		if !m.Sidechain {
			sidechain = false
			break
		}
	}
	summary := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].CompactSummary && msgs[i].Sidechain == sidechain {
			summary = i
			break
		}
	}
	for i := len(msgs) - 1; i > summary; i-- {
		m := msgs[i]
		if m.Sidechain != sidechain || m.Usage == nil {
			continue
		}
		if summary >= 0 && !msgs[summary].Time.IsZero() && m.Time.Before(msgs[summary].Time) {
			return Usage{}, false
		}
		return *m.Usage, true
	}
	return Usage{}, false
}
