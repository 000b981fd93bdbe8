package secrets

import (
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
)

// The generator is a module of its own (it needs gitleaks, which ledger's
// module does not require): go run -C runs it there.
//go:generate go run -C internal/rulegen ./genrules -o ../../gitleaks_rules.go

// Redactor finds secrets with gitleaks' default rule set (the ~220
// provider rules secret scanners use, with their entropy thresholds,
// allowlists and stopwords) plus the few of ledger's own in ledgerRules.
// It is safe for concurrent use.
//
// Nothing is compiled until the first text to scan, and then only what
// that text needs: the rules' keywords are indexed and the global
// allowlists compiled (~0.3 ms), and each rule's regexp is compiled when
// one of its keywords first occurs. Compiling all of them costs ~25 ms,
// too much for the commands that run at every agent session start
// (version, resume, search), which never scan, and for the hooks that
// ingest a few new lines after every tool call.
//
// gitleaks' rules are Go data (gitleaks_rules.go), generated from the
// gitleaks module that store/secrets/internal/rulegen/go.mod pins:
// gitleaks' config package, which holds them
// as TOML, links viper and its decoders (hcl, ini, yaml, afero, ...) and
// zerolog, whose initialisation every start of the binary would pay.
//
// The rules are gitleaks', the engine is ledger's. gitleaks gates a rule on
// its keywords appearing anywhere in a text, then runs the rule's regexp
// over all of it. Transcripts are full of the generic rule's keywords (key,
// token, auth, api, ...), and Go's regexp runs that rule at ~1 MB/s: it
// would make ingest 20 times slower. Here a rule runs only on windows
// around the occurrences of its own keywords (a rule's match contains its
// keyword), sized from the longest match its regexp allows, and the rules
// whose keywords are common words first check, at the occurrence, a cheap
// anchored probe that every match passes. Inside a window a rule decides
// as in gitleaks (detect.Detector.detectRule): its regexp, secret group,
// entropy, then the global and the rule's allowlists. A test of the
// rulegen module (TestRedactMatchesGitleaks) checks that both find the
// same secrets. (gitleaks' detect package is not imported:
// its dependencies, archive readers among them, cost ~2 ms at every start
// of the binary; nor is its config package, see above.)
//
// The zero value is ready to use and compiles nothing until its first scan.
// A store holds one for what it writes.
type Redactor struct {
	once     sync.Once
	loaded   atomic.Bool
	rules    []*ruleScan
	global   []*allowlist
	keywords keywordIndex
	kwIndex  map[string]int // keyword number by keyword
	byKW     [][]int        // rules (indexes into rules) by keyword number
}

// ruleScan is one rule as the Redactor runs it.
type ruleScan struct {
	id string
	// compile builds the rule; ready runs it once, on first use.
	compile func() (rule, error)
	once    sync.Once
	rule    rule
	// probe, when set, must match at a keyword occurrence for a window to
	// be scanned there; minToken, opWithin and near are cheaper checks
	// made first (see probeSpec).
	probe     *regexp.Regexp
	minToken  int
	opWithin  int  // a semi-generic rule's operator starts this close after the keyword
	derived   bool // the probe is the rule's regexp without its prefix: same groups
	near      []string
	nearFold  []string
	wordStart bool
	dashKW    map[int]bool // keywords that must sit in a token starting with '-'
	// before and after bound the window around an occurrence (after counts
	// from the end of the keyword, or of the probe match); lineSlack is
	// how far the window may grow to reach a line's start and end.
	before, after, lineSlack int
	// exact says every match lies strictly inside the window as sized (the
	// rule's matches are bounded, or its probe ends where they do): the
	// window needs no growing to keep a token whole, and a match that
	// touches a cut edge is an artefact of the cut (see detect).
	exact bool
}

// New returns a Redactor that has compiled nothing yet.
func New() *Redactor { return &Redactor{} }

// Loaded reports whether r has loaded the secret rules: it does at its
// first scan. Commands that only read (version, search, resume) never scan.
func (r *Redactor) Loaded() bool { return r.loaded.Load() }

// Window sizes around a keyword occurrence for the rules whose matches are
// unbounded (JWTs, base64, curl command lines, private key blocks): their
// bounded parts lie within a few hundred bytes of the keyword, and the
// window then grows to whole lines and never cuts a token.
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
// transcripts (key, token, ey, s., sk, test_, curl, ://): a necessary
// condition at a keyword occurrence for the rule to match there. A probe
// may be looser than the rule, never stricter; the fidelity test against
// gitleaks' detector checks that.
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
	// within the window (a curl command's -u or -H); nearFold likewise,
	// in any case (the header's name).
	near, nearFold []string
	// wordStart says the rule's regex has \b before the keyword: an
	// occurrence inside a word ("eyJeyJ...") cannot start a match, and
	// skipping it keeps a long token from being probed at every byte.
	wordStart bool
	// dashKeywords are keywords that count only in a token that starts
	// with '-': an option's name (--db-password), not a word of prose
	// ("the tests pass").
	dashKeywords []string
}

