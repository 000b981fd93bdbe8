package handoff

import (
	"reflect"
	"strings"
)

// The Working set section, one line per folder of recent files, then one
// per group of files named as next, then the loop's commands:
//
//	- lib/app/live/: review_live.ex (edited), session_live.ex (lines 40-120)
//	- mix.exs (edited)
//	- next, for proj-7: plugin/hooks/hooks.json, lib/app/services/{tmux.ex, builder.ex}
//	- named by the user: docs/design.md
//	- commands: `mix test`, `mix credo --strict`
//
// Files at the project's root have no folder label. Under budget
// pressure the least recent folders give way first, the commands last.

const (
	workNextPrefix = "next, "
	workCmdPrefix  = "commands: "
	workEdited     = "edited"
	workLinesNote  = "lines "
)

// workLine is one line of the section and the order in which it gives
// way (higher first).
type workLine struct {
	text string
	cut  int
	file bool // a folder line: its files count in the "+N more" line
	n    int  // files on the line
}

// workLines are the section's lines in the order they are written.
func workLines(d Doc) []workLine {
	ws := d.WorkingSet
	var lines []workLine
	// Recent files: a line per run of files in one folder.
	var folder string
	var names []string
	flush := func() {
		if len(names) == 0 {
			return
		}
		t := strings.Join(names, ", ")
		if folder != "" {
			t = folder + sepOf(folder, d.Project) + ": " + t
		}
		lines = append(lines, workLine{text: t, file: true, n: len(names)})
		names = nil
	}
	for i, f := range ws.Files {
		dir, name := splitShown(showPath(f.Path, d.Project))
		if i == 0 || dir != folder {
			flush()
			folder = dir
		}
		var notes []string
		if f.Edited {
			notes = append(notes, workEdited)
		}
		if f.Lines != "" {
			notes = append(notes, f.Lines)
		}
		if len(notes) > 0 {
			name += " (" + strings.Join(notes, "; ") + ")"
		}
		names = append(names, name)
	}
	flush()
	// The least recent folders give way first.
	for i := range lines {
		lines[i].cut = 2 + i
	}
	for _, g := range ws.Next {
		lines = append(lines, workLine{text: g.Why + ": " + groupPaths(g.Paths, d.Project), cut: 1})
	}
	if len(ws.Commands) > 0 {
		spans := make([]string, len(ws.Commands))
		for i, c := range ws.Commands {
			spans[i] = codeSpan(singleLine(c))
		}
		lines = append(lines, workLine{text: workCmdPrefix + strings.Join(spans, ", "), cut: 0})
	}
	return lines
}

