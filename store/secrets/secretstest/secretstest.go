package secretstest

import (
	"encoding/json"
	"math/rand/v2"
	"strings"

	"github.com/agentledger/ledger/compact"
)

// Secret is a secret and the kind of rule expected to find it.
type Secret struct {
	Kind, Value string
}

// Kinds are live-shaped secrets of 28 kinds, made from their rules'
// formats with a seeded generator: no real key sits in the source, and
// none of them is a known test key an allowlist skips.
func Kinds() []Secret {
	rnd := rand.New(rand.NewPCG(19, 5))
	const (
		alnum   = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
		lower   = "abcdefghijklmnopqrstuvwxyz0123456789"
		letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		base32  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
		hex     = "0123456789abcdef"
		words   = alnum + "_-"
	)
	r := func(alphabet string, n int) string { return random(rnd, alphabet, n) }
	digits := func(n int) string { return r("0123456789", n) }
	return []Secret{
		{"anthropic-api-key", "sk-ant-api03-" + r(words, 93) + "AA"},
		{"openai-api-key", "sk-proj-" + r(words, 74) + "T3BlbkFJ" + r(words, 74)},
		{"stripe-access-token", "sk_live_" + r(alnum, 24)},
		{"aws-access-token", "AKIA" + r(base32, 16)},
		{"github-pat", "ghp_" + r(alnum, 36)},
		{"github-fine-grained-pat", "github_pat_" + r(alnum, 82)},
		{"github-oauth", "gho_" + r(alnum, 36)},
		{"gitlab-pat", "glpat-" + r(alnum, 20)},
		{"slack-bot-token", "xoxb-" + digits(11) + "-" + digits(12) + "-" + r(alnum, 24)},
		{"gcp-api-key", "AIza" + r(alnum, 35)},
		{"sendgrid-api-token", "SG." + r(alnum, 22) + "." + r(alnum, 43)},
		{"npm-access-token", "npm_" + r(lower, 36)},
		{"pypi-upload-token", "pypi-AgEIcHlwaS5vcmc" + r(alnum, 60)},
		{"shopify-access-token", "shpat_" + r(hex, 32)},
		{"digitalocean-pat", "dop_v1_" + r(hex, 64)},
		{"vault-service-token", "hvs." + r(alnum, 95)},
		{"doppler-api-token", "dp.pt." + r(alnum, 43)},
		{"linear-api-key", "lin_api_" + r(alnum, 40)},
		{"huggingface-access-token", "hf_" + r(letters, 34)},
		{"postman-api-token", "PMAK-" + r(hex, 24) + "-" + r(hex, 34)},
		{"grafana-cloud-api-token", "glc_" + r(alnum, 40)},
		{"planetscale-api-token", "pscale_tkn_" + r(alnum, 43)},
		{"pulumi-api-token", "pul-" + r(hex, 40)},
		{"rubygems-api-token", "rubygems_" + r(hex, 48)},
		{"databricks-api-token", "dapi" + r(hex, 32)},
		{"sentry-user-token", "sntryu_" + r(hex, 64)},
		{"prefect-api-token", "pnu_" + r(alnum, 36)},
		{"jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ" + r(alnum, 40) + "." + r(words, 43)},
	}
}

// Credentials are secrets that are not a provider's token, each in the
// text (a command, a config line, a sentence) that holds it: an Azure
// storage connection string, a generated database password.
func Credentials() []struct{ Kind, Value, Text string } {
	rnd := rand.New(rand.NewPCG(3, 7))
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	key := random(rnd, alnum+"+/", 86) + "=="
	pw := random(rnd, alnum+"!#%*+-._~^", 20)
	return []struct{ Kind, Value, Text string }{
		{"azure-storage-account-key", key, `az storage blob list --connection-string "DefaultEndpointsProtocol=https;AccountName=prodlogs;AccountKey=` + key + `;EndpointSuffix=core.windows.net" -c logs`},
		{"azure-storage-account-key", key, "export AZURE_STORAGE_CONNECTION_STRING='DefaultEndpointsProtocol=https;AccountName=prodlogs;AccountKey=" + key + "'"},
		{"password", pw, "The prod database is up again; DB_PASSWORD=" + pw + " and the host is db-1."},
		{"password", pw, "set DB_PASSWORD=" + pw},
		{"password", pw, "POSTGRES_PASSWORD: " + pw + "\n"},
		{"password", pw, "mysql -u root -p'" + pw + "' -h db-1"},
	}
}

func random(rnd *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rnd.IntN(len(alphabet))]
	}
	return string(b)
}

// Placement is where a secret sits in a message.
type Placement struct {
	Name string
	// Message puts the secret (every %s of its format) in a message.
	Message func(secret string) compact.Message
}