var probes = map[string]probeSpec{
	"generic-api-key":                    {re: "derive"},
	"jwt":                                {re: `^ey[a-zA-Z0-9]{17,}\.ey`, minToken: 22, wordStart: true},
	"vault-service-token":                {re: `^(?:hvs\.[\w-]{90}|s\.[a-zA-Z0-9]{24})`, minToken: 26, wordStart: true},
	"lob-api-key":                        {re: `^(?i)(?:live|test)_[a-f0-9]{35}`, minToken: 40},
	"lob-pub-api-key":                    {re: `^(?i)(?:(?:live|test)_pub|_pub)_[a-f0-9]{31}`, minToken: 36},
	"gocardless-api-token":               {re: `^(?i)(?:gocardless|live_[a-z0-9\-_=]{40})`},
	"authress-service-client-access-key": {re: `^(?:sc|ext|scauth|authress)_(?i)[a-z0-9]{5,30}\.[a-z0-9]{4,6}\.`, minToken: 13, wordStart: true},
	"sendgrid-api-token":                 {re: `^(?i)sg\.[a-z0-9=_\-\.]{66}`, minToken: 69, wordStart: true},
	"twilio-api-key":                     {re: `^SK[0-9a-fA-F]{32}`, minToken: 34},
	"octopus-deploy-api-key":             {re: `^API-[A-Z0-9]{26}`, minToken: 30, wordStart: true},
	"curl-auth-user":                     {re: `^(?i)curl`, near: []string{"-u"}, wordStart: true},
	"curl-auth-header":                   {re: `^(?i)curl`, near: []string{"-H", "--header"}, nearFold: []string{"auth", "key", "token"}, wordStart: true},
	"url-credentials":                    {re: `^://[^\s:/?#'"\x60<>\\]{0,128}:[^\s?'"\x60<>\\]{1,128}@`},
	"cli-password":                       {re: cliPasswordProbe, dashKeywords: []string{"pass", "pwd"}},
	"cli-token": {re: `^(?i)(?:token|secret|api[-_]?key|access[-_]?key|auth[-_]?key)(?:[ \t]+|=)["']?[^\s"'\x60;|&<>]{8}`,
		dashKeywords: []string{"token", "secret", "apikey", "api-key", "api_key", "accesskey", "access-key", "access_key", "authkey", "auth-key", "auth_key"}},
}

// cliPassword is the cli-password rule's regexp: what comes before the
// password (an option named so, or the flag that takes one in a tool that
// has it), then the password, unquoted or in quotes. A tool's flag counts
// only after the tool's name on the same command (no newline, pipe,
// semicolon or & between): -p is a port to ssh, a parent to mkdir, a
// publish to docker run.
const cliPassword = `(?i)(?:` +
	`(?:^|[\s"'=(])--?[a-z0-9_-]{0,30}?(?:passw(?:or)?d|pwd|pass(?:phrase|in|out)?)(?:[ \t]+|=)` +
	`|\b(?:docker|podman|nerdctl|buildah|skopeo|oras|crane|helm|az|cf)\b[^\n|;&]{0,200}?\blogin\b[^\n|;&]{0,200}?[ \t]-p[ \t]+` +
	`|\bsshpass\b[^\n|;&]{0,100}?[ \t]-p[ \t]*` +
	`|\bmongo(?:sh|dump|restore|export|import|stat|top)?\b[^\n|;&]{0,200}?[ \t]-p[ \t]+` +
	`|\b(?:zip|unzip)\b[^\n|;&]{0,200}?[ \t](?-i:-P)[ \t]+` +
	`|\b7z[ar]?\b[^\n|;&]{0,200}?[ \t](?-i:-p)` +
	`|\bredis-cli\b[^\n|;&]{0,200}?[ \t]-a[ \t]+` +
	`|\bldap(?:search|add|modify|delete|passwd|compare|whoami|modrdn)\b[^\n|;&]{0,200}?[ \t]-w[ \t]+` +
	`|\bssh-keygen\b[^\n|;&]{0,200}?[ \t](?-i:-[NP])[ \t]+` +
	`|\b(?:smbclient|rpcclient)\b[^\n|;&]{0,200}?[ \t]-U[ \t]*[^\s%"']{1,64}%` +
	`|\bhttps?[ \t]+(?:[^\n|;&]{0,200}?[ \t])?(?:-a|--auth)(?:[ \t]+|=)["']?[^\s:"']{1,64}:` +
	`|\b(?:sqlcmd|bcp|twine)\b[^\n|;&]{0,200}?[ \t](?-i:-[Pp])[ \t]+` +
	`|\bopenssl\b[^\n|;&]{0,200}?[ \t]-k[ \t]+` +
	`|\bhtpasswd\b[^\n|;&]{0,100}?[ \t]-[a-zA-Z]*b[a-zA-Z]*[ \t]+(?:-[a-zA-Z]+[ \t]+)*[^\s-]\S{0,200}[ \t]+[^\s-]\S{0,64}[ \t]+` +
	`)["']?(?:pass:)?([^\s"'\x60;|&<>]{6,128})`

// cliPasswordProbe is what must follow each of cli-password's keywords
// where a match holds it: an option's name runs on to its value, a tool's
// name is a word.
const cliPasswordProbe = `^(?i)(?:pass(?:w(?:or)?d|phrase|in|out)?(?:[ \t]+|=)["']?(?:pass:)?[^\s"'\x60;|&<>]{6}|pwd(?:[ \t]+|=)` +
	`|login\b[^\n|;&]{0,200}?[ \t]-p[ \t]` +
	`|sshpass\b[^\n|;&]{0,100}?[ \t]-p` +
	`|mongo[a-z]*\b[^\n|;&]{0,200}?[ \t]-p[ \t]` +
	`|zip\b[^\n|;&]{0,200}?[ \t](?-i:-P)[ \t]` +
	`|7z[ar]?\b[^\n|;&]{0,200}?[ \t](?-i:-p)` +
	`|redis-cli\b[^\n|;&]{0,200}?[ \t]-a[ \t]` +
	`|ldap[a-z]+\b[^\n|;&]{0,200}?[ \t]-w[ \t]` +
	`|ssh-keygen\b[^\n|;&]{0,200}?[ \t](?-i:-[NP])[ \t]` +
	`|(?:smb|rpc)client\b[^\n|;&]{0,200}?[ \t]-U` +
	`|https?[ \t]+(?:[^\n|;&]{0,200}?[ \t])?(?:-a|--auth)(?:[ \t]+|=)` +
	`|(?:sqlcmd|bcp|twine)\b[^\n|;&]{0,200}?[ \t](?-i:-[Pp])[ \t]` +
	`|openssl\b[^\n|;&]{0,200}?[ \t]-k[ \t]` +
	`|htpasswd\b[^\n|;&]{0,100}?[ \t]-[a-zA-Z]*b)`

