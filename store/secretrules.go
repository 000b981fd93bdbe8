package store

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/logging"
	"github.com/zricethezav/gitleaks/v8/regexp"
)

// Redactor finds secrets with gitleaks' default rule set (the ~220
// provider rules secret scanners use, with their entropy thresholds,
// allowlists and stopwords) plus the few of ledger's own in ledgerRules.
// It is safe for concurrent use.
//
// The rules are compiled on the first text to scan, once per process:
// compiling costs ~30 ms, too much for the commands that run at every
// agent session start (version, resume, search), which never scan.
//
// The rules are gitleaks', the engine is ledger's. gitleaks gates a rule on
// its keywords appearing anywhere in a text, then runs the rule's regexp
// over all of it. Transcripts are full of the generic rule's keywords (key,
// token, auth, api, ...), and Go's regexp runs that rule at ~1 MB/s: it
// would make ingest 20 times slower. Here a rule runs only on windows
// around the occurrences of its own keywords (a rule's match contains its
// keyword), and the rules whose keywords are common words first check, at
// the occurrence, a cheap anchored probe that every match passes. Inside a
// window a rule decides as in gitleaks (detect.Detector.detectRule): its
// regexp, secret group, entropy, then the global and the rule's
// allowlists. A test checks that both find the same secrets. (gitleaks'
// detect package is not imported: its dependencies, archive readers
// among them, cost ~2 ms at every start of the binary.)
type Redactor struct {
	once     sync.Once
	loaded   atomic.Bool
	rules    []ruleScan
	global   []*config.Allowlist
	keywords keywordIndex
	byKW     [][]int // rules (indexes into rules) by keyword number
}

// ruleScan is one rule as the Redactor runs it.
type ruleScan struct {
	rule config.Rule
	// probe, when set, must match at a keyword occurrence for a window to
	// be scanned there; minToken, opWithin and near are cheaper checks
	// made first (see probeSpec).
	probe    *regexp.Regexp
	minToken int
	opWithin int // a semi-generic rule's operator starts this close after the keyword
	near     []string
	// before and after bound the window around an occurrence (after counts
	// from the end of the keyword, or of the probe match); lineSlack is
	// how far the window may grow to reach a line's start and end.
	before, after, lineSlack int
}

// secrets is the process's Redactor: every store shares its compiled rules.
var secrets Redactor

// SecretRulesLoaded reports whether this process has compiled the secret
// rules. Commands that only read (version, search, resume) never do.
func SecretRulesLoaded() bool { return secrets.loaded.Load() }

// Window sizes around a keyword occurrence. A rule's match starts at most
// ~90 bytes before its keyword (gitleaks' semi-generic rules allow a
// 50-character prefix, then the name, then the assignment) and its bounded
// parts end within a few hundred bytes after; unbounded ones (JWTs, base64)
// are kept whole by never cutting a window inside a token.
const (
	windowBefore = 512
	windowAfter  = 1024
	lineSlack    = 1024
)

// semiGenericPrefix starts the regexes gitleaks builds for "a name like
// this assigned a value like that" rules. It only widens the match to the
// left, and it is what makes them slow.
const semiGenericPrefix = `(?i)[\w.-]{0,50}?`

// probeSpec is the anchored check of a rule whose keywords are common in
// transcripts (key, token, ey, s., sk, test_, ://): a necessary condition
// at a keyword occurrence for the rule to match there.
type probeSpec struct {
	// re must match at the keyword; "derive" means the rule's own regex
	// without semiGenericPrefix, exact for semi-generic rules whose name
	// alternatives each begin with one of their keywords.
	re string
	// minToken, when set, is the least length of the token (the run of
	// bytes up to a space or quote) that starts at the keyword: a cheap
	// check before the regex.
	minToken int
	// near, when set, lists strings one of which must follow the keyword
	// within the window (a curl command's -u or -H).
	near []string
}

