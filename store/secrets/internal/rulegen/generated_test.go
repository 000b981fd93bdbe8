package rulegen_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentledger/ledger/store/secrets/internal/rulegen"
)

// root is the repository's top folder, from this module's.
const root = "../../../.."

// compared is set by gitleaks_test.go, which builds only with the tag
// ledger_gitleaks.
var compared bool

// TestComparedWithGitleaks fails when the comparisons with gitleaks were
// left out of the build, rather than letting them pass by not running.
func TestComparedWithGitleaks(t *testing.T) {
	if !compared {
		t.Fatal("the comparisons with gitleaks are not built: run go test -tags ledger_gitleaks ./...")
	}
}

// TestGitleaksRulesGenerated checks that store/secrets/gitleaks_rules.go
// is what the generator makes of the gitleaks module this module's go.mod
// requires: upgrading gitleaks without `go generate ./store/secrets` fails
// here.
func TestGitleaksRulesGenerated(t *testing.T) {
	mod, err := rulegen.Module()
	if err != nil {
		t.Fatal(err)
	}
	want, err := rulegen.Source(mod)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "store", "secrets", "gitleaks_rules.go"))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?m)^const gitleaksVersion = "(.*)"$`).FindSubmatch(got); m == nil || string(m[1]) != mod.Version {
		t.Fatalf("gitleaks_rules.go does not hold the rules of gitleaks %s, which go.mod requires: run go generate ./store/secrets", mod.Version)
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
