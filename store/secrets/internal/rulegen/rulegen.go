package rulegen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/zricethezav/gitleaks/v8/config"
)

// ModulePath is the gitleaks module whose rules ledger uses.
const ModulePath = "github.com/zricethezav/gitleaks/v8"

// Mod is the gitleaks module the build uses: the one go.mod requires (or
// replaces it with).
type Mod struct {
	Version string // v8.28.0
	Dir     string // where its source is, LICENSE among it
}

// Module asks the go command which gitleaks module the build uses: the
// package linked into the generator and the tests is that one.
func Module() (Mod, error) {
	out, err := exec.Command("go", "list", "-m", "-json", ModulePath).Output()
	if err != nil {
		return Mod{}, fmt.Errorf("go list -m %s: %w", ModulePath, err)
	}
	var m struct {
		Mod
		Replace *Mod
	}
	if err := json.Unmarshal(out, &m); err != nil {
		return Mod{}, fmt.Errorf("go list -m %s: %w", ModulePath, err)
	}
	if m.Replace != nil {
		m.Mod = *m.Replace
	}
	if m.Version == "" || m.Dir == "" {
		return Mod{}, fmt.Errorf("go list -m %s: no version or directory (is it downloaded?)", ModulePath)
	}
	return m.Mod, nil
}

// Decode reads gitleaks' default rule set (config.DefaultConfig, TOML).
// gitleaks reads it with viper; go-toml, which viper uses underneath,
// decodes the same (a test of store/secrets checks), without viper's
// globals.
func Decode() (config.ViperConfig, error) { return decode(config.DefaultConfig) }

func decode(text string) (config.ViperConfig, error) {
	var vc config.ViperConfig
	err := toml.Unmarshal([]byte(text), &vc)
	return vc, err
}

// rule and allowlist are store/secrets' ruleSource and allowlistSource:
// gitleaks' rule format, normalised as gitleaks' Translate does.
type rule struct {
	ID, Description, Regex string
	SecretGroup            int
	Entropy                float64
	Keywords, Tags         []string
	Path                   string
	SkipReport             bool
	Required               []string
	Allowlists             []allowlist
}

type allowlist struct {
	Description                        string
	MatchAll                           bool
	RegexTarget                        string
	Regexes, Paths, StopWords, Commits []string
}

// Source returns gitleaks_rules.go, gofmt'ed: gitleaks' default rule set
// from mod (the module the build links) as Go data. The rules are sorted
// by ID, their keywords and stopwords in lower case; a rule's allowlists
// are its own, then the global ones that target it, as gitleaks' Translate
// assembles them. Translate itself checks the set first (every regexp
// compiles, conditions, targets, secret groups), so what it would refuse
// is refused here, not at ledger's first scan.
func Source(mod Mod) ([]byte, error) { return source(mod, config.DefaultConfig) }

// source is Source for a rule set in gitleaks' TOML format.
func source(mod Mod, text string) ([]byte, error) {
	vc, err := decode(text)
	if err != nil {
		return nil, fmt.Errorf("decode gitleaks' rules: %w", err)
	}
	// Translate rewrites parts of what it is given; it gets its own copy.
	check, err := decode(text)
	if err != nil {
		return nil, err
	}
	// Checked first: Translate would read the other set, and count that
	// in a global of gitleaks' that turns off its checks from then on.
	if e := vc.Extend; e.Path != "" || e.URL != "" || e.UseDefault || len(e.DisabledRules) > 0 {
		return nil, fmt.Errorf("gitleaks' rules extend another set")
	}
	if err := translate(&check); err != nil {
		return nil, fmt.Errorf("gitleaks' rules: %w", err)
	}
	license, err := os.ReadFile(filepath.Join(mod.Dir, "LICENSE"))
	if err != nil {
		return nil, fmt.Errorf("gitleaks' licence: %w", err)
	}

	var rules []rule
	byID := map[string]int{}
	for _, vr := range vc.Rules {
		if _, dup := byID[vr.ID]; dup {
			return nil, fmt.Errorf("gitleaks' rules: two rules %s", vr.ID)
		}
		r := rule{ID: vr.ID, Description: vr.Description, Regex: vr.Regex, SecretGroup: vr.SecretGroup,
			Entropy: vr.Entropy, Keywords: lower(vr.Keywords), Tags: vr.Tags, Path: vr.Path, SkipReport: vr.SkipReport}
		for _, req := range vr.Required {
			r.Required = append(r.Required, req.ID)
		}
		lists := vr.Allowlists
		if vr.AllowList != nil {
			lists = append(lists[:len(lists):len(lists)], vr.AllowList)
		}
		for _, a := range lists {
			r.Allowlists = append(r.Allowlists, newAllowlist(a.Description, a.Condition, a.RegexTarget, a.Regexes, a.Paths, a.StopWords, a.Commits))
		}
		byID[vr.ID] = len(rules)
		rules = append(rules, r)
	}
	var global []allowlist
	globals := vc.Allowlists
	if vc.AllowList != nil {
		globals = append(globals[:len(globals):len(globals)], vc.AllowList)
	}
	for _, a := range globals {
		al := newAllowlist(a.Description, a.Condition, a.RegexTarget, a.Regexes, a.Paths, a.StopWords, a.Commits)
		if len(a.TargetRules) == 0 {
			global = append(global, al)
			continue
		}
		for _, id := range a.TargetRules {
			rules[byID[id]].Allowlists = append(rules[byID[id]].Allowlists, al) // Translate checked id
		}
	}
	sort.SliceStable(rules, func(i, j int) bool { return rules[i].ID < rules[j].ID })

	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by genrules (go generate ./store/secrets) from %s %s. DO NOT EDIT.\n\n", ModulePath, mod.Version)
	fmt.Fprintf(&b, "// The rules below are gitleaks' default rule set, config/gitleaks.toml of\n// %s %s, under gitleaks' licence:\n//\n", ModulePath, mod.Version)
	for _, line := range strings.Split(strings.TrimSpace(string(license)), "\n") {
		b.WriteString(strings.TrimRight("// "+line, " ") + "\n")
	}
	b.WriteString("\npackage secrets\n\n")
	fmt.Fprintf(&b, "// gitleaksVersion is the version of gitleaks the rules are from.\nconst gitleaksVersion = %q\n\n", mod.Version)
	b.WriteString("// gitleaksRules are gitleaks' rules, sorted by ID, keywords and stopwords\n" +
		"// in lower case; a rule's allowlists are its own, then the global ones\n" +
		"// that target it.\n")
	b.WriteString("var gitleaksRules = []ruleSource{\n")
	for _, r := range rules {
		writeRule(&b, r)
	}
	b.WriteString("}\n\n// gitleaksAllowlists are gitleaks' global allowlists.\nvar gitleaksAllowlists = []allowlistSource{\n")
	for _, a := range global {
		writeAllowlist(&b, a)
	}
	b.WriteString("}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("gofmt the rules: %w", err)
	}
	return src, nil
}

