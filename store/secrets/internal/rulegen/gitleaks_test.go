//go:build ledger_gitleaks

package rulegen_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"

	"github.com/agentledger/ledger/store/secrets"
	"github.com/agentledger/ledger/store/secrets/internal/rulegen"
	"github.com/agentledger/ledger/store/secrets/secretstest"
	"github.com/agentledger/ledger/transcript"
)

// These tests compare ledger's secret engine (store/secrets) with gitleaks'
// own detector, allowlists and configuration reader. They need the names
// store/secrets has only in builds tagged ledger_gitleaks: run them with
// go test -tags ledger_gitleaks ./... in this module (.ci/run does).

func init() { compared = true }

// redactor is shared by the tests so that the rules compile once.
var redactor = secrets.New()

// gitleaksRule is one of ledger's rules as gitleaks' config.Rule, for
// gitleaks' detector.
func gitleaksRule(t testing.TB, src secrets.RuleSource) config.Rule {
	t.Helper()
	r := config.Rule{RuleID: src.ID, Description: src.Description, Regex: regexp.MustCompile(src.Regex),
		SecretGroup: src.SecretGroup, Entropy: src.Entropy, Keywords: src.Keywords, Tags: src.Tags}
	for _, a := range src.Allowlists {
		al := &config.Allowlist{Description: a.Description, RegexTarget: a.RegexTarget, StopWords: a.StopWords, Commits: a.Commits}
		if a.MatchAll {
			al.MatchCondition = config.AllowlistMatchAnd
		}
		for _, s := range a.Regexes {
			al.Regexes = append(al.Regexes, regexp.MustCompile(s))
		}
		for _, s := range a.Paths {
			al.Paths = append(al.Paths, regexp.MustCompile(s))
		}
		r.Allowlists = append(r.Allowlists, al)
	}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestAllowedAsGitleaks checks ledger's allowlists against gitleaks' own
// (config.Allowlist, from gitleaks' Translate, each validated: regexes
// joined, stopwords in a trie) on values that allowlists are about:
// their stopwords in any case and inside other text, template and
// variable syntaxes, and values of every rule that has an allowlist.
func TestAllowedAsGitleaks(t *testing.T) {
	cfg := gitleaksDefault(t)
	lists := secrets.New().RuleAllowlists()
	own := map[string]secrets.RuleSource{}
	for _, src := range secrets.OwnRules() {
		own[src.ID] = src
	}
	values := []string{
		"true", "FALSE", "null", "Null", "nullable", "truely", "aaaa", "AAAA", "****", "....", "abab",
		"$1", "${2}", "$FOO_BAR", "$Foo_Bar", "$foo", "${FOO}", "${Foo}", "{{ .Values.token }}",
		"${{ secrets.GITHUB_TOKEN }}", "${{ env.Api_Key }}", "%APPDATA%", "%Mixed%", "%s", "%-d", "{0}", "{12}",
		"@TOKEN@", "@Token@", "/Users/Bob/src/app", "/users/bob/x", "/home/dev/.env", "/HOME/dev/x",
		"ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "AKIAIOSFODNN7EXAMPLE", "xoxb-not-a-real-token",
		"changeme", "<password>", "hunter2hunter2", "os.environ[DB]", "config.db.password", "8080", "1.2.3",
		"Zq8vLw2pXr0Tm2Kc5Wn8Yp1Gd4Fs6Ju",
	}
	for _, a := range cfg.Allowlists {
		values = append(values, a.StopWords...)
	}
	for _, rule := range cfg.Rules {
		for _, a := range rule.Allowlists {
			for i, w := range a.StopWords {
				if i%7 == 0 { // the generic rule has 1,500
					values = append(values, w, strings.ToUpper(w), "Xy9"+w+"_Q1")
				}
			}
		}
	}
	checked := 0
	for id, al := range lists {
		if id == "" {
			continue
		}
		var ref []*config.Allowlist
		if gr, ok := cfg.Rules[id]; ok {
			ref = gr.Allowlists
		} else if src, ok := own[id]; ok {
			ref = gitleaksRule(t, src).Allowlists
		} else {
			t.Fatalf("rule %s is neither gitleaks' nor ledger's", id)
		}
		if len(ref) != al.Count {
			t.Fatalf("rule %s: %d allowlists, gitleaks %d", id, al.Count, len(ref))
		}
		if len(ref) == 0 {
			continue
		}
		for _, v := range values {
			match, line := "api_token = "+v, "\nconfig: api_token = "+v+" # "+id
			if got, want := al.Allowed(v, match, line), gitleaksAllowed(ref, v, match, line); got != want {
				t.Errorf("rule %s allows %q: %v, gitleaks %v", id, v, got, want)
			}
			checked++
		}
	}
	global := lists[""]
	for _, v := range values {
		if got, want := global.Allowed(v, v, v), gitleaksAllowed(cfg.Allowlists, v, v, v); got != want {
			t.Errorf("global allowlists allow %q: %v, gitleaks %v", v, got, want)
		}
	}
	if checked == 0 || global.Count == 0 {
		t.Fatalf("%d rule checks, %d global allowlists: nothing compared", checked, global.Count)
	}
}

// gitleaksAllowed is gitleaks' checkFindingAllowed (detect, unexported)
// for a finding in text, with gitleaks' own allowlist methods.
func gitleaksAllowed(lists []*config.Allowlist, secret, match, line string) bool {
	for _, a := range lists {
		target := secret
		switch a.RegexTarget {
		case "match":
			target = match
		case "line":
			target = line
		}
		regexAllowed := a.RegexAllowed(target)
		stopword, _ := a.ContainsStopWord(secret)
		if a.MatchCondition != config.AllowlistMatchAnd {
			if regexAllowed || stopword {
				return true
			}
			continue
		}
		var checks []bool
		if len(a.Commits) > 0 {
			ok, _ := a.CommitAllowed("")
			checks = append(checks, ok)
		}
		if len(a.Paths) > 0 {
			checks = append(checks, a.PathAllowed(""))
		}
		if len(a.Regexes) > 0 {
			checks = append(checks, regexAllowed)
		}
		if len(a.StopWords) > 0 {
			checks = append(checks, stopword)
		}
		all := true
		for _, c := range checks {
			all = all && c
		}
		if all {
			return true
		}
	}
	return false
}

// gitleaksDefault is gitleaks' default rule set, as gitleaks translates it.
func gitleaksDefault(t testing.TB) config.Config {
	t.Helper()
	vc, err := rulegen.Decode()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := vc.Translate()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// referenceFindings runs gitleaks' own detector over text, with the rules
// ledger adds, and returns "rule secret" pairs as ledger reports them.
func referenceFindings(t testing.TB, d *detect.Detector, text string) []string {
	var out []string
	for _, f := range d.DetectString(text) {
		s := f.Secret
		for strings.HasSuffix(s, `\n`) || strings.HasSuffix(s, `\r`) {
			s = s[:len(s)-2]
		}
		if s != "" {
			out = append(out, f.RuleID+" "+s)
		}
	}
	return out
}

func referenceDetector(t testing.TB) *detect.Detector {
	t.Helper()
	cfg := gitleaksDefault(t)
	for _, src := range secrets.OwnRules() {
		r := gitleaksRule(t, src)
		cfg.Rules[r.RuleID] = r
		for _, k := range r.Keywords {
			cfg.Keywords[k] = struct{}{}
		}
	}
	d := detect.NewDetector(cfg)
	d.IgnoreGitleaksAllow = true
	return d
}

// fidelityTexts are texts to compare ledger's engine with gitleaks' on:
// the seeded transcript's messages, a generated transcript, and the real
// corpus when it is there.
func fidelityTexts(t testing.TB) []string {
	t.Helper()
	msgs, other, seeds := secretstest.Seeded(t, root)
	texts := other
	for _, m := range msgs {
		texts = append(texts, m.SearchText())
	}
	var buf bytes.Buffer
	if err := transcript.Generate(&buf, transcript.GenOptions{Seed: 7, Messages: 600}); err != nil {
		t.Fatal(err)
	}
	texts = append(texts, secretstest.Texts(t, &buf)...)
	// Each seeded secret in the syntaxes transcripts show it in.
	for _, sd := range seeds {
		for _, form := range []string{
			"KEY = \"%s\"", "{\"api_key\": \"%s\"}", "export SECRET_TOKEN=%s\n", "token: %s\n",
			"the key is %s.", "| prod | %s |", "Authorization: Bearer %s", "curl -H 'X-Api-Key: %s' https://x",
			`{"command":"echo %s\nnext"}`, "password=%s;", "<key>%s</key>",
		} {
			texts = append(texts, fmt.Sprintf(form, sd.Value))
		}
	}
	texts = append(texts, assignments(1000)...)
	if dir := secretstest.Corpus(root); dir != "" {
		for _, m := range secretstest.CorpusMessages(t, dir) {
			texts = append(texts, m.SearchText())
		}
	}
	return texts
}

// assignments are random values, of random length and alphabet, assigned
// to names like the generic rule's in the syntaxes of code, config and
// prose: the shortcuts of the engine (probe, operator and entropy checks)
// must keep every finding gitleaks makes.
func assignments(n int) []string {
	rnd := rand.New(rand.NewPCG(11, 13))
	names := []string{"api_key", "API_TOKEN", "secret", "db_password", "authToken", "access-key", "client.secret",
		"x-api-key", "passwd", "credentials", "my_key_2", "token"}
	ops := []string{"=", ": ", " = ", ":=", " => ", "||", "?=", ", ", ":\n  ", "=\"", ": '", "= `", "::="}
	alphabets := []string{"abcdef0123456789", "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", "abc123._-="}
	ends := []string{"", "\n", "\"", "'", ";", " ", ".", ",", ")", "\\n"}
	var out []string
	for range n {
		al := alphabets[rnd.IntN(len(alphabets))]
		v := make([]byte, 6+rnd.IntN(50))
		for i := range v {
			v[i] = al[rnd.IntN(len(al))]
		}
		out = append(out, names[rnd.IntN(len(names))]+ops[rnd.IntN(len(ops))]+string(v)+ends[rnd.IntN(len(ends))])
	}
	return append(out, strings.Join(out, "\n"))
}

// TestRedactMatchesGitleaks checks that ledger's windowed engine finds
// every secret gitleaks' detector finds in the same texts, with the same
// kind. (Ledger may find more: its prose terminators.)
func TestRedactMatchesGitleaks(t *testing.T) {
	ref := referenceDetector(t)
	texts := fidelityTexts(t)
	own := map[string]bool{}
	for _, r := range secrets.OwnRules() {
		own[r.ID] = true
	}
	total, extra := 0, 0
	for _, text := range texts {
		// gitleaks reports a secret once per rule that finds it; ledger
		// once, under the most specific of those rules.
		want := map[string]map[string]bool{}
		for _, f := range referenceFindings(t, ref, text) {
			kind, secret, _ := strings.Cut(f, " ")
			if want[secret] == nil {
				want[secret] = map[string]bool{}
			}
			want[secret][kind] = true
		}
		got := map[string]string{}
		for _, f := range redactor.Findings(text) {
			got[f.Secret] = f.Kind
		}
		for secret, kinds := range want {
			total++
			kind, ok := got[secret]
			if !ok {
				// gitleaks reports a generic finding beside a specific one
				// whose secret holds it; ledger does not.
				for g, k := range got {
					if kinds["generic-api-key"] && strings.Contains(g, secret) {
						ok, kind = true, "generic-api-key"
					}
					// Likewise the body of a whole private key, which
					// ledger's truncated-key rule reads too.
					if kinds["private-key-truncated"] && k == "private-key" && strings.Contains(g, secret) {
						ok, kind = true, "private-key-truncated"
					}
				}
			}
			switch {
			case !ok:
				t.Errorf("gitleaks finds %v %q, ledger does not, in %.200q", kinds, secret, text)
			case kinds["generic-api-key"] && own[kind]:
				// One of ledger's own rules names what gitleaks calls generic
				// (a password, an Azure account key).
			case !kinds[kind]:
				t.Errorf("ledger names %q %s, gitleaks %v, in %.200q", secret, kind, kinds, text)
			}
		}
		for secret, kind := range got {
			if want[secret] == nil {
				extra++
				t.Logf("only ledger finds %s %.30q... in %.80q", kind, secret, text)
			}
		}
	}
	if total == 0 {
		t.Fatal("gitleaks found nothing: the comparison proves nothing")
	}
	t.Logf("%d texts: gitleaks finds %d secrets, all found by ledger under one of gitleaks' kinds; ledger finds %d more", len(texts), total, extra)
}

// TestSecretRulesDecode checks that go-toml reads gitleaks' rule set as
// the viper gitleaks uses does.
func TestSecretRulesDecode(t *testing.T) {
	got, err := rulegen.Decode()
	if err != nil {
		t.Fatal(err)
	}
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		t.Fatal(err)
	}
	var want config.ViperConfig
	if err := v.Unmarshal(&want); err != nil {
		t.Fatal(err)
	}
	if len(got.Rules) < 200 || !reflect.DeepEqual(got, want) {
		t.Errorf("go-toml and viper decode gitleaks' rules differently (%d rules, %d)", len(got.Rules), len(want.Rules))
	}
}
