package handoff

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// bigDoc is a handoff of a long, busy session, with multi-byte text
// everywhere a cut could land.
func bigDoc() Doc {
	d := Doc{
		ID: 42, Session: "5b0d9e77-1c2f-4a6b-8e3d-9f4a2c6b1d08", Project: "/home/dev/src/shop", Branch: "chore/vite",
		CreatedAt: time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC), Trigger: "auto",
		Task: strings.Repeat("Migrate the shop — «webpack» → vite, keep every page 🚀 working. ", 12) +
			"\n\nAlso: " + strings.Repeat("fix the 結帳 flow. ", 20),
		Context: "158,000 / 200,000 tokens (79%), claude-opus-4-1; compactions: 3",
	}
	for i := range 60 {
		d.FilesModified = append(d.FilesModified, fmt.Sprintf("/home/dev/src/shop/src/pages/page-%02d/index-ünïcødé.tsx", i))
		d.Decisions = append(d.Decisions, fmt.Sprintf("decision %d: %s", i, strings.Repeat("keep CSS modules — ✓ ", 8)))
		d.TestsRun = append(d.TestsRun, TestRun{Command: fmt.Sprintf("pnpm vitest run src/pages/page-%02d --reporter=verbose", i), Status: TestPassed})
		d.Errors = append(d.Errors, fmt.Sprintf("`make e2e-%d`: make: *** [Makefile:%d: e2e] Error 1 — 😬 %s", i, i, strings.Repeat("x", 80)))
		d.Blockers = append(d.Blockers, fmt.Sprintf("blocked by ticket PAY-%d — the sandbox allow-list ✋", i))
		d.NextSteps = append(d.NextSteps, fmt.Sprintf("step %d: %s", i, strings.Repeat("port the legacy suite → vitest ", 6)))
	}
	return d
}

// Counters a caller might pass: characters, bytes and words.
var counters = map[string]func(string) int{
	"chars/4": ApproxTokens,
	"bytes/3": func(s string) int { return (len(s) + 2) / 3 },
	"words":   func(s string) int { return len(strings.Fields(s)) * 4 / 3 },
}

func TestRenderBudgetSweep(t *testing.T) {
	d := bigDoc()
	for name, count := range counters {
		t.Run(name, func(t *testing.T) {
			step := 50 // every budget from 200 to 4000 for the default counter
			if name != "chars/4" {
				step = 250
			}
			for budget := MinBudget; budget <= 4000; budget += step {
				md := Render(d, budget, count)
				if n := count(md); n > budget {
					t.Errorf("budget %d: %d tokens", budget, n)
				}
				if !utf8.ValidString(md) {
					t.Errorf("budget %d: invalid UTF-8", budget)
				}
				back, err := Parse(md)
				if err != nil {
					t.Fatalf("budget %d: %v", budget, err)
				}
				if !strings.HasPrefix(back.Task, "Migrate the shop") {
					t.Errorf("budget %d: task lost: %q", budget, back.Task)
				}
				if len(back.NextSteps) == 0 || !strings.HasPrefix(back.NextSteps[0], "step 0") {
					t.Errorf("budget %d: next steps lost: %q", budget, back.NextSteps)
				}
				if back.Session != d.Session || !back.CreatedAt.Equal(d.CreatedAt) {
					t.Errorf("budget %d: frontmatter lost", budget)
				}
			}
		})
	}
}

func TestRenderTrimsByPriority(t *testing.T) {
	d := bigDoc()
	// A budget that holds everything but part of the tests: tests give way
	// first, and nothing else does.
	full := Render(d, 1<<30, ApproxTokens)
	md := Render(d, ApproxTokens(full)-100, ApproxTokens)
	back, err := Parse(md)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.TestsRun) == len(d.TestsRun) || len(back.TestsRun) == 0 {
		t.Errorf("tests: %d of %d shown, want some cut", len(back.TestsRun), len(d.TestsRun))
	}
	if !strings.Contains(md, fmt.Sprintf("- … +%d more\n", len(d.TestsRun)-len(back.TestsRun))) {
		t.Error("no +N more line for the tests")
	}
	if !reflect.DeepEqual(back.NextSteps, d.NextSteps) || len(back.FilesModified) != len(d.FilesModified) {
		t.Error("something other than tests gave way")
	}
}

func TestRenderDefaults(t *testing.T) {
	d := bigDoc()
	if got, want := Render(d, 0, nil), Render(d, DefaultBudget, ApproxTokens); got != want {
		t.Error("budget 0 and a nil counter are not DefaultBudget and ApproxTokens")
	}
	r := d.Rendered(0, nil)
	if r.Markdown == "" || r.Tokens != ApproxTokens(r.Markdown) || r.Tokens > DefaultBudget {
		t.Errorf("Rendered: %d tokens", r.Tokens)
	}
}