// semiGenericOperator follows the name in every semi-generic rule: up to
// 20 name characters, up to 3 spaces or quotes, then the operator.
const semiGenericOperator = `(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)`

// ledgerRules are what gitleaks' default set misses, in its rule format:
//
//   - url-credentials: a password in a URL's userinfo
//     (postgres://app:s3cret@db, https://x-access-token:ghs_...@github.com,
//     redis://:s3cret@cache, with no user). gitleaks has only
//     vendor-specific URL rules. A password may hold the '@', '/' and '#'
//     a URL should have escaped (postgres://u:p@ss/w0rd@db): it runs to
//     the last '@' before the query that a host follows. Placeholders (user:pass,
//     ${PASSWORD}, ****) are allowed.
//   - private-key-truncated: a private key cut before its END line (a
//     tool's output shortened to N bytes, a file read in part), which
//     gitleaks' private-key rule, needing the END line, does not see: the
//     key's body after its BEGIN line.
//   - aws-secret-access-key: the 40-character secret key assigned to an
//     aws_secret_access_key name, or given after it (aws configure set
//     aws_secret_access_key KEY). gitleaks finds it only as a
//     generic-api-key, and only assigned; this keeps the kind.
//   - azure-storage-account-key: the AccountKey of an Azure storage
//     connection string (DefaultEndpointsProtocol=...;AccountKey=...==).
//     gitleaks' generic rule finds most of them, but drops one whose 86
//     random characters happen to hold one of its 1,500 stopwords.
//   - password: a password assigned to a name that says so (DB_PASSWORD=,
//     "password": , POSTGRES_PASSWORD: ) or given to a MySQL client with
//     -p, whatever characters it holds: the generic rule takes only
//     [\w.=-] values (or base64), so a generated password with a ! * ~ or
//     # in it slipped through. Values that read as code, variables or
//     templates (os.environ[...], ${X}, $(cmd), config.db.password, bare
//     words) are not passwords.
//   - cli-password: a password given on a command line: to an option
//     named so (--password VALUE, --db-pass=VALUE, -storepass VALUE,
//     -passout pass:VALUE), or to the flag that takes one in the tools
//     that have it (docker|podman|helm|az ... login -p, sshpass -p,
//     redis-cli -a, ldapsearch -w, mongo -p, zip -P, 7z -pVALUE,
//     ssh-keygen -N, smbclient -U user%VALUE, httpie -a user:VALUE,
//     sqlcmd -P, twine -p, openssl -k, htpasswd -b FILE USER VALUE).
//     Variables, placeholders, options and bare words are not passwords.
//   - cli-token: a token given to an option named so, separated by a
//     space (--token VALUE, --api-key VALUE), which the generic rule,
//     wanting an operator, does not read; or by '='. Paths and key=value
//     lists (--secret id=npm,src=.npmrc) are not tokens.
func ledgerRules() []ruleSource {
	placeholders := allowlistSource{
		Description: "placeholders",
		Regexes: []string{
			`(?i)^(?:\*+|x+|\.+|<[^>]*>|\{+[^}]*\}+|\$\{?[a-z_][a-z0-9_]*\}?|%[a-z_]+%|pass|passwd|password|pwd|secret|changeme)$`,
		},
	}
	notPassword := allowlistSource{
		Description: "code, variables and templates",
		Regexes: []string{
			`^\$`,               // $VAR, $(cmd), a $2b$ hash
			`[(){}\[\]<>%]`,     // calls, indexing, templates
			`^[A-Za-z_]+[.:]*$`, // a bare word
			`^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+[.:]*$`, // config.db.password
			`^[0-9.:]+$`, // a port, a version, a time
		},
	}
	notOption := allowlistSource{
		Description: "another option, an environment variable's name",
		Regexes:     []string{`^-`, `^[A-Z][A-Z0-9_]*$`, `(?i)^(?:env|file|fd|stdin)(?::|$)`, `(?i)^(?:my|your|the|some|new|old)?[-_]?(?:pass(?:word)?|passwd|pwd|secret|token|api[-_]?key)s?$`},
	}
	return []ruleSource{
		{
			ID:          "url-credentials",
			Description: "A password in the userinfo of a URL.",
			Regex: `(?i)\b[a-z][a-z0-9+.-]{0,31}://[^\s:/?#'"\x60<>\\]{0,128}:([^\s?'"\x60<>\\]{1,128})` +
				`@[a-z0-9\[][a-z0-9.\[\]:_-]{0,253}(?:[/?#\s'"\x60<>\\,;)]|$)`,
			SecretGroup: 1,
			Keywords:    []string{"://"},
			Allowlists: []allowlistSource{placeholders, {
				Description: "a port and a path with an @ (https://host:8443/@user)",
				Regexes:     []string{`^[0-9]{1,5}[/#]`},
			}},
		},
		{
			ID:          "private-key-truncated",
			Description: "A private key cut before its END line.",
			Regex:       `(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----((?:\\[rn]|[\r\n]|[a-z0-9+/=]){16,})`,
			SecretGroup: 1,
			Entropy:     3,
			Keywords:    []string{"-----begin"},
		},
		{
			ID:          "aws-secret-access-key",
			Description: "An AWS secret access key assigned to its usual name.",
			Regex:       `(?i)aws_?secret_?(?:access_?)?key["']?(?:\s{0,5}(?:=|:|:=|=>)\s{0,5}|[ \t]{1,5})["']?([a-z0-9/+]{40})(?:[^a-z0-9/+=]|$)`,
			SecretGroup: 1,
			Entropy:     3.5,
			Keywords:    []string{"aws_secret", "awssecret", "secret_access_key", "secretaccesskey"},
			Allowlists:  []allowlistSource{placeholders},
		},
		{
			ID:          "azure-storage-account-key",
			Description: "The account key of an Azure storage connection string.",
			Regex:       `(?i)\baccountkey\s{0,3}=\s{0,3}([a-z0-9+/]{86}==)`,
			SecretGroup: 1,
			Entropy:     4,
			Keywords:    []string{"accountkey"},
		},
		{
			ID:          "password",
			Description: "A password assigned to a name that says so, or given to a MySQL client.",
			Regex: `(?i)(?:[\w.-]{0,40}?(?:passw(?:or)?d|pwd)[\w.-]{0,20}["']?[ \t]{0,3}(?:=|:=|=>|:)[ \t]{0,3}["'\x60]?` +
				`|\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]{0,200}?[ \t]-p["']?)([^\s"'\x60;,=]{8,128})`,
			SecretGroup: 1,
			Entropy:     3,
			Keywords:    []string{"passw", "pwd", "mysql", "mariadb"},
			Allowlists:  []allowlistSource{placeholders, notPassword},
		},
		{
			ID:          "cli-password",
			Description: "A password given on a command line.",
			Regex:       cliPassword,
			SecretGroup: 1,
			Entropy:     2,
			Keywords: []string{"pass", "pwd", "login", "sshpass", "mongo", "zip", "7z", "redis-cli", "ldap", "ssh-keygen",
				"smbclient", "rpcclient", "http", "sqlcmd", "bcp", "twine", "openssl", "htpasswd"},
			Allowlists: []allowlistSource{placeholders, notPassword, notOption},
		},
		{
			ID:          "cli-token",
			Description: "A token given to a command-line option named so.",
			Regex: `(?i)(?:^|[\s"'=(])--?[a-z0-9_-]{0,30}?(?:token|secret|api[-_]?key|access[-_]?key|auth[-_]?key)` +
				`(?:[ \t]+|=)["']?([^\s"'\x60;|&<>]{8,256})`,
			SecretGroup: 1,
			Entropy:     3,
			Keywords: []string{"token", "secret", "apikey", "api-key", "api_key", "accesskey", "access-key", "access_key",
				"authkey", "auth-key", "auth_key"},
			Allowlists: []allowlistSource{placeholders, notPassword, notOption, {
				Description: "paths and key=value lists",
				Regexes:     []string{`^[~.]{0,2}/`, `(?i)\.(?:json|pem|key|txt|ya?ml|env|crt|p12|pfx|jks)$`, `^[A-Za-z_]+=`},
			}},
		},
	}
}

