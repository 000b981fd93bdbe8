package handoff

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, md string
		notDoc   bool
	}{
		{"plain text", "hello\nworld\n", true},
		{"empty", "", true},
		{"unclosed frontmatter", "---\nsession: x\n## Task\nx\n", false},
		{"bad created", "---\ncreated: yesterday\n---\n", false},
		{"bad quoted value", "---\nproject: \"unterminated\n---\n", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.md)
			if err == nil {
				t.Fatal("no error")
			}
			if got := errors.Is(err, ErrNotHandoff); got != tc.notDoc {
				t.Errorf("errors.Is(%v, ErrNotHandoff) = %v, want %v", err, got, tc.notDoc)
			}
		})
	}
}

// TestParseLenient reads a hand-edited handoff: CRLF, no title, sections
// missing or unknown, extra keys, a "+N more" line.
func TestParseLenient(t *testing.T) {
	md := "---\r\nsession: s1\r\nproject: \"/p q\"\r\nmood: fine\r\ncreated: 2026-03-02T13:00:00+01:00\r\n---\r\n" +
		"## Next steps\r\n- do it\r\n- … +4 more\r\nstray prose\r\n\r\n## Notes\r\n- not a section of ours\r\n" +
		"##   Files modified  \r\n- a.go\r\n- /abs/b.go\r\n-\r\n"
	got, err := Parse(md)
	if err != nil {
		t.Fatal(err)
	}
	want := Doc{Session: "s1", Project: "/p q", CreatedAt: time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC),
		NextSteps: []string{"do it"}, FilesModified: []string{"/p q/a.go", "/abs/b.go", "/p q/"}, Markdown: md,
		Files: []FileChange{{Path: "/p q/a.go", Status: FileModified}, {Path: "/abs/b.go", Status: FileModified}, {Path: "/p q/", Status: FileModified}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %#v\nwant %#v", got, want)
	}
}

func TestParseWithoutFrontmatter(t *testing.T) {
	got, err := Parse("# Handoff\n\n## Task\nFix it\n")
	if err != nil || got.Task != "Fix it" {
		t.Errorf("Parse = %+v, %v", got, err)
	}
}

// FuzzParse: Parse never panics, and what it reads renders and reads back
// to the same document.
func FuzzParse(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join(goldenDir, "*", "handoff.md"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add(Render(bigDoc(), 300, ApproxTokens))
	f.Add("---\nid: \"a\\u0000b\"\ncreated: 2026-01-01T00:00:00.5+02:00\n---\n## Task\n\\\n## Tests run\n- ``x`` — y\n- `` ` `` \n")
	f.Add("## Files modified\n- ./a\n- \\… +1 more\n## Context\n_none_\n")
	f.Add("---\nproject: /p\n---\n## Working set\n- src/: a (b).ts (edited; lines 1-2, 9-), c, d.go (x)\n- r.md\n" +
		"- next, for a: b: x/{y, z}, /abs/{q}, w\n- commands: `a b`, ``c ` d``, x\n- … +2 more\n")
	f.Fuzz(func(t *testing.T, md string) {
		d, err := Parse(md)
		if err != nil || !utf8.ValidString(md) {
			return
		}
		if strings.Contains(d.Project, movedArrow) {
			return // a path with " → " in it reads as a move: not stable, by design
		}
		again, err := Parse(Render(d, 1<<30, ApproxTokens))
		if err != nil {
			t.Fatalf("Parse(Render(Parse(md))): %v", err)
		}
		d.Markdown, again.Markdown = "", ""
		// The Tasks section lists the open items and the latest
		// maxDoneShown done ones, by design: what reads back is those.
		d.Tasks, _ = tasksShown(d.Tasks, -1)
		if !reflect.DeepEqual(normNil(again), normNil(d)) {
			t.Errorf("not stable:\n got %#v\nwant %#v\nfrom %q", again, d, md)
		}
	})
}
