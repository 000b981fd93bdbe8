package secrets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/store/secrets/secretstest"
	"github.com/agentledger/ledger/transcript"
)

// testRedactor is shared by the tests so that the rules compile once.
var testRedactor = New()

// root is the repository's top folder, from this package's.
const root = "../.."

// TestRedactSeeded checks every seeded secret is found, with its kind, and
// that nothing of it is left in the redacted blocks or search text.
func TestRedactSeeded(t *testing.T) {
	msgs, other, seeds := secretstest.Seeded(t, root)
	var out bytes.Buffer
	for _, m := range msgs {
		red, text, _ := testRedactor.RedactMessage(m)
		b, err := json.Marshal(red.Blocks)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(b)
		out.WriteString(text)
		if text != red.SearchText() {
			t.Errorf("RedactMessage's text is not the SearchText of its message")
		}
	}
	for _, s := range other {
		r, _ := testRedactor.Redact(s)
		out.WriteString(r)
	}
	for _, s := range seeds {
		if bytes.Contains(out.Bytes(), []byte(s.Value)) {
			t.Errorf("seeded %s %.20s... not redacted", s.Kind, s.Value)
		}
		if !bytes.Contains(out.Bytes(), []byte("[REDACTED:"+s.Kind+"]")) {
			t.Errorf("no [REDACTED:%s] in the redacted messages", s.Kind)
		}
	}
}