func TestRenderSections(t *testing.T) {
	md := Render(Doc{}, 0, nil)
	var heads []string
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "## ") {
			heads = append(heads, l[3:])
		}
	}
	if !reflect.DeepEqual(heads, headings[:]) {
		t.Errorf("headings %q, want %q", heads, headings)
	}
	if n := strings.Count(md, "\n_none_\n"); n != int(numSections) {
		t.Errorf("%d empty sections, want %d", n, numSections)
	}
}

// TestRoundTrip: everything the Markdown carries reads back exactly, tricky
// content included.
func TestRoundTrip(t *testing.T) {
	docs := map[string]Doc{
		"big":   bigDoc(),
		"empty": {},
		"tricky": {
			ID: 7, Session: "s:1", Project: "/home/me/my project/", Branch: "feat/#12 \"quotes\"",
			CreatedAt: time.Date(2026, 3, 2, 12, 0, 0, 123456789, time.UTC), Trigger: "manual",
			Task: "# not a heading\n## nor this\n\\ a backslash\n_none_\n\n  indented\n---\nend",
			FilesModified: []string{
				"/home/me/my project/a.go",      // shown relative
				"/home/me/my project/./b.go",    // not shown relative: would read back as b.go
				"/elsewhere/c.go",               // outside
				"relative/d.go",                 // relative to begin with
				"./e.go",                        // relative with ./
				"/home/me/my project/… +3 more", // looks like the more line
				`\f.go`,                         // starts with the escape
			},
			Decisions: []string{"… +2 more", `\escaped`, "", "  spaced  "},
			TestsRun: []TestRun{{"go test ./...", TestPassed}, {"echo `date` && go test", TestFailed},
				{"`x`", ""}, {" lead", TestRunning}, {"", TestPassed}, {"a — b", "weird — status"}},
			Errors:    []string{"`cmd`: boom"},
			Blockers:  []string{"- nested dash"},
			NextSteps: []string{"[in progress] x"},
			Context:   "#1 context",
		},
	}
	for name, d := range docs {
		t.Run(name, func(t *testing.T) {
			md := Render(d, 1<<30, ApproxTokens)
			got, err := Parse(md)
			if err != nil {
				t.Fatal(err)
			}
			if got.Markdown != md {
				t.Error("Parse does not keep the Markdown")
			}
			got.Markdown = ""
			if !reflect.DeepEqual(normNil(carried(got)), normNil(carried(d))) {
				t.Errorf("round trip:\n got %#v\nwant %#v\nmarkdown:\n%s", got, d, md)
			}
		})
	}
}

// normNil treats nil and empty lists alike, as the JSON does.
func normNil(d Doc) Doc {
	for _, p := range []*[]string{&d.FilesModified, &d.Decisions, &d.Errors, &d.Blockers, &d.NextSteps} {
		if len(*p) == 0 {
			*p = nil
		}
	}
	if len(d.TestsRun) == 0 {
		d.TestsRun = nil
	}
	return d
}

func TestShorten(t *testing.T) {
	for _, s := range []string{"", "abc", "héllo wörld", "🚀🚀🚀🚀🚀", "日本語のテキストです", "a b c d e f g h", "x\xffy"} {
		for limit := 0; limit <= 12; limit++ {
			got := shorten(s, limit)
			if utf8.ValidString(s) && !utf8.ValidString(got) {
				t.Errorf("shorten(%q, %d) = %q: cut inside a rune", s, limit, got)
			}
			if limit > 0 && utf8.RuneCountInString(got) > limit {
				t.Errorf("shorten(%q, %d) = %q: too long", s, limit, got)
			}
			if utf8.RuneCountInString(s) <= limit || limit == 0 {
				if got != s {
					t.Errorf("shorten(%q, %d) = %q: changed a short string", s, limit, got)
				}
			} else if !strings.HasSuffix(got, ellipsis) {
				t.Errorf("shorten(%q, %d) = %q: no ellipsis", s, limit, got)
			}
		}
	}
}

func TestCodeSpan(t *testing.T) {
	tests := []struct{ in, want string }{
		{"go test", "`go test`"},
		{"echo `date`", "`` echo `date` ``"},
		{"`x`", "`` `x` ``"},
		{"a``b", "```a``b```"},
		{"", "`  `"},
	}
	for _, tc := range tests {
		if got := codeSpan(tc.in); got != tc.want {
			t.Errorf("codeSpan(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := readTest(codeSpan(tc.in) + " — passed"); got.Command != tc.in || got.Status != "passed" {
			t.Errorf("readTest(codeSpan(%q)) = %#v", tc.in, got)
		}
	}
}
