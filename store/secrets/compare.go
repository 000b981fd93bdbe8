//go:build ledger_gitleaks

package secrets

// The names in this file exist only in builds tagged ledger_gitleaks: the
// tests that compare ledger's rule engine with gitleaks' own detector and
// allowlists. Those tests live in the module of the rule generator
// (store/secrets/internal/rulegen, `go test -tags ledger_gitleaks ./...`
// there), so that ledger's own module requires neither gitleaks nor what
// gitleaks brings (viper, the golang.org/x/exp build it needs); the tag
// keeps these names out of ledger's API and binary.

// Finding is one secret a Redactor finds: the rule's id, the secret, and
// the text the rule matched around it.
type Finding struct{ Kind, Secret, Match string }

// Findings returns the secrets r finds in text, as Redact replaces them.
func (r *Redactor) Findings(text string) []Finding {
	var out []Finding
	for _, f := range r.find(text) {
		out = append(out, Finding{Kind: f.kind, Secret: f.secret, Match: f.match})
	}
	return out
}

// RuleSource is a rule as gitleaks' configuration declares it.
type RuleSource = ruleSource

// AllowlistSource is an allowlist as gitleaks' configuration declares it.
type AllowlistSource = allowlistSource

// OwnRules are ledger's own rules, which it runs beside gitleaks'.
func OwnRules() []RuleSource { return ledgerRules() }

// Allowlists are the compiled allowlists of one of r's rules.
type Allowlists struct {
	Count int
	// Allowed says whether they allow a finding: its secret, the text the
	// rule matched and the line around it.
	Allowed func(secret, match, line string) bool
}

// RuleAllowlists returns the allowlists of each rule r runs, by rule id,
// each rule compiled; the global allowlists are under "".
func (r *Redactor) RuleAllowlists() map[string]Allowlists {
	r.load()
	out := map[string]Allowlists{"": allowlistsOf(r.global)}
	for _, rs := range r.rules {
		rs.ready()
		out[rs.id] = allowlistsOf(rs.rule.Allowlists)
	}
	return out
}

func allowlistsOf(lists []*allowlist) Allowlists {
	return Allowlists{Count: len(lists), Allowed: func(secret, match, line string) bool {
		return allowed(lists, secret, match, line)
	}}
}