var probes = map[string]probeSpec{
	"generic-api-key":                    {re: "derive"},
	"hashicorp-tf-password":              {re: "derive"},
	"jwt":                                {re: `^ey[a-zA-Z0-9]{17,}\.ey`, minToken: 22},
	"vault-service-token":                {re: `^(?:hvs\.[\w-]{90}|s\.[a-zA-Z0-9]{24})`, minToken: 26},
	"lob-api-key":                        {re: `^(?i)(?:live|test)_[a-f0-9]{35}`, minToken: 40},
	"lob-pub-api-key":                    {re: `^(?i)(?:(?:live|test)_pub|_pub)_[a-f0-9]{31}`, minToken: 36},
	"gocardless-api-token":               {re: `^(?i)(?:gocardless|live_[a-z0-9\-_=]{40})`},
	"authress-service-client-access-key": {re: `^(?:sc|ext|scauth|authress)_(?i)[a-z0-9]{5,30}\.[a-z0-9]{4,6}\.`, minToken: 13},
	"sendgrid-api-token":                 {re: `^(?i)sg\.[a-z0-9=_\-\.]{66}`, minToken: 69},
	"twilio-api-key":                     {re: `^SK[0-9a-fA-F]{32}`, minToken: 34},
	"octopus-deploy-api-key":             {re: `^API-[A-Z0-9]{26}`, minToken: 30},
	"freemius-secret-key":                {re: `^(?i)secret_key["']\s*=>`},
	"curl-auth-user":                     {re: `^(?i)curl`, near: []string{"-u"}},
	"curl-auth-header":                   {re: `^(?i)curl`, near: []string{"-H", "--header"}},
	"url-credentials":                    {re: `^://[^\s:@/?#'"\x60<>\\]+:[^\s@/?#'"\x60<>\\]+@`},
}

// semiGenericOperator follows the name in every semi-generic rule: up to
// 20 name characters, up to 3 spaces or quotes, then the operator.
const semiGenericOperator = `(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)`

// ledgerRules are what gitleaks' default set misses, in its rule format:
//
//   - url-credentials: a password in a URL's userinfo
//     (postgres://app:s3cret@db, https://x-access-token:ghs_...@github.com).
//     gitleaks has only vendor-specific URL rules. Placeholders (user:pass,
//     ${PASSWORD}, ****) are allowed.
//   - aws-secret-access-key: the 40-character secret key assigned to an
//     aws_secret_access_key name. gitleaks finds it only as a
//     generic-api-key; this keeps the kind.
func ledgerRules() ([]config.Rule, error) {
	placeholders := &config.Allowlist{
		Description: "placeholders",
		Regexes: []*regexp.Regexp{
			regexp.MustCompile(`(?i)^(?:\*+|x+|\.+|<[^>]*>|\{+[^}]*\}+|\$\{?[a-z_][a-z0-9_]*\}?|%[a-z_]+%|pass|passwd|password|pwd|secret|changeme)$`),
		},
	}
	if err := placeholders.Validate(); err != nil {
		return nil, err
	}
	return []config.Rule{
		{
			RuleID:      "url-credentials",
			Description: "A password in the userinfo of a URL.",
			Regex:       regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://[^\s:@/?#'"\x60<>\\]+:([^\s@/?#'"\x60<>\\]+)@[a-z0-9\[]`),
			SecretGroup: 1,
			Keywords:    []string{"://"},
			Allowlists:  []*config.Allowlist{placeholders},
		},
		{
			RuleID:      "aws-secret-access-key",
			Description: "An AWS secret access key assigned to its usual name.",
			Regex:       regexp.MustCompile(`(?i)aws_?secret_?(?:access_?)?key["']?\s{0,5}(?:=|:|:=|=>)\s{0,5}["']?([a-z0-9/+]{40})(?:[^a-z0-9/+=]|$)`),
			SecretGroup: 1,
			Entropy:     3.5,
			Keywords:    []string{"aws_secret", "awssecret", "secret_access_key", "secretaccesskey"},
			Allowlists:  []*config.Allowlist{placeholders},
		},
	}, nil
}

// gitleaksTerminator ends most of gitleaks' provider rules: a secret must
// be followed by a quote, a space, a semicolon, an escaped newline or the
// end. That suits code and config files; in prose and Markdown a key is
// as often followed by ".", ",", ")" or "|" ("the key is sk-ant-...AA."),
// and the rule then misses it. relaxTerminators lets the specific rules
// (not the generic ones, whose secrets may contain dots) end there too.
const (
	gitleaksTerminator = `(?:[\x60'"\s;]|\\[nr]|$)`
	proseTerminator    = `(?:[\x60'"\s;.,:!?)\]}>&|<]|\\[nr]|$)`
)

func relaxTerminators(rules map[string]config.Rule) error {
	for id, rule := range rules {
		if rule.Regex == nil || strings.Contains(id, "generic") || !strings.Contains(rule.Regex.String(), gitleaksTerminator) {
			continue
		}
		re, err := compileProbe(strings.ReplaceAll(rule.Regex.String(), gitleaksTerminator, proseTerminator))
		if err != nil {
			return fmt.Errorf("rule %s: %w", id, err)
		}
		rule.Regex = re
		rules[id] = rule
	}
	return nil
}

