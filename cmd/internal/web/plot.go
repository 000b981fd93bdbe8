package web

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/agentledger/ledger/cmd/internal/engine"
)

// The plots are SVG drawn here, on the server: a line and a few markers
// need no chart library, and a page with no script still shows them. Every
// text an SVG carries goes through template.HTMLEscapeString; the rest is
// numbers and fixed class names.

// Plot geometry, in SVG user units.
const (
	plotW, plotH           = 960, 300
	padL, padR, padT, padB = 64, 16, 16, 36
)

// scale maps a domain [lo, hi] onto a range [a, b].
type scale struct{ lo, hi, a, b float64 }

func (s scale) at(v float64) float64 {
	if s.hi == s.lo {
		return s.a
	}
	return s.a + (v-s.lo)/(s.hi-s.lo)*(s.b-s.a)
}

// contextPlot draws a session's context per API response against its
// window, the 80% and 95% thresholds, and a marker at every compaction's
// cut and every handoff, each a link to its page.
func contextPlot(tl engine.Timeline) template.HTML {
	top := max(tl.Window, tl.Peak, 1)
	top += top / 20
	x := scale{0, float64(max(tl.LastSeq, 1)), padL, plotW - padR}
	y := scale{0, float64(top), plotH - padB, padT}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg class="plot" viewBox="0 0 %d %d" role="img" aria-label="context tokens per message">`, plotW, plotH)
	axes(&sb, x, y, top, "message", func(v float64) string { return humanize.Comma(int64(v)) })
	line := func(class string, tokens int64, label string) {
		if tokens <= 0 || tokens > top {
			return
		}
		fmt.Fprintf(&sb, `<line class="%s" x1="%d" x2="%d" y1="%.1f" y2="%.1f"/>`, class, padL, plotW-padR, y.at(float64(tokens)), y.at(float64(tokens)))
		fmt.Fprintf(&sb, `<text class="label" x="%d" y="%.1f" text-anchor="end">%s</text>`, plotW-padR-4, y.at(float64(tokens))-4,
			template.HTMLEscapeString(label))
	}
	line("window", tl.Window, "window "+humanize.Comma(tl.Window))
	line("th80", tl.Should, "80% "+humanize.Comma(tl.Should))
	line("th95", tl.Must, "95% "+humanize.Comma(tl.Must))
	// The series, at most one point per horizontal unit (its largest):
	// a session of 50,000 messages still draws in a few kilobytes.
	if len(tl.Points) > 0 {
		sb.WriteString(`<polyline class="series" points="`)
		lastX, lastY := -1, 0.0
		flush := func() {
			if lastX >= 0 {
				fmt.Fprintf(&sb, "%d,%.1f ", lastX, lastY)
			}
		}
		for _, p := range tl.Points {
			px, py := int(x.at(float64(p.Seq))), y.at(float64(p.Tokens))
			if px == lastX {
				lastY = min(lastY, py) // higher on screen: more tokens
				continue
			}
			flush()
			lastX, lastY = px, py
		}
		flush()
		sb.WriteString(`"/>`)
	} else {
		fmt.Fprintf(&sb, `<text class="note" x="%d" y="%d">no usage figures in this transcript: the markers show each compaction's context before it</text>`,
			padL+8, padT+16)
	}
	for _, c := range tl.Compactions {
		cx := x.at(float64(c.Seq))
		title := fmt.Sprintf("compaction %d (%s, %s), %s tokens before, after message %d: see what it lost", c.ID, c.Trigger, c.Source,
			humanize.Comma(c.Tokens), c.Seq)
		if c.Source == "cli" {
			title = fmt.Sprintf("clear %d (ledger compact wrote a handoff), %s tokens in use, after message %d", c.ID, humanize.Comma(c.Tokens), c.Seq)
		}
		class := "compaction-marker"
		if c.Source == "cli" {
			class += " clear-marker"
		}
		fmt.Fprintf(&sb, `<a href="/compactions/%d" class="marker %s" data-compaction="%d"><title>%s</title>`,
			c.ID, class, c.ID, template.HTMLEscapeString(title))
		fmt.Fprintf(&sb, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d"/>`, cx, cx, padT, plotH-padB)
		cy := y.at(float64(c.Tokens))
		if c.Tokens <= 0 {
			cy = padT + 6
		}
		fmt.Fprintf(&sb, `<circle cx="%.1f" cy="%.1f" r="6"/></a>`, cx, cy)
	}
	for _, h := range tl.Handoffs {
		hx := x.at(float64(h.Seq))
		title := fmt.Sprintf("handoff %d (%s, %s tokens), written %s", h.ID, h.Trigger, humanize.Comma(h.Tokens), when(h.At))
		fmt.Fprintf(&sb, `<a href="/handoffs/%d" class="marker handoff-marker" data-handoff="%d"><title>%s</title>`,
			h.ID, h.ID, template.HTMLEscapeString(title))
		fmt.Fprintf(&sb, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d"/>`, hx, hx, padT, plotH-padB)
		fmt.Fprintf(&sb, `<rect x="%.1f" y="%d" width="10" height="10"/></a>`, hx-5, plotH-padB-10)
	}
	sb.WriteString(`</svg>`)
	return template.HTML(sb.String())
}

// axes draws the frame, the y ticks (tokens) and the x ticks.
func axes(sb *strings.Builder, x, y scale, top int64, xLabel string, xTick func(float64) string) {
	fmt.Fprintf(sb, `<rect class="frame" x="%d" y="%d" width="%d" height="%d"/>`, padL, padT, plotW-padL-padR, plotH-padT-padB)
	step := niceStep(top)
	for v := int64(0); v <= top; v += step {
		fmt.Fprintf(sb, `<line class="grid" x1="%d" x2="%d" y1="%.1f" y2="%.1f"/>`, padL, plotW-padR, y.at(float64(v)), y.at(float64(v)))
		fmt.Fprintf(sb, `<text class="tick" x="%d" y="%.1f" text-anchor="end">%s</text>`, padL-6, y.at(float64(v))+4, kilo(v))
	}
	for i := 0; i <= 4; i++ {
		v := x.lo + (x.hi-x.lo)*float64(i)/4
		fmt.Fprintf(sb, `<text class="tick" x="%.1f" y="%d" text-anchor="middle">%s</text>`, x.at(v), plotH-padB+16,
			template.HTMLEscapeString(xTick(v)))
	}
	fmt.Fprintf(sb, `<text class="axis" x="%d" y="%d" text-anchor="middle">%s</text>`, (plotW+padL)/2, plotH-4,
		template.HTMLEscapeString(xLabel))
}

// niceStep is a round tick step that gives four to eight ticks up to top.
func niceStep(top int64) int64 {
	step := int64(1)
	for top/step > 8 {
		switch {
		case top/(step*2) <= 8:
			return step * 2
		case top/(step*5) <= 8:
			return step * 5
		}
		step *= 10
	}
	return step
}

// kilo writes tokens as 150k, 1.2M.
func kilo(v int64) string {
	switch {
	case v >= 1_000_000:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(v)/1e6), ".0") + "M"
	case v >= 1000:
		return fmt.Sprintf("%dk", v/1000)
	}
	return fmt.Sprint(v)
}