// translate runs gitleaks' Translate, which panics on a regexp that does
// not compile (regexp.MustCompile), and returns its error or the panic's.
func translate(vc *config.ViperConfig) (err error) {
	defer func() {
		if e := recover(); e != nil {
			err = fmt.Errorf("%v", e)
		}
	}()
	_, err = vc.Translate()
	return err
}

// newAllowlist normalises an allowlist as gitleaks' parseAllowlist does
// (Translate has checked the values): condition AND or && is MatchAll,
// regexTarget "secret" is the default, "".
func newAllowlist(desc, cond, target string, regexes, paths, stopwords, commits []string) allowlist {
	if target == "secret" {
		target = ""
	}
	switch strings.ToUpper(cond) {
	case "AND", "&&":
		return allowlist{desc, true, target, regexes, paths, lower(stopwords), commits}
	}
	return allowlist{desc, false, target, regexes, paths, lower(stopwords), commits}
}

func lower(ss []string) []string {
	var out []string
	for _, s := range ss {
		out = append(out, strings.ToLower(s))
	}
	return out
}

func writeRule(b *bytes.Buffer, r rule) {
	b.WriteString("{\n")
	field(b, "ID", quote(r.ID))
	field(b, "Description", quote(r.Description))
	if r.Regex != "" {
		field(b, "Regex", raw(r.Regex))
	}
	if r.SecretGroup != 0 {
		field(b, "SecretGroup", strconv.Itoa(r.SecretGroup))
	}
	if r.Entropy != 0 {
		field(b, "Entropy", strconv.FormatFloat(r.Entropy, 'g', -1, 64))
	}
	list(b, "Keywords", r.Keywords, quote)
	list(b, "Tags", r.Tags, quote)
	if r.Path != "" {
		field(b, "Path", raw(r.Path))
	}
	if r.SkipReport {
		field(b, "SkipReport", "true")
	}
	list(b, "Required", r.Required, quote)
	if len(r.Allowlists) > 0 {
		b.WriteString("Allowlists: []allowlistSource{\n")
		for _, a := range r.Allowlists {
			writeAllowlist(b, a)
		}
		b.WriteString("},\n")
	}
	b.WriteString("},\n")
}

func writeAllowlist(b *bytes.Buffer, a allowlist) {
	b.WriteString("{\n")
	if a.Description != "" {
		field(b, "Description", quote(a.Description))
	}
	if a.MatchAll {
		field(b, "MatchAll", "true")
	}
	if a.RegexTarget != "" {
		field(b, "RegexTarget", quote(a.RegexTarget))
	}
	list(b, "Regexes", a.Regexes, raw)
	list(b, "Paths", a.Paths, raw)
	list(b, "StopWords", a.StopWords, quote)
	list(b, "Commits", a.Commits, quote)
	b.WriteString("},\n")
}

func field(b *bytes.Buffer, name, value string) {
	b.WriteString(name + ": " + value + ",\n")
}

// list writes a []string field: on one line when short, else one
// element a line.
func list(b *bytes.Buffer, name string, ss []string, lit func(string) string) {
	if len(ss) == 0 {
		return
	}
	var elems []string
	n := 0
	for _, s := range ss {
		elems = append(elems, lit(s))
		n += len(elems[len(elems)-1]) + 2
	}
	if n <= 60 {
		field(b, name, "[]string{"+strings.Join(elems, ", ")+"}")
		return
	}
	b.WriteString(name + ": []string{\n")
	for _, e := range elems {
		b.WriteString(e + ",\n")
	}
	b.WriteString("},\n")
}

func quote(s string) string { return strconv.Quote(s) }

// raw writes a regexp as a raw string when it can, as gitleaks.toml
// writes its regexps (between triple quotes), so that both read the same.
func raw(s string) string {
	if strconv.CanBackquote(s) {
		return "`" + s + "`"
	}
	return strconv.Quote(s)
}