// gitleaksTerminator ends most of gitleaks' provider rules: a secret must
// be followed by a quote, a space, a semicolon, an escaped newline or the
// end. That suits code and config files; in prose and Markdown a key is
// as often followed by ".", ",", ")" or "|" ("the key is sk-ant-...AA."),
// and in a path by "/", "\", "." or "#" (/keys/sk_live_.../config.json,
// https://host/#token), and the rule then misses it. relaxTerminators lets
// the specific rules (not the generic ones, whose secrets may contain dots)
// end there too. Any backslash ends one: a Windows path's, and the escape
// before a quote in JSON.
const (
	gitleaksTerminator = `(?:[\x60'"\s;]|\\[nr]|$)`
	proseTerminator    = `(?:[\x60'"\s;.,:!?)\]}>&|</#\\]|$)`
)

func relaxTerminators(id, src string) string {
	if strings.Contains(id, "generic") {
		return src
	}
	return strings.ReplaceAll(src, gitleaksTerminator, proseTerminator)
}

// load indexes the rule set, once. It panics if it does not load, as
// regexp.MustCompile would: it is fixed at build time and covered by the
// tests.
func (r *Redactor) load() {
	r.once.Do(func() {
		if err := r.compile(); err != nil {
			panic("store: load secret rules: " + err.Error())
		}
		r.loaded.Store(true)
	})
}

// ruleSource is a rule as gitleaks' configuration declares it (a
// [[rules]] table of its TOML), uncompiled: gitleaks_rules.go holds
// gitleaks' default set in this form, ledgerRules ledger's own. Keywords
// and stopwords are in lower case.
type ruleSource struct {
	ID, Description string
	Regex           string
	SecretGroup     int
	Entropy         float64
	Keywords        []string
	Tags            []string
	// Path, SkipReport and Required mark the rules ledger does not run:
	// the rules of file names, and the composite ones.
	Path       string
	SkipReport bool
	Required   []string
	Allowlists []allowlistSource
}

// allowlistSource is an allowlist as gitleaks' configuration declares it,
// normalised: MatchAll is the condition "AND" (every kind of check the
// allowlist has must pass; else any one), and RegexTarget is "" (the
// secret), "match" or "line".
type allowlistSource struct {
	Description string
	MatchAll    bool
	RegexTarget string
	Regexes     []string
	Paths       []string
	StopWords   []string
	Commits     []string
}

// rule is a compiled rule: what detect uses of gitleaks' config.Rule.
type rule struct {
	RuleID      string
	Regex       *regexp.Regexp
	SecretGroup int
	Entropy     float64
	Allowlists  []*allowlist
}

// allowlist is a compiled allowlist, for texts, which have no path or
// commit: its paths and commits are only counted (see allowed).
type allowlist struct {
	MatchAll    bool
	RegexTarget string
	// Regex is the allowlist's regexes joined into one alternation, as
	// gitleaks' Allowlist.Validate joins them (a leading (?i) of one then
	// holds for those after it, in gitleaks too); nil when it has none.
	Regex     *regexp.Regexp
	StopWords []string
	Paths     int
	Commits   int
}