// load compiles the rules. It panics if they do not compile, as
// regexp.MustCompile would: they are fixed at build time and covered by
// the tests.
func (r *Redactor) load() {
	r.once.Do(func() {
		if err := r.compile(); err != nil {
			panic("store: load secret rules: " + err.Error())
		}
		r.loaded.Store(true)
	})
}

// defaultRules reads gitleaks' default configuration, as
// detect.NewDetectorDefaultConfig does but with a viper of its own.
func defaultRules() (config.Config, error) {
	// gitleaks logs to stderr at info level; ledger's stderr is the user's.
	logging.Logger = zerolog.Nop()
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return config.Config{}, err
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return config.Config{}, err
	}
	return vc.Translate()
}

func (r *Redactor) compile() error {
	cfg, err := defaultRules()
	if err != nil {
		return err
	}
	own, err := ledgerRules()
	if err != nil {
		return err
	}
	for _, rule := range own {
		cfg.Rules[rule.RuleID] = rule
	}
	r.global = cfg.Allowlists
	if err := relaxTerminators(cfg.Rules); err != nil {
		return err
	}
	ids := make([]string, 0, len(cfg.Rules))
	for id := range cfg.Rules {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var keywords []string
	kwIndex := map[string]int{}
	for _, id := range ids {
		rule := cfg.Rules[id]
		// Rules that need a file path (*.tf, *.yaml, *.p12, ...) never
		// match text without one, in gitleaks either; composite rules
		// (none in the default set) are not supported.
		if rule.Regex == nil || rule.Path != nil || len(rule.Keywords) == 0 || len(rule.RequiredRules) > 0 || rule.SkipReport {
			continue
		}
		rs := ruleScan{rule: rule, before: windowBefore, after: windowAfter, lineSlack: lineSlack}
		if spec, ok := probes[id]; ok {
			src := spec.re
			if src == "derive" {
				rest, found := strings.CutPrefix(rule.Regex.String(), semiGenericPrefix)
				if !found || !strings.Contains(rest, ")"+semiGenericOperator) {
					return fmt.Errorf("rule %s is no longer semi-generic", id)
				}
				src = "^(?i)" + rest
				// The match starts at most 50 bytes before the name, and
				// the probe match covers the rest of it.
				rs.before, rs.after, rs.lineSlack = 64, 8, 256
				rs.opWithin = 20 + 3 + 1
			} else if len(spec.near) == 0 {
				// The probe matches the secret's shape (or the name it is
				// assigned to): the match starts at most ~90 bytes before
				// the keyword and its bounded parts end within ~160 after
				// the probe; no allowlist of these rules reads the line.
				rs.before, rs.after, rs.lineSlack = 128, 192, 0
			}
			rs.minToken, rs.near = spec.minToken, spec.near
			if rs.probe, err = compileProbe(src); err != nil {
				return fmt.Errorf("probe of %s: %w", id, err)
			}
		}
		if id == "private-key" {
			rs.after = 16 << 10 // the block: a 8192-bit RSA key is ~6.5 KB
		}
		for _, k := range rule.Keywords {
			k = strings.ToLower(k)
			if len(k) < 2 {
				return fmt.Errorf("rule %s: keyword %q is shorter than 2 bytes", id, k)
			}
			n, ok := kwIndex[k]
			if !ok {
				n = len(keywords)
				kwIndex[k] = n
				keywords = append(keywords, k)
				r.byKW = append(r.byKW, nil)
			}
			r.byKW[n] = append(r.byKW[n], len(r.rules))
		}
		r.rules = append(r.rules, rs)
	}
	r.keywords = newKeywordIndex(keywords)
	return nil
}

func compileProbe(src string) (p *regexp.Regexp, err error) {
	defer func() {
		if e := recover(); e != nil {
			err = fmt.Errorf("%v", e)
		}
	}()
	return regexp.MustCompile(src), nil
}

// finding is one secret found in a text.
type finding struct {
	kind   string // the rule id
	secret string
	match  string // the text the rule matched, around the secret
}

// span is a window of a text, [lo, hi).
type span struct{ lo, hi int }

// find returns the secrets in text, longest first, so that a secret is
// replaced before any shorter one inside it.
func (r *Redactor) find(text string) []finding {
	if len(text) < 8 {
		return nil
	}
	r.load()
	var windows map[int][]span
	r.keywords.each(text, func(pos, kw int) {
		kwEnd := pos + len(r.keywords.words[kw])
		for _, ri := range r.byKW[kw] {
			rs := &r.rules[ri]
			hi := kwEnd
			if rs.probe != nil {
				if rs.minToken > 0 && tokenLen(text[pos:], rs.minToken) < rs.minToken ||
					rs.opWithin > 0 && strings.IndexAny(text[kwEnd:min(len(text), kwEnd+rs.opWithin)], "=>:|,?") < 0 ||
					len(rs.near) > 0 && !containsAny(text[kwEnd:min(len(text), kwEnd+rs.after)], rs.near) {
					continue
				}
				loc := rs.probe.FindStringIndex(text[pos:])
				if loc == nil {
					continue
				}
				hi = max(hi, pos+loc[1])
			}
			w := span{max(0, pos-rs.before), min(len(text), hi+rs.after)}
			if windows == nil {
				windows = map[int][]span{}
			}
			ws := windows[ri]
			if k := len(ws) - 1; k >= 0 && w.lo <= ws[k].hi {
				ws[k].hi = max(ws[k].hi, w.hi)
			} else {
				windows[ri] = append(ws, w)
			}
		}
	})
	var out []finding
	for ri, ws := range windows {
		for _, w := range ws {
			lo, hi := widen(text, w.lo, w.hi, r.rules[ri].lineSlack)
			out = r.detect(&r.rules[ri], text[lo:hi], out)
		}
	}
	return dedupe(out)
}

// detect appends the rule's findings in raw, deciding as gitleaks'
// detectRule does for a fragment without a file path or commit (and with
// "gitleaks:allow" comments ignored: a comment in a file an agent read is
// no reason to store the secret beside it).
func (r *Redactor) detect(rs *ruleScan, raw string, out []finding) []finding {
	re := rs.rule.Regex
	for _, loc := range re.FindAllStringIndex(raw, -1) {
		match := strings.Trim(raw[loc[0]:loc[1]], "\n")
		line := lineOf(raw, loc[0], loc[0]+len(match))
		secret := match
		if groups := re.FindStringSubmatch(match); len(groups) >= 2 {
			if g := rs.rule.SecretGroup; g > 0 {
				if len(groups) <= g {
					continue
				}
				secret = groups[g]
			} else {
				for _, s := range groups[1:] {
					if s != "" {
						secret = s
						break
					}
				}
			}
		}
		if rs.rule.Entropy != 0 && shannonEntropy(secret) <= rs.rule.Entropy {
			continue
		}
		if allowed(r.global, secret, match, line) || allowed(rs.rule.Allowlists, secret, match, line) {
			continue
		}
		// An escaped newline that ends a secret in JSON (a tool input) is
		// the rule's terminator, which gitleaks' second match takes in
		// when the secret ends the match.
		for strings.HasSuffix(secret, `\n`) || strings.HasSuffix(secret, `\r`) {
			secret = secret[:len(secret)-2]
		}
		if secret == "" || strings.Contains(secret, redactedPrefix) {
			continue // an earlier replacement found again
		}
		out = append(out, finding{kind: rs.rule.RuleID, secret: secret, match: match})
	}
	return out
}

// lineOf is the text gitleaks calls a finding's line: from the newline
// before start (included) to the newline after end.
func lineOf(raw string, start, end int) string {
	lo := max(0, strings.LastIndexByte(raw[:start], '\n'))
	hi := len(raw)
	if i := strings.IndexByte(raw[end:], '\n'); i >= 0 {
		hi = end + i
	}
	return raw[lo:hi]
}

// allowed is gitleaks' checkFindingAllowed without a commit or path.
func allowed(lists []*config.Allowlist, secret, match, line string) bool {
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
		// AND: every kind of check the allowlist has must pass; a commit
		// or path check cannot, text having neither.
		if len(a.Commits) > 0 || len(a.Paths) > 0 ||
			len(a.Regexes) > 0 && !regexAllowed || len(a.StopWords) > 0 && !stopword {
			continue
		}
		return true
	}
	return false
}

