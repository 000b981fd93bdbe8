package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoLLMSDKLinked checks that the ledger binary does not link the
// Anthropic SDK: the CLI never calls an LLM (compact/anthropic is apart for
// that), and every package linked in is initialised at each start, which
// `ledger version` pays for.
func TestNoLLMSDKLinked(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list -deps listed %d packages; want the ledger's whole graph", len(deps))
	}
	for _, p := range deps {
		if strings.HasPrefix(p, "github.com/anthropics/") || p == "github.com/agentledger/ledger/compact/anthropic" {
			t.Errorf("cmd/ledger links %s", p)
		}
	}
}

// TestNoGitleaksConfigLinked checks that the ledger binary does not link
// gitleaks (store/secrets has gitleaks' rules as generated Go data) nor
// what its config package brings: viper and its decoders, zerolog. Each
// would be initialised at every start (+0.3 ms and 2 MB for the config
// package alone).
func TestNoGitleaksConfigLinked(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list -deps listed %d packages; want the ledger's whole graph", len(deps))
	}
	banned := []string{
		"github.com/zricethezav/gitleaks/v8",
		"github.com/spf13/viper",
		"github.com/rs/zerolog",
		"github.com/spf13/afero",
		"github.com/hashicorp/hcl",
		"github.com/BobuSumisu/aho-corasick",
	}
	for _, p := range deps {
		for _, m := range banned {
			if p == m || strings.HasPrefix(p, m+"/") {
				t.Errorf("cmd/ledger links %s", p)
			}
		}
	}
}