// compileAllowlist compiles a, as gitleaks' Allowlist.Validate does.
func compileAllowlist(a allowlistSource) (*allowlist, error) {
	al := &allowlist{MatchAll: a.MatchAll, RegexTarget: a.RegexTarget, StopWords: a.StopWords,
		Paths: len(a.Paths), Commits: len(a.Commits)}
	if len(a.Regexes) > 0 {
		re, err := compileRegexp("(?:" + strings.Join(a.Regexes, "|") + ")")
		if err != nil {
			return nil, fmt.Errorf("allowlist %q: %w", a.Description, err)
		}
		al.Regex = re
	}
	return al, nil
}

// compileRule compiles src, its regexp being re (gitleaks' with relaxed
// terminators), and its allowlists.
func compileRule(src ruleSource, re string) (rule, error) {
	compiled, err := compileRegexp(re)
	if err != nil {
		return rule{}, err
	}
	if src.SecretGroup > compiled.NumSubexp() {
		return rule{}, fmt.Errorf("secret group %d of %d", src.SecretGroup, compiled.NumSubexp())
	}
	r := rule{RuleID: src.ID, Regex: compiled, SecretGroup: src.SecretGroup, Entropy: src.Entropy}
	for _, a := range src.Allowlists {
		al, err := compileAllowlist(a)
		if err != nil {
			return rule{}, err
		}
		r.Allowlists = append(r.Allowlists, al)
	}
	return r, nil
}

// compile indexes the rules' keywords and compiles the global allowlists;
// each rule's regexp waits for its first use (ruleScan.ready).
func (r *Redactor) compile() error {
	for _, a := range gitleaksAllowlists {
		al, err := compileAllowlist(a)
		if err != nil {
			return fmt.Errorf("global %w", err)
		}
		r.global = append(r.global, al)
	}
	for _, src := range gitleaksRules {
		// Rules that need a file path (*.tf, *.yaml, *.p12, ...) never
		// match text without one, in gitleaks either; composite rules
		// (none in the default set) are not supported.
		if src.Regex == "" || src.Path != "" || len(src.Keywords) == 0 || len(src.Required) > 0 || src.SkipReport {
			continue
		}
		r.add(src, relaxTerminators(src.ID, src.Regex))
	}
	for _, src := range ledgerRules() {
		r.add(src, src.Regex)
	}
	words := make([]string, len(r.kwIndex))
	for w, n := range r.kwIndex {
		words[n] = w
	}
	r.keywords = newKeywordIndex(words)
	return nil
}

// add registers a rule, to be compiled with the regexp re, under its
// keywords, with the checks of its probe.
func (r *Redactor) add(src ruleSource, re string) {
	// The stopwords of an allowlist are not compiled into an Aho-Corasick
	// trie, as gitleaks' Validate does: that takes 16 ms for the generic
	// rule's 1,500. The allowlist checks them in a loop, which runs only
	// for the rare match that passes the regexp and the entropy check.
	rs := &ruleScan{id: src.ID, compile: func() (rule, error) { return compileRule(src, re) }}
	for _, a := range src.Allowlists {
		if a.RegexTarget == "line" {
			rs.lineSlack = 256 // its allowlist reads the line around the secret
		}
	}
	if spec, ok := probes[src.ID]; ok {
		rs.minToken, rs.near, rs.nearFold, rs.wordStart = spec.minToken, spec.near, spec.nearFold, spec.wordStart
		if spec.re == "derive" {
			rs.opWithin, rs.derived = 20+3+1, true
		}
	}
	if r.kwIndex == nil {
		r.kwIndex = map[string]int{}
	}
	for _, k := range src.Keywords {
		k = strings.ToLower(k)
		n, ok := r.kwIndex[k]
		if !ok {
			n = len(r.kwIndex)
			r.kwIndex[k] = n
			r.byKW = append(r.byKW, nil)
		}
		r.byKW[n] = append(r.byKW[n], len(r.rules))
	}
	for _, k := range probes[src.ID].dashKeywords {
		if rs.dashKW == nil {
			rs.dashKW = map[int]bool{}
		}
		rs.dashKW[r.kwIndex[k]] = true
	}
	r.rules = append(r.rules, rs)
}

// ready compiles the rule, its probe and its window sizes, once. It
// panics if they do not compile, as regexp.MustCompile would: they are
// fixed at build time, and a test compiles every one.
func (rs *ruleScan) ready() {
	rs.once.Do(func() {
		if err := rs.build(); err != nil {
			panic("store: compile secret rule " + rs.id + ": " + err.Error())
		}
	})
}

// build compiles the rule and its probe and sizes its windows.
func (rs *ruleScan) build() error {
	rule, err := rs.compile()
	if err != nil {
		return err
	}
	rs.rule = rule
	spec, probed := probes[rs.id]
	if probed {
		src := spec.re
		if src == "derive" {
			rest, found := strings.CutPrefix(rule.Regex.String(), semiGenericPrefix)
			if !found || !strings.Contains(rest, ")"+semiGenericOperator) {
				return fmt.Errorf("no longer semi-generic")
			}
			src = "^(?i)" + rest
		}
		if rs.probe, err = compileRegexp(src); err != nil {
			return fmt.Errorf("probe: %w", err)
		}
	}
	maxLen, err := maxMatchBytes(rule.Regex.String())
	if err != nil {
		return err
	}
	switch {
	case rs.derived:
		// The match starts at most 50 bytes before the name (the prefix
		// the probe drops) and ends where the probe match does.
		rs.before, rs.after, rs.exact = 64, 1, true
	case maxLen >= 0:
		// A match holds its keyword and is at most maxLen bytes long: it
		// lies within maxLen bytes of the keyword, either side. One more
		// byte each side keeps it off the window's edges (see detect).
		rs.before, rs.after, rs.exact = maxLen+1, maxLen+1, true
	default:
		// Unbounded (JWTs, base64, multi-line): generous windows, grown to
		// whole lines and tokens.
		rs.before, rs.after, rs.lineSlack = windowBefore, windowAfter, lineSlack
		if rs.id == "private-key" || rs.id == "private-key-truncated" {
			rs.after = 16 << 10 // the block: a 8192-bit RSA key is ~6.5 KB
		}
	}
	return nil
}

