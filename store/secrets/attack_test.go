package secrets

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agentledger/ledger/compact"
)

// attackValue is a generated password-like value: random, seeded, so that
// no live secret sits in the source.
func attackValue(seed uint64, alphabet string, n int) string {
	rnd := rand.New(rand.NewPCG(seed, 97))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rnd.IntN(len(alphabet))]
	}
	return string(b)
}

const attackAlnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// TestRedactAttacks holds what an adversarial run got past the rules: a URL
// with an empty user or a '/' or '@' in its password, a private key cut
// before its END line, an assignment hidden behind an allowlisted match,
// and secrets given on command lines. Every secret must go, whole and in
// part, under the kind named; and redacting again changes nothing.
func TestRedactAttacks(t *testing.T) {
	pw := attackValue(1, attackAlnum, 14)
	sym := attackValue(2, attackAlnum+"!#%*+-._~^", 16)
	tok := attackValue(3, attackAlnum, 24)
	body := attackValue(4, attackAlnum+"+/", 600)
	pemLines := func(sep string) string {
		var lines []string
		for i := 0; i < len(body); i += 64 {
			lines = append(lines, body[i:min(len(body), i+64)])
		}
		return strings.Join(lines, sep)
	}
	tests := []struct {
		name, in string
		secrets  []string // each must be gone from the output
		kind     string   // the kind named, or kinds, one of which is
	}{
		// URLs.
		{"url, empty user", "redis-cli -u redis://:" + pw + "@cache.internal:6379/0 ping", []string{pw}, "url-credentials"},
		{"url, empty user, in an env line", "REDIS_URL=redis://:" + pw + "@10.0.0.7:6379", []string{pw}, "url-credentials"},
		{"url, slash and at in the password", "psql postgres://app:p@ss/w0rd" + pw[:4] + "@db.internal:5432/app",
			[]string{"p@ss/w0rd" + pw[:4], "ss/w0rd" + pw[:4]}, "url-credentials"},
		{"url, at and colon in the password", "DATABASE_URL=mysql://root:" + pw[:6] + "@:" + pw[6:] + "@127.0.0.1/app",
			[]string{pw[:6] + "@:" + pw[6:], pw[6:]}, "url-credentials"},
		{"url, query with an email after the password", "https://bot:" + pw + "@api.example.com/v1/users?email=bob@example.com",
			[]string{pw}, "url-credentials"},
		// Private keys cut before their END line.
		{"truncated pem, newlines", "-----BEGIN RSA PRIVATE KEY-----\n" + pemLines("\n")[:400] + "\n... (truncated: 1.2 KB more)",
			[]string{body[:60], body[300:340]}, "private-key-truncated"},
		{"truncated pem, JSON escapes", `{"content":"-----BEGIN OPENSSH PRIVATE KEY-----\n` + pemLines(`\n`)[:500] + `[truncated]"}`,
			[]string{body[:60], body[300:340]}, "private-key-truncated"},
		{"truncated pem, no newline at all", "key=-----BEGIN PRIVATE KEY-----" + body[:200], []string{body[:60], body[100:160]}, "private-key-truncated"},
		// Assignments behind an allowlisted match.
		{"password name, then an assignment", "password: DB_PASSWORD=" + sym, []string{sym}, "password"},
		{"token name, then an assignment", "token: GITLAB_TOKEN=" + tok, []string{tok}, "generic-api-key"},
		{"password placeholder, then an assignment", "password=${X} DB_PASSWORD=" + sym, []string{sym}, "password"},
		{"an assignment after many dropped ones, one line", strings.Repeat(" password=hunter2hunter2", 300) + " password: DB_PASSWORD=" + sym,
			[]string{sym}, "password"},
		{"an assignment among many dropped ones, one line", strings.Repeat(" password=hunter2hunter2", 150) + " password=${X} DB_PASSWORD=" + sym +
			strings.Repeat(" password=hunter2hunter2", 150), []string{sym}, "password"},
		// Command lines.
		{"docker login -p", "docker login -u deploy -p " + pw + " registry.example.com", []string{pw}, "cli-password"},
		{"docker login --password", "docker login --password " + pw + " --username deploy ghcr.io", []string{pw}, "cli-password"},
		{"docker login --password=", "docker login --username deploy --password=" + sym + " ghcr.io", []string{sym}, "password|cli-password"},
		{"podman login -p quoted", "podman login -u x -p '" + sym + "' quay.io", []string{sym}, "cli-password"},
		{"sshpass -p", "sshpass -p '" + sym + "' ssh deploy@10.0.0.7 uptime", []string{sym}, "cli-password"},
		{"sshpass -p attached", "sshpass -p" + pw + " scp a.txt host:", []string{pw}, "cli-password"},
		{"mysql -p attached", "mysql -uroot -p" + pw + " app < dump.sql", []string{pw}, "password"},
		{"mysqldump --password=", "mysqldump --password=" + sym + " app", []string{sym}, "password|cli-password"},
		{"curl -u", "curl -s -u deploy:" + pw + " https://api.example.com/v1", []string{pw}, "curl-auth-user"},
		{"curl --user", "curl --user deploy:" + pw + " https://api.example.com/v1", []string{pw}, "curl-auth-user"},
		{"redis-cli -a", "redis-cli -h cache -a " + pw + " ping", []string{pw}, "cli-password"},
		{"ldapsearch -w", "ldapsearch -x -D cn=admin,dc=x -w " + pw + " -b dc=x", []string{pw}, "cli-password"},
		{"mongosh --password", "mongosh --username admin --password " + pw + " mongodb://db", []string{pw}, "cli-password"},
		{"mongo -p", "mongo -u admin -p " + pw + " --authenticationDatabase admin", []string{pw}, "cli-password"},
		{"az login -p", "az login --service-principal -u app-id -p " + pw + " --tenant t1", []string{pw}, "cli-password"},
		{"openssl pass:", "openssl pkcs12 -export -in c.pem -passout pass:" + pw + " -out c.p12", []string{pw}, "cli-password"},
		{"keytool -storepass", "keytool -importkeystore -srckeystore a.jks -storepass " + pw, []string{pw}, "cli-password"},
		{"zip -P", "zip -P " + pw + " backup.zip db.sql", []string{pw}, "cli-password"},
		{"7z -p attached", "7z a -p" + pw + " backup.7z db.sql", []string{pw}, "cli-password"},
		{"ssh-keygen -N", "ssh-keygen -t ed25519 -N " + pw + " -f deploy_key", []string{pw}, "cli-password"},
		{"smbclient -U user%pass", "smbclient //fs/share -U admin%" + pw, []string{pw}, "cli-password"},
		{"httpie -a", "http -a admin:" + pw + " GET https://api.example.com", []string{pw}, "cli-password"},
		{"helm --password", "helm repo add acme https://charts.acme.dev --username u --password " + pw, []string{pw}, "cli-password"},
		{"wget --http-password", "wget --http-user=u --http-password " + pw + " https://x/y", []string{pw}, "cli-password"},
		{"aws configure set", "aws configure set aws_secret_access_key " + attackValue(6, attackAlnum+"/+", 40), nil, "aws-secret-access-key"},
		{"sqlcmd -P", "sqlcmd -S db -U sa -P " + pw + " -Q 'select 1'", []string{pw}, "cli-password"},
		{"twine -p", "twine upload -u deploy -p " + pw + " dist/*", []string{pw}, "cli-password"},
		{"openssl enc -k", "openssl enc -aes-256-cbc -k " + pw + " -in a -out b", []string{pw}, "cli-password"},
		{"htpasswd -b", "htpasswd -bc /etc/nginx/.htpasswd admin " + pw, []string{pw}, "cli-password"},
		{"kubectl --token", "kubectl --token " + tok + " get pods", []string{tok}, "cli-token"},
		{"--api-key", "tool deploy --api-key " + tok + " --region eu", []string{tok}, "cli-token"},
		{"--client-secret=", "az ad sp login --client-secret=" + sym, []string{sym}, "cli-token"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.secrets == nil {
				tc.secrets = []string{tc.in[strings.LastIndexByte(tc.in, ' ')+1:]}
			}
			got, _ := testRedactor.Redact(tc.in)
			for _, s := range tc.secrets {
				if strings.Contains(got, s) {
					t.Errorf("Redact(%q)\n= %q\nstill holds %q", tc.in, got, s)
				}
			}
			named := false
			for _, kind := range strings.Split(tc.kind, "|") {
				named = named || strings.Contains(got, "[REDACTED:"+kind+"]")
			}
			if !named {
				t.Errorf("Redact(%q)\n= %q, want [REDACTED:%s]", tc.in, got, tc.kind)
			}
			if again, n := testRedactor.Redact(got); again != got || n != 0 {
				t.Errorf("not idempotent: %q -> %q (%d)", got, again, n)
			}
			// The same text in a tool input (JSON) and a tool result.
			in, _ := json.Marshal(map[string]string{"command": tc.in})
			m := compact.Message{UUID: "u", SessionID: "s", Role: compact.RoleAssistant, Blocks: []compact.Block{
				{Kind: compact.BlockToolUse, ToolName: "Bash", ToolID: "t", Input: string(in)},
				{Kind: compact.BlockToolResult, Text: tc.in},
			}}
			red, text, _ := testRedactor.RedactMessage(m)
			b, _ := json.Marshal(red.Blocks)
			for _, s := range tc.secrets {
				if strings.Contains(string(b), s) || strings.Contains(text, s) || strings.Contains(decodedInput(red.Blocks[0].Input), s) {
					t.Errorf("RedactMessage leaves %q: %s", s, b)
				}
			}
			if !json.Valid([]byte(red.Blocks[0].Input)) {
				t.Errorf("tool input no longer JSON: %s", red.Blocks[0].Input)
			}
		})
	}
}

