package secrets

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentledger/ledger/store/secrets/secretstest"
)

// TestRedactEveryPlacement redacts each kind of secret in each placement
// (secretstest.Placements: prose, paths, URLs, tool inputs, file content,
// tool output): nothing of it may be left in the message's blocks (tool
// inputs raw and decoded) or in its search text, and a tool input stays
// JSON.
func TestRedactEveryPlacement(t *testing.T) {
	kinds := secretstest.Kinds()
	missed := map[string]int{}
	for _, p := range secretstest.Placements() {
		for _, k := range kinds {
			red, text, _ := testRedactor.RedactMessage(p.Message(k.Value))
			b, err := json.Marshal(red.Blocks)
			if err != nil {
				t.Fatal(err)
			}
			var decoded strings.Builder
			for _, blk := range red.Blocks {
				decoded.WriteString(decodedInput(blk.Input))
				if blk.Input != "" && !json.Valid([]byte(blk.Input)) {
					t.Errorf("%s, %s: the tool input is no longer JSON: %s", p.Name, k.Kind, blk.Input)
				}
			}
			for _, where := range []string{string(b), text, decoded.String()} {
				if strings.Contains(where, k.Value) {
					missed[k.Kind]++
					t.Errorf("%s, %s: not redacted: %.160s", p.Name, k.Kind, where)
					break
				}
			}
			if !strings.Contains(text, "[REDACTED:"+k.Kind+"]") {
				t.Errorf("%s, %s: no [REDACTED:%s] in %.160s", p.Name, k.Kind, k.Kind, text)
			}
		}
	}
	if len(missed) > 0 {
		t.Errorf("kinds missed in some placement: %d of %d: %v", len(missed), len(kinds), missed)
	}
}

// TestRedactCredentials: credentials that are not a provider's token (an
// Azure storage connection string in a shell command, a database password
// in prose or a config line) are found in every placement, under their
// own kind; what is not a secret (a placeholder, a variable, code reading
// one) is left alone.
func TestRedactCredentials(t *testing.T) {
	for _, c := range secretstest.Credentials() {
		for _, p := range secretstest.TextPlacements() {
			red, text, _ := testRedactor.RedactMessage(p.Message(c.Text))
			b, _ := json.Marshal(red.Blocks)
			if strings.Contains(string(b), c.Value) || strings.Contains(text, c.Value) {
				t.Errorf("%s in %s: not redacted: %.200s", c.Kind, p.Name, text)
			} else if !strings.Contains(text, "[REDACTED:"+c.Kind+"]") {
				t.Errorf("%s in %s: redacted as another kind: %.200s", c.Kind, p.Name, text)
			}
		}
	}
	kept := []string{
		"DB_PASSWORD=${DB_PASSWORD}",
		"DB_PASSWORD=changeme",
		`password = os.environ["DB_PASSWORD"]`,
		`password := os.Getenv("DB_PASSWORD")`,
		"password: config.database.password",
		"if password == confirmPassword {",
		"AccountKey=<your-key>;",
		"docker login --password-stdin",
		"the password is stored in the keychain",
		"PASSWORD=********",
		`password_hash = "$2b$12$abcdefghijklmnop"`,
		"mysql -u root -p -h db-1",
		"ssh -p 2222 host; mysql -P 3306",
	}
	for _, text := range kept {
		if got, n := testRedactor.Redact(text); n != 0 {
			t.Errorf("Redact(%q) = %q: not a secret", text, got)
		}
	}
}