// shannonEntropy is gitleaks' (runes counted, bytes as the length).
func shannonEntropy(data string) float64 {
	if data == "" {
		return 0
	}
	counts := make(map[rune]int)
	for _, c := range data {
		counts[c]++
	}
	inv := 1.0 / float64(len(data))
	var e float64
	for _, n := range counts {
		f := float64(n) * inv
		e -= f * math.Log2(f)
	}
	return e
}

// dedupe drops repeated findings and, as gitleaks does, a generic finding
// whose secret a specific rule found too. When several rules find the same
// secret, the replacement names the most specific: a provider's format
// before a context rule (curl's -H) before the generic one. It sorts the
// rest longest first.
func dedupe(fs []finding) []finding {
	sort.SliceStable(fs, func(i, j int) bool {
		if len(fs[i].secret) != len(fs[j].secret) {
			return len(fs[i].secret) > len(fs[j].secret)
		}
		if a, b := vagueness(fs[i].kind), vagueness(fs[j].kind); a != b {
			return a < b
		}
		return fs[i].kind < fs[j].kind
	})
	out := fs[:0]
	seen := map[string]bool{}
	for _, f := range fs {
		if seen[f.secret] {
			continue
		}
		if strings.Contains(f.kind, "generic") && coveredBySpecific(f, fs) {
			continue
		}
		seen[f.secret] = true
		out = append(out, f)
	}
	return out
}