// auditChart draws the context before each compaction over time.
func auditChart(rows []engine.AuditRow) template.HTML {
	var first, last time.Time
	var top int64 = 1
	for _, r := range rows {
		at := time.Time(r.At)
		if first.IsZero() || at.Before(first) {
			first = at
		}
		if at.After(last) {
			last = at
		}
		if r.PreTokens != nil {
			top = max(top, *r.PreTokens)
		}
	}
	top += top / 20
	x := scale{0, max(last.Sub(first).Seconds(), 1), padL + 8, plotW - padR - 8}
	y := scale{0, float64(top), plotH - padB, padT}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg class="plot" viewBox="0 0 %d %d" role="img" aria-label="context before each compaction over time">`, plotW, plotH)
	axes(&sb, x, y, top, "time (UTC)", func(v float64) string {
		if first.IsZero() {
			return ""
		}
		return first.Add(time.Duration(v * float64(time.Second))).UTC().Format("2006-01-02")
	})
	for _, r := range rows {
		if r.PreTokens == nil {
			continue
		}
		px := x.at(time.Time(r.At).Sub(first).Seconds())
		title := fmt.Sprintf("%s %s: %s tokens before (%s, %s)", engine.ShortID(r.Session), when(time.Time(r.At)), humanize.Comma(*r.PreTokens),
			r.Trigger, r.Source)
		fmt.Fprintf(&sb, `<a href="/compactions/%d" class="marker pre-marker %s"><title>%s</title><circle cx="%.1f" cy="%.1f" r="5"/></a>`,
			r.Compaction, template.HTMLEscapeString(r.Trigger), template.HTMLEscapeString(title), px, y.at(float64(*r.PreTokens)))
	}
	sb.WriteString(`</svg>`)
	return template.HTML(sb.String())
}