// maxMatchBytes is the longest a match of the regexp can be, in bytes, or
// -1 when it is unbounded.
func maxMatchBytes(src string) (int, error) {
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return 0, err
	}
	return maxBytes(re), nil
}

func maxBytes(re *syntax.Regexp) int {
	runeBytes := func(r rune, fold bool) int {
		n := utf8.RuneLen(r)
		for f := unicode.SimpleFold(r); fold && f != r; f = unicode.SimpleFold(f) {
			n = max(n, utf8.RuneLen(f)) // (?i)k also matches U+212A, 3 bytes
		}
		return n
	}
	switch re.Op {
	case syntax.OpLiteral:
		n := 0
		for _, r := range re.Rune {
			n += runeBytes(r, re.Flags&syntax.FoldCase != 0)
		}
		return n
	case syntax.OpCharClass:
		n := 0
		for i := 1; i < len(re.Rune); i += 2 {
			n = max(n, utf8.RuneLen(min(re.Rune[i], unicode.MaxRune)))
		}
		return n
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return utf8.UTFMax
	case syntax.OpCapture, syntax.OpQuest:
		return maxBytes(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		if maxBytes(re.Sub[0]) == 0 {
			return 0
		}
		return -1
	case syntax.OpRepeat:
		n := maxBytes(re.Sub[0])
		switch {
		case n == 0:
			return 0
		case n < 0 || re.Max < 0:
			return -1
		}
		return n * re.Max
	case syntax.OpConcat, syntax.OpAlternate:
		total := 0
		for _, sub := range re.Sub {
			n := maxBytes(sub)
			if n < 0 {
				return -1
			}
			if re.Op == syntax.OpConcat {
				total += n
			} else {
				total = max(total, n)
			}
		}
		return total
	}
	return 0 // empty-width: ^ $ \b and the like
}

func compileRegexp(src string) (p *regexp.Regexp, err error) {
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
			rs := r.rules[ri]
			hi := kwEnd
			// The cheap checks first: they need no compiled rule.
			if rs.wordStart && pos > 0 && isWord(text[pos-1]) ||
				rs.dashKW[kw] && !inOption(text, pos) ||
				rs.minToken > 0 && tokenLen(text[pos:], rs.minToken) < rs.minToken ||
				rs.opWithin > 0 && !assignsValue(text, kwEnd, rs.opWithin) ||
				len(rs.near) > 0 && !containsAny(text[kwEnd:min(len(text), kwEnd+windowAfter)], rs.near) ||
				len(rs.nearFold) > 0 && !containsAny(strings.ToLower(text[kwEnd:min(len(text), kwEnd+windowAfter)]), rs.nearFold) {
				continue
			}
			rs.ready()
			if rs.probe != nil {
				// Bounded: a probe never needs more, and a huge token is
				// not read to its end at every occurrence.
				sub := text[pos:min(len(text), pos+maxToken)]
				loc := rs.probe.FindStringSubmatchIndex(sub)
				if loc == nil || rs.derived && lowEntropy(rs, sub, loc) {
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
		rs := r.rules[ri]
		// Widened windows can meet (many keywords in one long line or
		// token): merge them as they grow, so that no byte is scanned or
		// walked twice.
		var cur span
		for i, w := range ws {
			switch {
			case i == 0:
				cur = span{widenLeft(text, w.lo, rs), widenRight(text, w.hi, rs)}
			case w.lo <= cur.hi:
				if w.hi > cur.hi {
					cur.hi = widenRight(text, w.hi, rs)
				}
			default:
				out = r.detect(rs, text, cur, out)
				cur = span{widenLeft(text, w.lo, rs), widenRight(text, w.hi, rs)}
			}
		}
		out = r.detect(rs, text, cur, out)
	}
	return dedupe(out)
}

// detect appends the rule's findings in raw, deciding as gitleaks'
// detectRule does for a fragment without a file path or commit (and with
// "gitleaks:allow" comments ignored: a comment in a file an agent read is
// no reason to store the secret beside it).
func (r *Redactor) detect(rs *ruleScan, text string, w span, out []finding) []finding {
	sc := &windowScan{rs: rs, text: text, lo: w.lo, rescanned: map[int]int{}, decided: map[[2]int]decision{}}
	return r.scan(sc, text[w.lo:w.hi], 0, -1, rs.exact && w.lo > 0, rs.exact && w.hi < len(text), out)
}

// matchesBefore are re's matches in raw that start before until (all of
// them when until < 0). It asks the regexp for one match, then twice as
// many, until it has them all: a search from a dropped value needs only
// the matches that start in the value, and the rest of raw is not
// searched for the others.
func matchesBefore(re *regexp.Regexp, raw string, until int) [][]int {
	if until < 0 {
		return re.FindAllStringIndex(raw, -1)
	}
	for n := 1; ; n *= 2 {
		locs := re.FindAllStringIndex(raw, n)
		if len(locs) < n || locs[len(locs)-1][0] >= until {
			for i, loc := range locs {
				if loc[0] >= until {
					return locs[:i]
				}
			}
			return locs
		}
	}
}

// rescanWindow is how far past a dropped value's start scan searches
// again: an assignment hidden in a value is near its start.
const rescanWindow = 512

// windowScan is the search of one rule in one window of text (from lo),
// and what it has done so far: where it searched again, how far
// (rescanned), and what it decided of each match (decided, by the match's
// place in the window). A line of many assignments whose values are
// dropped (password=hunter2hunter2, 1,600 times) has each search from a
// value meet the next assignments: searched again from each value, and
// again from each value found there, a 38 KB line took 77 s. Searching
// from a value only for the matches that start in it, and deciding each
// match once, the line takes milliseconds.
type windowScan struct {
	rs        *ruleScan
	text      string
	lo        int
	rescanned map[int]int
	decided   map[[2]int]decision
}

// decision is decide's outcome for one match: the finding, if kept, and
// where its secret starts in the window.
type decision struct {
	f     finding
	start int
	ok    bool
}

// scan appends the rule's findings in raw, which starts at offset at of
// the window: of the matches that start before until (every match when
// until < 0). cutStart and cutEnd say raw's edges are cuts of a longer
// text, where a match of an exact window is an artefact (see detect).
func (r *Redactor) scan(sc *windowScan, raw string, at, until int, cutStart, cutEnd bool, out []finding) []finding {
	for _, loc := range matchesBefore(sc.rs.rule.Regex, raw, until) {
		// In an exact window every real match lies strictly inside; one
		// that touches a cut edge exists only because \b or $ took the
		// cut for the text's start or end.
		if loc[0] == 0 && cutStart || loc[1] == len(raw) && cutEnd {
			continue
		}
		key := [2]int{at + loc[0], at + loc[1]}
		d, seen := sc.decided[key]
		if !seen {
			d.f, d.start, d.ok = r.decide(sc.rs, sc.text, sc.lo+at, raw, loc)
			d.start += at
			sc.decided[key] = d
		}
		if d.ok {
			if !seen {
				out = append(out, d.f)
			}
			continue
		}
		// A match dropped for its value (an allowlisted name, a
		// placeholder, low entropy) may hide a real secret inside that
		// value: "password: DB_PASSWORD=s3cr3t" matches once, as the
		// password "DB_PASSWORD", a name, and the search would go on
		// after it, never to look at the "=" again. So the rule searches
		// again from where the value starts, for the matches that start
		// in the value (a match past it, this search meets anyway). The
		// value follows a name and an operator, so the cut there is no
		// word's middle.
		start := d.start - at
		if start > loc[0] && start < loc[1] {
			hi := min(len(raw), start+rescanWindow)
			if sc.rescanned[at+start] >= at+loc[1] {
				continue // searched from there as far already
			}
			sc.rescanned[at+start] = at + loc[1]
			out = r.scan(sc, raw[start:hi], at+start, loc[1]-start, false, hi < len(raw) || cutEnd, out)
		}
	}
	return out
}

// decide is gitleaks' detectRule for one match at loc in raw, a cut of
// text at offset off: the finding, if the rule keeps it, and where in raw
// its secret starts (the match's start when that is not known).
func (r *Redactor) decide(rs *ruleScan, text string, off int, raw string, loc []int) (finding, int, bool) {
	re := rs.rule.Regex
	whole := raw[loc[0]:loc[1]]
	match := strings.TrimLeft(whole, "\n")
	base := loc[0] + len(whole) - len(match)
	match = strings.TrimRight(match, "\n")
	// The line is read in the whole text (raw, at off in it, is a cut of
	// it): the same match has the same line whichever search met it.
	line := lineOf(text, off+base, off+base+len(match))
	secret, start := match, base
	if groups := re.FindStringSubmatchIndex(match); len(groups) >= 4 {
		if g := rs.rule.SecretGroup; g > 0 {
			if len(groups) <= 2*g+1 || groups[2*g] < 0 {
				return finding{}, base, false
			}
			secret, start = match[groups[2*g]:groups[2*g+1]], base+groups[2*g]
		} else {
			for i := 2; i+1 < len(groups); i += 2 {
				if groups[i] >= 0 && groups[i+1] > groups[i] {
					secret, start = match[groups[i]:groups[i+1]], base+groups[i]
					break
				}
			}
		}
	}
	if rs.rule.Entropy != 0 && shannonEntropy(secret) <= rs.rule.Entropy {
		return finding{}, start, false
	}
	if allowed(r.global, secret, match, line) || allowed(rs.rule.Allowlists, secret, match, line) {
		return finding{}, start, false
	}
	// An escaped newline that ends a secret in JSON (a tool input) is
	// the rule's terminator, which gitleaks' second match takes in
	// when the secret ends the match.
	for strings.HasSuffix(secret, `\n`) || strings.HasSuffix(secret, `\r`) {
		secret = secret[:len(secret)-2]
	}
	// A backslash ending a secret is the escape of the quote after it
	// in JSON (a rule whose alphabet holds backslashes, JWT's): it is
	// not the secret's, and replacing it would break the JSON.
	secret = strings.TrimRight(secret, `\`)
	if secret == "" || strings.Contains(secret, redactedPrefix) {
		return finding{}, start, false // an earlier replacement found again
	}
	return finding{kind: rs.rule.RuleID, secret: secret, match: match}, start, true
}

// lineOf is the text gitleaks calls a finding's line: from the newline
// before start (included) to the newline after end, cut to maxLine bytes
// either side of the match. gitleaks tests whole lines, but a line can be
// a megabyte of minified JSON, tested again for every match in it; the
// allowlists that read lines look near the secret.
func lineOf(raw string, start, end int) string {
	lo := max(0, start-maxLine)
	if i := strings.LastIndexByte(raw[lo:start], '\n'); i >= 0 {
		lo += i
	}
	hi := min(len(raw), end+maxLine)
	if i := strings.IndexByte(raw[end:hi], '\n'); i >= 0 {
		hi = end + i
	}
	return raw[lo:hi]
}

const maxLine = 1024

// allowed is gitleaks' checkFindingAllowed without a commit or path.
func allowed(lists []*allowlist, secret, match, line string) bool {
	for _, a := range lists {
		target := secret
		switch a.RegexTarget {
		case "match":
			target = match
		case "line":
			target = line
		}
		regexAllowed := a.Regex != nil && target != "" && a.Regex.MatchString(target)
		if !a.MatchAll {
			if regexAllowed || a.containsStopWord(secret) {
				return true
			}
			continue
		}
		// AND: every kind of check the allowlist has must pass; a commit
		// or path check cannot, text having neither.
		if a.Commits > 0 || a.Paths > 0 ||
			a.Regex != nil && !regexAllowed || len(a.StopWords) > 0 && !a.containsStopWord(secret) {
			continue
		}
		return true
	}
	return false
}

// containsStopWord is gitleaks' Allowlist.ContainsStopWord: whether the
// secret, in lower case, contains one of the (lower case) stopwords.
func (a *allowlist) containsStopWord(secret string) bool {
	if len(a.StopWords) == 0 || secret == "" {
		return false
	}
	s := strings.ToLower(secret)
	for _, w := range a.StopWords {
		if strings.Contains(s, w) {
			return true
		}
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
// whose secret a specific rule found too, and the body of a private key
// found whole. When several rules find the same secret, the replacement
// names the most specific: a provider's format before a context rule
// (curl's -H, a command line's --token) before the generic one. It sorts the
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
		if strings.Contains(f.kind, "generic") && coveredBySpecific(f, fs) ||
			f.kind == "private-key-truncated" && coveredByKind(f, fs, "private-key") {
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
	case strings.HasPrefix(kind, "curl-"), strings.HasPrefix(kind, "cli-"):
		return 1
	}
	return 0
}

// coveredByKind tells whether a finding of the given kind holds f's
// secret: a key's body inside the whole key, BEGIN to END.
func coveredByKind(f finding, fs []finding, kind string) bool {
	for _, o := range fs {
		if o.kind == kind && len(o.secret) > len(f.secret) && strings.Contains(o.secret, f.secret) {
			return true
		}
	}
	return false
}

func coveredBySpecific(g finding, fs []finding) bool {
	for _, f := range fs {
		if !strings.Contains(f.kind, "generic") && strings.Contains(f.secret, g.secret) {
			return true
		}
	}
	return false
}

// maxToken bounds how far a window grows to keep a token whole: no secret
// is longer, and a huge blob without spaces is not walked again and again.
const maxToken = 64 << 10

// widenLeft and widenRight grow a window to the line it cuts (by at most
// the rule's lineSlack), and then, unless the rule's window is exact,
// wherever it still cuts a token, to the token's end: a rule must see a
// secret whole, never half of one.
func widenLeft(text string, lo int, rs *ruleScan) int {
	for stop := max(0, lo-rs.lineSlack); lo > stop && text[lo-1] != '\n'; {
		lo--
	}
	for stop := max(0, lo-maxToken); !rs.exact && lo > stop && !isSpace(text[lo-1]); {
		lo--
	}
	return lo
}

func widenRight(text string, hi int, rs *ruleScan) int {
	for stop := min(len(text), hi+rs.lineSlack); hi < stop && text[hi] != '\n'; {
		hi++
	}
	for stop := min(len(text), hi+maxToken); !rs.exact && hi < stop && !isSpace(text[hi]); {
		hi++
	}
	return hi
}

// inOption tells whether the token holding text[pos] starts with '-'
// (within 32 bytes back: an option's name is short).
func inOption(text string, pos int) bool {
	for i := pos - 1; i >= 0 && i >= pos-32; i-- {
		switch text[i] {
		case ' ', '\t', '\n', '\r', '"', '\'', '=', '(', '`':
			return text[i+1] == '-'
		}
	}
	return pos > 0 && pos <= 32 && text[0] == '-'
}

// isWord is regexp's \w.
func isWord(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

// lowEntropy tells whether the secret a derived probe matched (the same
// group the rule would take) fails the rule's entropy threshold: the rule
// would drop it, so no window is needed.
func lowEntropy(rs *ruleScan, s string, loc []int) bool {
	if rs.rule.Entropy == 0 {
		return false
	}
	secret := s[loc[0]:loc[1]]
	if g := rs.rule.SecretGroup; g > 0 && 2*g+1 < len(loc) && loc[2*g] >= 0 {
		secret = s[loc[2*g]:loc[2*g+1]]
	} else if g == 0 {
		for i := 2; i+1 < len(loc); i += 2 {
			if loc[i] >= 0 && loc[i+1] > loc[i] {
				secret = s[loc[i]:loc[i+1]]
				break
			}
		}
	}
	return shannonEntropy(secret) <= rs.rule.Entropy
}

// assignsValue is a semi-generic rule's shape, cheaply: within the next
// `within` bytes an operator (= > : | , ?=), then up to 5 quotes, spaces
// or '=', then a value of 10 or more characters (the rule's shortest).
func assignsValue(text string, from, within int) bool {
	for i := from; i < min(len(text), from+within); i++ {
		if strings.IndexByte("=>:|,?", text[i]) < 0 {
			continue
		}
		j := i + 1 // the operator's rest: ":::=", "||", "=>", "?="
		for j < len(text) && j < i+4 && strings.IndexByte("=>:|", text[j]) >= 0 {
			j++
		}
		for k := 0; j < len(text) && k < 5 && strings.IndexByte("`'\" \t\r\n\f=", text[j]) >= 0; k++ {
			j++
		}
		n := 0
		for j+n < len(text) && n < 10 && valueByte(text[j+n]) {
			n++
		}
		if n >= 10 {
			return true
		}
	}
	return false
}

// valueByte is a byte of a semi-generic rule's value: [\w.=-] or base64.
func valueByte(c byte) bool {
	return isWord(c) || c == '.' || c == '=' || c == '-' || c == '+' || c == '/'
}

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
