package secrets

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/zricethezav/gitleaks/v8/config"

	"github.com/agentledger/ledger/store/secrets/internal/rulegen"
)

// defaultRules reads gitleaks' default rule set from gitleaks' own config
// package, for the tests that compare ledger with gitleaks.
func defaultRules() (config.ViperConfig, error) { return rulegen.Decode() }

// gitleaksRule is one of ledger's rules as gitleaks' config.Rule, for
// gitleaks' detector.
func gitleaksRule(t testing.TB, src ruleSource) config.Rule {
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

// TestGitleaksRulesGenerated checks that gitleaks_rules.go is what the
// generator makes of the gitleaks module go.mod requires: upgrading
// gitleaks without `go generate ./store/secrets` fails here.
func TestGitleaksRulesGenerated(t *testing.T) {
	mod, err := rulegen.Module()
	if err != nil {
		t.Fatal(err)
	}
	want, err := rulegen.Source(mod)
	if err != nil {
		t.Fatal(err)
	}
	if gitleaksVersion != mod.Version {
		t.Fatalf("gitleaks_rules.go holds the rules of gitleaks %s, go.mod requires %s: run go generate ./store/secrets", gitleaksVersion, mod.Version)
	}
	got, err := os.ReadFile("gitleaks_rules.go")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		if i >= len(gl) || i >= len(wl) || gl[i] != wl[i] {
			g, w := "(end)", "(end)"
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			t.Fatalf("gitleaks_rules.go is not what gitleaks %s gives (run go generate ./store/secrets): line %d is\n%s\nwant\n%s", mod.Version, i+1, g, w)
		}
	}
}

// TestAllowedAsGitleaks checks ledger's allowlists against gitleaks' own
// (config.Allowlist, from gitleaks' Translate, each validated: regexes
// joined, stopwords in a trie) on values that allowlists are about:
// their stopwords in any case and inside other text, template and
// variable syntaxes, and values of every rule that has an allowlist.
func TestAllowedAsGitleaks(t *testing.T) {
	cfg := gitleaksDefault(t)
	var r Redactor
	r.load()
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
	for _, rs := range r.rules {
		rs.ready()
		var ref []*config.Allowlist
		if gr, ok := cfg.Rules[rs.id]; ok {
			ref = gr.Allowlists
		} else {
			for _, src := range ledgerRules() {
				if src.ID == rs.id {
					ref = gitleaksRule(t, src).Allowlists
				}
			}
		}
		if len(ref) != len(rs.rule.Allowlists) {
			t.Fatalf("rule %s: %d allowlists, gitleaks %d", rs.id, len(rs.rule.Allowlists), len(ref))
		}
		if len(ref) == 0 {
			continue
		}
		for _, v := range values {
			match, line := "api_token = "+v, "\nconfig: api_token = "+v+" # "+rs.id
			if got, want := allowed(rs.rule.Allowlists, v, match, line), gitleaksAllowed(ref, v, match, line); got != want {
				t.Errorf("rule %s allows %q: %v, gitleaks %v", rs.id, v, got, want)
			}
			checked++
		}
	}
	for _, v := range values {
		if got, want := allowed(r.global, v, v, v), gitleaksAllowed(cfg.Allowlists, v, v, v); got != want {
			t.Errorf("global allowlists allow %q: %v, gitleaks %v", v, got, want)
		}
	}
	if checked == 0 || len(r.global) == 0 {
		t.Fatalf("%d rule checks, %d global allowlists: nothing compared", checked, len(r.global))
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
	vc, err := defaultRules()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := vc.Translate()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