// sepOf is the separator a folder line ends its folder with: the
// folder's own, or the project's for a folder one level under it.
func sepOf(folder, project string) string {
	switch {
	case folder == "/":
		return ""
	case strings.ContainsAny(folder, `/\`):
		return pathSep(folder)
	}
	return pathSep(project)
}

// splitShown splits a shown path into its folder and name; "" for a file
// at the project's root.
func splitShown(s string) (string, string) {
	i := strings.LastIndexAny(s, `/\`)
	if i < 0 {
		return "", s
	}
	if i == 0 {
		return "/", s[1:]
	}
	return s[:i], s[i+1:]
}

// groupPaths writes paths with those of one folder side by side grouped:
// "lib/a/{x.ex, y.ex}, test/z_test.exs".
func groupPaths(paths []string, project string) string {
	var parts []string
	for i := 0; i < len(paths); {
		dir, name := splitShown(showPath(paths[i], project))
		j := i + 1
		names := []string{name}
		for j < len(paths) {
			d2, n2 := splitShown(showPath(paths[j], project))
			if d2 != dir || dir == "" {
				break
			}
			names = append(names, n2)
			j++
		}
		sep := sepOf(dir, project)
		switch {
		case dir == "":
			parts = append(parts, name)
		case len(names) == 1:
			parts = append(parts, dir+sep+name)
		default:
			parts = append(parts, dir+sep+"{"+strings.Join(names, ", ")+"}")
		}
		i = j
	}
	return strings.Join(parts, ", ")
}

// writeWorking writes the section keeping the keep lines that give way
// last (keep < 0: all).
func writeWorking(b *strings.Builder, d Doc, keep, max int) {
	lines := workLines(d)
	if len(lines) == 0 {
		b.WriteString(none + "\n")
		return
	}
	if keep < 0 || keep > len(lines) {
		keep = len(lines)
	}
	// The keep lines with the lowest cut ranks stay.
	ranks := make([]int, len(lines))
	for i, l := range lines {
		ranks[i] = l.cut
	}
	threshold := kthSmallest(ranks, keep)
	shown, dropped := 0, 0
	var items []string
	for _, l := range lines {
		if shown < keep && l.cut <= threshold {
			shown++
			items = append(items, escapeItem(singleLine(shorten(l.text, max))))
			continue
		}
		if l.file {
			dropped += l.n
		}
	}
	for _, s := range items {
		b.WriteString("- " + s + "\n")
	}
	if dropped > 0 {
		b.WriteString("- … +" + itoa(dropped) + " more\n")
	}
}

// kthSmallest is the k-th smallest of xs (k >= 1), or -1 for k 0.
func kthSmallest(xs []int, k int) int {
	if k <= 0 {
		return -1
	}
	s := append([]int(nil), xs...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[min(k, len(s))-1]
}

// readWorking undoes writeWorking. Markdown edited by hand (or by
// anything but ledger) may hold lines no render writes, which a render
// would write back otherwise: then it keeps the items that a render
// writes back the same way, or, should those still not be, none, so that
// a handoff read and written again is always the same handoff.
func readWorking(lines []string, project string) WorkingSet {
	var ws WorkingSet
	for _, l := range readList(lines) {
		got := readWorkLine(l, project)
		ws.Files = append(ws.Files, got.Files...)
		ws.Next = append(ws.Next, got.Next...)
		ws.Commands = append(ws.Commands, got.Commands...)
	}
	stable := func(ws WorkingSet) bool { return reflect.DeepEqual(rereadWorking(ws, project), ws) }
	if stable(ws) {
		return ws
	}
	var kept WorkingSet
	for _, f := range ws.Files {
		if stable(WorkingSet{Files: []WorkFile{f}}) {
			kept.Files = append(kept.Files, f)
		}
	}
	for _, g := range ws.Next {
		if stable(WorkingSet{Next: []NextFiles{g}}) {
			kept.Next = append(kept.Next, g)
		}
	}
	for _, c := range ws.Commands {
		if stable(WorkingSet{Commands: []string{c}}) {
			kept.Commands = append(kept.Commands, c)
		}
	}
	if stable(kept) {
		return kept
	}
	return WorkingSet{}
}

// rereadWorking is ws written as writeWorking writes it (with no budget)
// and read back line by line.
func rereadWorking(ws WorkingSet, project string) WorkingSet {
	var out WorkingSet
	for _, wl := range workLines(Doc{WorkingSet: ws, Project: project}) {
		for _, l := range readList([]string{"- " + escapeItem(singleLine(wl.text))}) {
			got := readWorkLine(l, project)
			out.Files = append(out.Files, got.Files...)
			out.Next = append(out.Next, got.Next...)
			out.Commands = append(out.Commands, got.Commands...)
		}
	}
	return out
}

// readWorkLine reads one line of the section: the commands, a group of
// next files, or a folder's recent files.
func readWorkLine(l, project string) WorkingSet {
	var ws WorkingSet
	switch {
	case strings.HasPrefix(l, workCmdPrefix):
		ws.Commands = append(ws.Commands, codeSpans(l[len(workCmdPrefix):])...)
	case (strings.HasPrefix(l, workNextPrefix) || strings.HasPrefix(l, namedByUser+": ")) && strings.Contains(l, ": "):
		i := strings.LastIndex(l, ": ")
		g := NextFiles{Why: l[:i]}
		for _, p := range splitTop(l[i+2:]) {
			for _, q := range expandBraces(p) {
				g.Paths = append(g.Paths, readPath(q, project))
			}
		}
		if len(g.Paths) > 0 {
			ws.Next = append(ws.Next, g)
		}
	default:
		folder, names := "", l
		if i := strings.Index(l, ": "); i > 0 && (l[i-1] == '/' || l[i-1] == '\\') {
			folder, names = l[:i], l[i+2:]
		}
		for _, n := range splitTop(names) {
			f := readWorkFile(n)
			f.Path = readPath(folder+f.Path, project)
			ws.Files = append(ws.Files, f)
		}
	}
	return ws
}

// readWorkFile reads "name (edited; lines 1-20)".
func readWorkFile(s string) WorkFile {
	f := WorkFile{Path: s}
	if !strings.HasSuffix(s, ")") {
		return f
	}
	i := strings.LastIndex(s, " (")
	if i < 0 {
		return f
	}
	notes := strings.Split(s[i+2:len(s)-1], "; ")
	var g WorkFile
	for _, n := range notes {
		switch {
		case n == workEdited && !g.Edited && g.Lines == "":
			g.Edited = true
		case strings.HasPrefix(n, workLinesNote) && g.Lines == "" && rangeNote(n[len(workLinesNote):]):
			g.Lines = n
		default:
			return f // not notes of ours: part of the name
		}
	}
	g.Path = s[:i]
	return g
}

// rangeNote tells whether s reads as line ranges ("12-40, 90-, …").
func rangeNote(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c == '-' || c == ',' || c == ' ' || c == '…') {
			return false
		}
	}
	return true
}

// splitTop splits s at ", " outside parentheses and braces.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '{':
			depth++
		case ')', '}':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 && i+1 < len(s) && s[i+1] == ' ' {
				out = append(out, s[start:i])
				start = i + 2
				i++
			}
		}
	}
	if start <= len(s) && s[start:] != "" {
		out = append(out, s[start:])
	}
	return out
}

// expandBraces undoes groupPaths' "dir/{a, b}".
func expandBraces(s string) []string {
	i := strings.Index(s, "/{")
	if j := strings.Index(s, `\{`); i < 0 || (j >= 0 && j < i) {
		i = j
	}
	if i < 0 || !strings.HasSuffix(s, "}") {
		return []string{s}
	}
	dir := s[:i+1] // with its separator
	var out []string
	for _, n := range splitTop(s[i+2 : len(s)-1]) {
		out = append(out, dir+n)
	}
	return out
}

// codeSpans reads the inline code spans of a line, in order.
func codeSpans(s string) []string {
	var out []string
	for _, part := range splitSpans(s) {
		if t := readTest(part); t.Status == "" && t.Command != part {
			out = append(out, t.Command)
		}
	}
	return out
}

// splitSpans splits "`a`, `b`" into its spans, fences of any length
// respected.
func splitSpans(s string) []string {
	var out []string
	for len(s) > 0 {
		n := 0
		for n < len(s) && s[n] == '`' {
			n++
		}
		if n == 0 {
			return out
		}
		fence := s[:n]
		end := -1
		for j := n; j < len(s); {
			k := strings.Index(s[j:], fence)
			if k < 0 {
				break
			}
			k += j
			m := k
			for m < len(s) && s[m] == '`' {
				m++
			}
			if m-k == n {
				end = m
				break
			}
			j = m
		}
		if end < 0 {
			return out
		}
		out = append(out, s[:end])
		s = strings.TrimPrefix(s[end:], ", ")
	}
	return out
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