// vagueness ranks how little a rule's id says about a secret.
func vagueness(kind string) int {
	switch {
	case strings.Contains(kind, "generic"):
		return 2
	case strings.HasPrefix(kind, "curl-"):
		return 1
	}
	return 0
}

func coveredBySpecific(g finding, fs []finding) bool {
	for _, f := range fs {
		if !strings.Contains(f.kind, "generic") && strings.Contains(f.secret, g.secret) {
			return true
		}
	}
	return false
}

// widen grows a window to the lines it cuts (by at most slack bytes each
// way), and then, wherever it still cuts a token, to the token's ends: a
// rule must see a secret whole, and never half of one.
func widen(text string, lo, hi, slack int) (int, int) {
	for stop := max(0, lo-slack); lo > stop && text[lo-1] != '\n'; {
		lo--
	}
	for lo > 0 && !isSpace(text[lo-1]) {
		lo--
	}
	for stop := min(len(text), hi+slack); hi < stop && text[hi] != '\n'; {
		hi++
	}
	for hi < len(text) && !isSpace(text[hi]) {
		hi++
	}
	return lo, hi
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// tokenLen is the length of the token at the start of s (up to a space,
// quote or backquote), counted up to limit.
func tokenLen(s string, limit int) int {
	n := 0
	for n < len(s) && n < limit {
		switch s[n] {
		case ' ', '\n', '\t', '\r', '"', '\'', '`':
			return n
		}
		n++
	}
	return n
}

// lower maps ASCII letters to lower case and every other byte to itself,
// so that offsets stay offsets.
var lower = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return t
}()

// keywordIndex finds the rules' keywords (lower case, two bytes or more)
// in a text, case-insensitively, in one pass: a bit per two-byte pair
// says whether any keyword starts with it (8 KB: it stays in L1 cache), and
// only then are the keywords starting with that pair compared. It runs at
// a few hundred MB/s, faster than gitleaks' Aho-Corasick trie, whose
// 2 KB-per-state tables do not fit in cache.
type keywordIndex struct {
	words  []string
	starts [1 << 16 / 64]uint64
	pair   [1 << 16]uint16 // index into lists, 0: none
	lists  [][]int32       // keyword numbers by pair
}

func newKeywordIndex(words []string) keywordIndex {
	k := keywordIndex{words: words, lists: [][]int32{nil}}
	for i, w := range words {
		p := uint16(w[0])<<8 | uint16(w[1])
		if k.pair[p] == 0 {
			k.pair[p] = uint16(len(k.lists))
			k.lists = append(k.lists, nil)
		}
		k.starts[p>>6] |= 1 << (p & 63)
		k.lists[k.pair[p]] = append(k.lists[k.pair[p]], int32(i))
	}
	return k
}

// each calls fn with the offset and number of every keyword occurrence in
// s, in order of offset.
func (k *keywordIndex) each(s string, fn func(pos, kw int)) {
	for i := 0; i+1 < len(s); i++ {
		p := uint16(lower[s[i]])<<8 | uint16(lower[s[i+1]])
		if k.starts[p>>6]&(1<<(p&63)) == 0 {
			continue
		}
	next:
		for _, w := range k.lists[k.pair[p]] {
			word := k.words[w]
			if len(s)-i < len(word) {
				continue
			}
			for j := 2; j < len(word); j++ {
				if lower[s[i+j]] != word[j] {
					continue next
				}
			}
			fn(i, int(w))
		}
	}
}