func TestRedactEdgeCases(t *testing.T) {
	const key = "AKIAZ7VRSQ5TJN2WXYP3" // an AWS access key id shape, not a key
	tests := []struct {
		name, in, want string
	}{
		{"kind kept, rest searchable", "deploy with " + key + " today", "deploy with [REDACTED:aws-access-token] today"},
		{"every occurrence", key + " and again " + key, "[REDACTED:aws-access-token] and again [REDACTED:aws-access-token]"},
		{"prose punctuation", "the key is " + key + ".", "the key is [REDACTED:aws-access-token]."},
		{"url password", "psql postgres://app:Zq8vLw2pXr@db:5432/x", "psql postgres://app:[REDACTED:url-credentials]@db:5432/x"},
		{"short url password only in the url", "postgres://app:dev7@db/x; dev7 is the tag", "postgres://app:[REDACTED:url-credentials]@db/x; dev7 is the tag"},
		{"url placeholder", "postgres://user:password@localhost/db", "postgres://user:password@localhost/db"},
		{"url variable", "https://bot:${TOKEN}@github.com/o/r", "https://bot:${TOKEN}@github.com/o/r"},
		{"url without password", "ssh://git@github.com/o/r and https://github.com:443/x", "ssh://git@github.com/o/r and https://github.com:443/x"},
		{"already redacted", "API_TOKEN=[REDACTED:generic-api-key]", "API_TOKEN=[REDACTED:generic-api-key]"},
		{"low entropy", "password = aaaaaaaaaaaaaaaa", "password = aaaaaaaaaaaaaaaa"},
		{"code", "func (s *Store) Token(ctx context.Context) (string, error) { return s.token, nil }",
			"func (s *Store) Token(ctx context.Context) (string, error) { return s.token, nil }"},
		{"escaped newline after a secret", `{"new_string":"A=1\nAWS_SECRET_ACCESS_KEY=Hq3v9Xz0bLr7Tm2Kc5Wn8Yp1Gd4Fs6Ju0Ei3Oa9B\nB=2"}`,
			`{"new_string":"A=1\nAWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret-access-key]\nB=2"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := testRedactor.Redact(tc.in)
			if got != tc.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
			again, n := testRedactor.Redact(got)
			if again != got || n != 0 {
				t.Errorf("Redact is not idempotent: %q -> %q (%d)", got, again, n)
			}
		})
	}
}

// TestRedactMessageKeepsJSON checks a secret in a tool input (raw JSON)
// leaves valid JSON, and that the caller's message is not changed.
func TestRedactMessageKeepsJSON(t *testing.T) {
	input := `{"command":"curl -H \"Authorization: Bearer ghp_Zq8vLw2pXr0Tm2Kc5Wn8Yp1Gd4Fs6Ju0Ei3O\" https://api.github.com/user"}`
	m := compact.Message{UUID: "u", SessionID: "s", Role: compact.RoleAssistant, Blocks: []compact.Block{
		{Kind: compact.BlockText, Text: "Checking the token."},
		{Kind: compact.BlockToolUse, ToolName: "Bash", Input: input},
	}}
	red, text, n := testRedactor.RedactMessage(m)
	if n == 0 || strings.Contains(text, "ghp_") || !json.Valid([]byte(red.Blocks[1].Input)) {
		t.Errorf("RedactMessage = %d, %q, input %s", n, text, red.Blocks[1].Input)
	}
	if m.Blocks[1].Input != input {
		t.Error("RedactMessage changed the caller's message")
	}

	// A file written through a tool input has its quotes escaped; the
	// assignment is still seen.
	const key = "Zq8vLw2pXr0Tm2Kc5Wn8Yp1Gd4Fs6Ju"
	write := `{"file_path":"/src/app/config.js","content":"export const apiKey = \"` + key + `\";\n"}`
	m.Blocks = []compact.Block{{Kind: compact.BlockToolUse, ToolName: "Write", Input: write}}
	red, text, _ = testRedactor.RedactMessage(m)
	if strings.Contains(red.Blocks[0].Input, key) || strings.Contains(text, key) || !json.Valid([]byte(red.Blocks[0].Input)) {
		t.Errorf("escaped assignment not redacted: %s", red.Blocks[0].Input)
	}
}

// TestRedactCorpusFalsePositives counts what the rules find in the real
// corpus, whose authors removed their secrets: nearly every finding is a
// false positive. The findings are logged for inspection (go test -v).
func TestRedactCorpusFalsePositives(t *testing.T) {
	dir := secretstest.Corpus(root)
	if dir == "" {
		if os.Getenv("LEDGER_REQUIRE_CORPUS") != "" {
			t.Fatal("corpus not found (LEDGER_REQUIRE_CORPUS is set)")
		}
		t.Skip("corpus not found: set LEDGER_CORPUS to run this test")
	}
	msgs := secretstest.CorpusMessages(t, dir)
	byKind := map[string]int{}
	size := 0
	for _, m := range msgs {
		// As ingest scans a message: its search text and decoded inputs.
		text := m.SearchText() + decodedInputs(m)
		size += len(text)
		for _, f := range testRedactor.find(text) {
			byKind[f.kind]++
			i := max(0, strings.Index(text, f.match))
			t.Logf("%s: %q in %q", f.kind, f.secret, text[max(0, i-60):min(len(text), i+len(f.match)+20)])
		}
	}
	kinds := make([]string, 0, len(byKind))
	n := 0
	for k, c := range byKind {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, c))
		n += c
	}
	sort.Strings(kinds)
	t.Logf("corpus: %d messages, %.1f MB of text: %d findings %v", len(msgs), float64(size)/1e6, n, kinds)
	// Inspected by hand: see docs/reliability.md. More than a handful means a rule
	// or the engine got noisier.
	if n > 0 {
		t.Errorf("%d findings in the sanitized corpus, want none (docs/reliability.md: 0 false positives on the real corpus)", n)
	}
}

func TestMaxMatchBytes(t *testing.T) {
	tests := []struct {
		re   string
		want int
	}{
		{`abc`, 3},
		{`a{2,5}`, 5},
		{`[a-z]+`, -1},
		{`x*`, -1},
		{`(?i)k`, 3}, // K, k and the Kelvin sign
		{`\b(AKIA[A-Z2-7]{16})\b`, 20},
		{`.`, 4},
		{`[^\s]{2}`, 8},
		{`(?:ab|cde)?f$`, 4},
	}
	for _, tc := range tests {
		if got, err := maxMatchBytes(tc.re); err != nil || got != tc.want {
			t.Errorf("maxMatchBytes(%q) = %d, %v; want %d", tc.re, got, err, tc.want)
		}
	}
}

// TestEveryRuleCompiles compiles every rule (find compiles a rule on its
// first keyword), and checks the secrets in what it compiles are not
// compiled by merely loading.
func TestEveryRuleCompiles(t *testing.T) {
	var r Redactor
	r.load()
	for i := range r.rules {
		if r.rules[i].rule.Regex != nil {
			t.Fatalf("rule %s compiled before its first use", r.rules[i].id)
		}
	}
	for i := range r.rules {
		rs := r.rules[i]
		rs.ready()
		if rs.rule.Regex == nil || rs.before <= 0 || rs.after <= 0 {
			t.Errorf("rule %s: regexp %v, window %d..%d", rs.id, rs.rule.Regex, rs.before, rs.after)
		}
		if _, ok := probes[rs.id]; ok != (rs.probe != nil) {
			t.Errorf("rule %s: probe %v", rs.id, rs.probe)
		}
	}
	if len(r.rules) < 200 {
		t.Errorf("%d rules, want the ~210 of gitleaks' that read text, and ledger's", len(r.rules))
	}
	for id := range probes {
		found := false
		for i := range r.rules {
			found = found || r.rules[i].id == id
		}
		if !found {
			t.Errorf("probe for %s, a rule that is not there", id)
		}
	}
}

// BenchmarkRedact measures the scan of generated transcript text (MB/s):
// the cost ingest pays per message.
func BenchmarkRedact(b *testing.B) {
	var buf bytes.Buffer
	if err := transcript.Generate(&buf, transcript.GenOptions{Seed: 3, Messages: 1000}); err != nil {
		b.Fatal(err)
	}
	texts := secretstest.Texts(b, &buf)
	size := 0
	for _, s := range texts {
		size += len(s)
	}
	testRedactor.load()
	b.SetBytes(int64(size))
	b.ResetTimer()
	for b.Loop() {
		for _, s := range texts {
			testRedactor.Redact(s)
		}
	}
}

// BenchmarkRedactHard measures texts that defeat the engine's shortcuts: a
// long token full of a keyword, a base64 blob, minified JSON dense with
// assignments. They must stay linear.
func BenchmarkRedactHard(b *testing.B) {
	rnd := rand.New(rand.NewPCG(1, 2))
	const b64 = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/"
	random := func(n int) string {
		s := make([]byte, n)
		for i := range s {
			s[i] = b64[rnd.IntN(len(b64))]
		}
		return string(s)
	}
	var minified strings.Builder
	for i := 0; minified.Len() < 1<<20; i++ {
		fmt.Fprintf(&minified, `{"id":%d,"key":"item-%d","token":false,"name":"n%d"},`, i, i, i)
	}
	for _, tc := range []struct{ name, text string }{
		{"long-token", strings.Repeat("eyJ", 1<<18)},
		{"base64", random(1 << 20)},
		{"minified-json", minified.String()},
	} {
		b.Run(tc.name, func(b *testing.B) {
			testRedactor.load()
			b.SetBytes(int64(len(tc.text)))
			for b.Loop() {
				testRedactor.Redact(tc.text)
			}
		})
	}
}

// BenchmarkLoadSecretRules measures compiling the rules: what the first
// write of a process pays, and what read-only commands must not.
func BenchmarkLoadSecretRules(b *testing.B) {
	for b.Loop() {
		var r Redactor
		r.load()
	}
}
