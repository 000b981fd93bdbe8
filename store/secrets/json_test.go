package secrets

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/store/secrets/secretstest"
)

// TestRedactJSON: the strings of a JSON document, keys and values, nested
// and escaped, lose their secrets; the document stays JSON, its numbers
// exact; a document without a secret comes back byte for byte.
func TestRedactJSON(t *testing.T) {
	kinds := secretstest.Kinds()
	gh, aws := kinds[4].Value, kinds[3].Value
	pw := attackValue(7, attackAlnum+"!#*", 18)
	doc := `{"Format":"claude","SessionID":"s-` + gh + `","LastContextTokens":9007199254740993,` +
		`"queued":["deploy with ` + aws + `","the db: \"DB_PASSWORD=` + pw + `\"\nok"],` +
		`"nested":{"` + gh + `":[1,{"x":"postgres://app:` + pw + `@db/x"}]},"password":"` + pw + `"}`
	got, n := testRedactor.RedactJSON(doc)
	if n == 0 || !json.Valid([]byte(got)) {
		t.Fatalf("RedactJSON = %s, %d", got, n)
	}
	for _, s := range []string{gh, aws, pw} {
		if strings.Contains(got, s) {
			t.Errorf("RedactJSON left %q in %s", s, got)
		}
	}
	if !strings.Contains(got, "9007199254740993") {
		t.Errorf("a number lost its precision: %s", got)
	}
	if again, k := testRedactor.RedactJSON(got); again != got || k != 0 {
		t.Errorf("not idempotent: %s -> %s (%d)", got, again, k)
	}
	clean := `{"b": 1, "a": ["x", "y"],  "c": "<tag> & more"}`
	if got, n := testRedactor.RedactJSON(clean); got != clean || n != 0 {
		t.Errorf("RedactJSON(%s) = %s, %d: want it as it was", clean, got, n)
	}
	// Not JSON: redacted as text.
	if got, _ := testRedactor.RedactJSON(`{"x": "` + gh); strings.Contains(got, gh) {
		t.Errorf("broken JSON kept its secret: %s", got)
	}
}

// TestRedactMessageNamesAndIDs: a tool's name and a tool call's id are
// text a transcript holds too.
func TestRedactMessageNamesAndIDs(t *testing.T) {
	gh := secretstest.Kinds()[4].Value
	m := compact.Message{UUID: "u", SessionID: "s", Role: compact.RoleAssistant, Blocks: []compact.Block{
		{Kind: compact.BlockToolUse, ToolName: "mcp__" + gh, ToolID: "toolu_" + gh, Input: `{}`},
		{Kind: compact.BlockToolResult, ToolID: "toolu_" + gh, Text: "ok"},
	}}
	red, text, n := testRedactor.RedactMessage(m)
	b, _ := json.Marshal(red.Blocks)
	if n == 0 || strings.Contains(string(b), gh) || strings.Contains(text, gh) {
		t.Errorf("RedactMessage = %s / %q", b, text)
	}
	if red.Blocks[0].ToolID != red.Blocks[1].ToolID {
		t.Errorf("a tool call and its result no longer share an id: %q, %q", red.Blocks[0].ToolID, red.Blocks[1].ToolID)
	}
}

// TestPlainIDShortcut: ids made of lower-case hex digits and dashes skip
// the scan (plainID). That is sound while every keyword such an id can
// hold belongs to a rule that needs upper case or a long run; a new one
// must be looked at before it joins the list.
func TestPlainIDShortcut(t *testing.T) {
	var r Redactor
	r.load()
	var hexOnly []string
	for _, w := range r.keywords.words {
		if strings.Trim(w, "0123456789abcdef-") == "" {
			hexOnly = append(hexOnly, w)
		}
	}
	known := map[string]bool{"4b1d": true, "a3-": true, "acca": true, "eaaa": true, "eaac": true}
	for _, w := range hexOnly {
		if !known[w] {
			t.Errorf("keyword %q is made of hex digits: check plainID still holds for its rule", w)
		}
	}
	for _, id := range []string{"5eed7a1e-0c0d-4e5a-9b1f-2d3c4b5a6f71", "019a3b2c-4d5e-7f60-8a9b-0c1d2e3f4a5b", "4b1dacca", "eaaa-eaac-a3"} {
		if !plainID(id) {
			t.Errorf("plainID(%q) = false", id)
		}
	}
	for _, id := range []string{"4b1d" + strings.Repeat("a", 38), "AKIA", "sess-1", "x"} {
		if plainID(id) {
			t.Errorf("plainID(%q) = true", id)
		}
	}
}