// Placements put a secret where transcripts hold text: what the user
// typed (prose, a path, a URL), tool inputs (a path, a shell command, a
// file's content), tool output and thinking; as a word, and as a path
// segment followed by each delimiter a path or a sentence has.
func Placements() []Placement {
	user := func(format string) func(string) compact.Message {
		return func(s string) compact.Message { return block(compact.RoleUser, compact.BlockText, fill(format, s)) }
	}
	tool := func(name, field, format string) func(string) compact.Message {
		return func(s string) compact.Message {
			in := map[string]string{field: fill(format, s)}
			if field != "file_path" {
				in["file_path"] = "/src/app/settings.py"
			}
			return compact.Message{UUID: "u", SessionID: "s", Role: compact.RoleAssistant,
				Blocks: []compact.Block{{Kind: compact.BlockText, Text: "Let me look."}, ToolUse(name, in)}}
		}
	}
	output := func(format string) func(string) compact.Message {
		return func(s string) compact.Message {
			return block(compact.RoleUser, compact.BlockToolResult, fill(format, s))
		}
	}
	return []Placement{
		{"user text, a sentence", user("the key is %s, keep it safe")},
		{"user text, end of sentence", user("Use %s.")},
		{"user text, path segment", user("it reads /keys/%s/config.json at start")},
		{"user text, file name", user("saved to ~/keys/%s.json")},
		{"user text, URL path", user("GET https://api.example.com/v1/%s/items?limit=5 fails")},
		{"user text, URL fragment", user("open https://example.com/#%s#top")},
		{"user text, query", user("https://example.com/cb?code=%s&state=x")},
		{"user text, parenthesised", user("(the old one was %s)")},
		{"tool input, Read path", tool("Read", "file_path", "/keys/%s/config.json")},
		{"tool input, Windows path", tool("Read", "file_path", `C:\keys\%s\config.json`)},
		{"tool input, Bash command path", tool("Bash", "command", "ls -la /keys/%s/ && cat /keys/%s/config.json | jq .")},
		{"tool input, Bash command env", tool("Bash", "command", "API_TOKEN=%s ./deploy.sh --prod")},
		{"tool input, Bash curl header", tool("Bash", "command", "curl -s -H 'Authorization: Bearer %s' https://api.example.com/me")},
		{"tool input, Grep pattern", tool("Grep", "pattern", "%s")},
		{"file content, Write", tool("Write", "content", "import os\n\nAPI_KEY = \"%s\"\nTIMEOUT = 30\n")},
		{"file content, Edit", tool("Edit", "new_string", "const client = new Client({ token: '%s' });")},
		{"file content, path in code", tool("Write", "content", "open(\"/keys/%s/config.json\").read()\n")},
		{"tool output, listing", output("total 8\ndrwx------ 2 dev dev 4096 Mar  2 09:00 /keys/%s/\n-rw------- 1 dev dev  120 Mar  2 09:00 /keys/%s/config.json\n")},
		{"tool output, grep hit", output("src/settings.py:12:    'token': '%s',\n")},
		{"tool output, error", output("Error: open /keys/%s/config.json: no such file or directory")},
		{"thinking, path", func(s string) compact.Message {
			return block(compact.RoleAssistant, compact.BlockThinking, fill("The config lives at /keys/%s/config.json, so read that.", s))
		}},
	}
}

// TextPlacements put a whole text (a command, a config line, a sentence)
// where transcripts hold text.
func TextPlacements() []Placement {
	tool := func(name, field string) func(string) compact.Message {
		return func(text string) compact.Message {
			return compact.Message{UUID: "u", SessionID: "s", Role: compact.RoleAssistant,
				Blocks: []compact.Block{ToolUse(name, map[string]string{field: text})}}
		}
	}
	return []Placement{
		{"user text", func(text string) compact.Message { return block(compact.RoleUser, compact.BlockText, text) }},
		{"thinking", func(text string) compact.Message { return block(compact.RoleAssistant, compact.BlockThinking, text) }},
		{"a shell command", tool("Bash", "command")},
		{"file content", tool("Write", "content")},
		{"tool output", func(text string) compact.Message { return block(compact.RoleUser, compact.BlockToolResult, text) }},
	}
}

// ToolUse is a tool_use block calling name with input.
func ToolUse(name string, input map[string]string) compact.Block {
	b, err := json.Marshal(input)
	if err != nil {
		panic(err)
	}
	return compact.Block{Kind: compact.BlockToolUse, ToolName: name, ToolID: "toolu_1", Input: string(b)}
}

func block(role compact.Role, kind compact.BlockKind, text string) compact.Message {
	return compact.Message{UUID: "u", SessionID: "s", Role: role, Blocks: []compact.Block{{Kind: kind, Text: text}}}
}

func fill(format, secret string) string { return strings.ReplaceAll(format, "%s", secret) }