// TestRedactAttacksKept are the look-alikes that are no secret: they must
// stay as they are.
func TestRedactAttacksKept(t *testing.T) {
	kept := []string{
		"password: ${DB_PASSWORD}",
		"password: $DB_PASSWORD",
		"DB_PASSWORD",
		"GITLAB_TOKEN",
		"export GITLAB_TOKEN",
		"token: GITLAB_TOKEN",
		"docker login -u user --password-stdin",
		"echo \"$CR_PAT\" | docker login ghcr.io -u deploy --password-stdin",
		"docker login -u deploy -p $REGISTRY_PASSWORD registry.example.com",
		"docker login --password \"${REGISTRY_PASSWORD}\" ghcr.io",
		"docker run -p 8080:80 -p 8443:443 nginx",
		"sshpass -f ~/.pw ssh host",
		"sshpass -e ssh deploy@host",
		"sshpass -p \"$SSHPASS\" ssh deploy@host",
		"mysql -u root -p app",
		"ssh -p 2222 deploy@host",
		"scp -P 2222 a.txt host:/tmp",
		"mkdir -p /tmp/build/out",
		"git add -p internal/store/writer.go",
		"redis-cli -a \"$REDIS_PASSWORD\" ping",
		"mongosh --password --username admin",
		"tool --password <password>",
		"tool --token TOKEN",
		"tool --token $GITHUB_TOKEN",
		"use the --token flag to pass it",
		"the --api-key option takes a key",
		"--password-file /run/secrets/db",
		"--token-file /var/run/token",
		"kubectl get secret my-secret -o yaml",
		"tool --secret-name prod-db-credentials",
		"curl -u deploy:$API_PASSWORD https://api.example.com",
		"redis://localhost:6379/0",
		"redis://cache.internal:6379",
		"http://[::1]:8080/health",
		"git@github.com:org/repo.git",
		"ssh://git@github.com/org/repo",
		"https://user@example.com/path",
		"postgres://user:password@localhost/db",
		"postgres://app:${DB_PASSWORD}@db/app",
		"redis://:${REDIS_PASSWORD}@cache:6379",
		"https://medium.com/@dev/a-long-title-1234",
		"https://example.com/users?email=bob@example.com&x=1",
		"npm i @scope/pkg@1.2.3",
		"-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n",
		"-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n",
		`if strings.HasPrefix(s, "-----BEGIN RSA PRIVATE KEY-----") {`,
		`const pemHeader = "-----BEGIN PRIVATE KEY-----\n" + body`,
		"ssh-keygen -t ed25519 -N \"\" -f key",
		"zip -r out.zip dir",
		"the tests pass --verbose and all",
		"npx jest --passWithNoTests --coverage",
		"pytest --pass-with-no-tests tests/unit",
		"openssl pkcs12 -in c.p12 -passin env:P12_PASSWORD -nodes",
		"openssl rsa -in key.pem -passin file:/run/secrets/pw",
		"sshpass -p password ssh host",
		"docker login -u deploy -p yourpassword registry.example.com",
		"docker build --secret id=npm,src=$HOME/.npmrc .",
		"gcloud auth activate-service-account --key-file ./sa-key.json",
		"terraform apply --token-file /run/tok",
		"tool --api-key ~/.config/tool/key.txt",
		"llm prompt --max-tokens 4096",
		"unzip -p archive.zip file.txt",
		"docker run -P myimage:latest",
		"aws configure set region eu-west-1",
		"aws configure set aws_secret_access_key $AWS_SECRET",
		"htpasswd -c /etc/nginx/.htpasswd admin",
		"openssl req -new -key server.key -out server.csr",
		"twine upload dist/*",
	}
	for _, text := range kept {
		if got, n := testRedactor.Redact(text); n != 0 || got != text {
			t.Errorf("Redact(%q) = %q: not a secret", text, got)
		}
	}
}

// TestRedactWholeKeyOnce: a private key with its END line is one finding,
// named private-key, not also a truncated one.
func TestRedactWholeKeyOnce(t *testing.T) {
	body := attackValue(5, attackAlnum+"+/", 256)
	key := "-----BEGIN RSA PRIVATE KEY-----\n" + body[:64] + "\n" + body[64:128] + "\n" + body[128:] + "\n-----END RSA PRIVATE KEY-----"
	got, n := testRedactor.Redact("cat id_rsa\n" + key + "\n")
	if n != 1 || got != "cat id_rsa\n[REDACTED:private-key]\n" {
		t.Errorf("Redact = %q, %d findings; want one private-key", got, n)
	}
}
