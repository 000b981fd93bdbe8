package store

import (
	"strings"
	"testing"
)

// show writes a snippet's marks as [ and ] for reading.
func show(s string) string {
	return strings.NewReplacer(MarkStart, "[", MarkEnd, "]").Replace(s)
}

func TestSnippet(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("filler words here. ", 200)
	cases := []struct {
		name, text, query, want string
	}{
		{"a phrase is marked as one", "we edited pkg/auth/session_store.go today", "pkg/auth/session_store.go",
			"we edited [pkg/auth/session_store.go] today"},
		{"words of a phrase elsewhere are not marked", "the pkg and the go tool; see pkg/auth/session_store.go", "pkg/auth/session_store.go",
			"the pkg and the go tool; see [pkg/auth/session_store.go]"},
		{"case and diacritics fold both ways", "Le Café est prêt, le cafe aussi", "cafe PRET",
			"Le [Café] est [prêt], le [cafe] aussi"},
		{"a query with diacritics", "le cafe noir", "café", "le [cafe] noir"},
		{"a prefix", "the reservation and reserve, not preserve", "reserv*",
			"the [reservation] and [reserve], not preserve"},
		{"a whole word only", "authz is not auth", "auth", "authz is not [auth]"},
		{"the window with the most terms", long + "timeout alone. " + long + "timeout and retry together. " + long,
			"timeout retry", "…words here. filler words here. filler words here. [timeout] and [retry] together. filler words here. filler words here. filler words here. filler words here…"},
		{"cut at the start and the end", long + "the needle is here " + long, "needle",
			"…here. filler words here. filler words here. the [needle] is here filler words here. filler words here. filler words here. filler words here. filler…"},
		{"no match: the start", "nothing to see " + long, "absent", "nothing to see filler words here. filler words here. filler words here. filler words here. filler words here. filler words here. filler words here…"},
		{"a whole short text", "just this", "this", "just [this]"},
		{"what comes before the first word", "</tag> ignore this", "ignore", "</tag> [ignore] this"},
		{"no words", "!!! ---", "x", ""},
	}
	for _, c := range cases {
		got := show(snippet(c.text, ParseQuery(c.query).terms(), snippetWords))
		if got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// TestSnippetOfALongText checks a match near the start of a long text:
// the snippet is cut after its window.
func TestSnippetOfALongText(t *testing.T) {
	t.Parallel()
	text := "the flaky deadline test " + strings.Repeat("x ", 500_000)
	got := show(snippet(text, ParseQuery("deadline").terms(), snippetWords))
	if !strings.HasPrefix(got, "the flaky [deadline] test x x") || !strings.HasSuffix(got, "…") {
		t.Errorf("snippet = %q", got)
	}
}
