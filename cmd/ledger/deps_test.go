package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNothingUnusedLinked checks that the ledger binary does not link what
// it never uses: every package linked in is initialised at each start,
// which `ledger version` pays for.
//
//   - The Anthropic SDK: the CLI never calls an LLM (compact/anthropic is
//     apart for that).
//   - agenttest: the scripted model server and agent runner of the
//     end-to-end tests, test code only.
//   - gitleaks and what its config package brings (viper and its decoders,
//     zerolog, an Aho-Corasick trie): store/secrets has gitleaks' rules as
//     generated Go data (+0.3 ms and 2 MB for the config package alone).
func TestNothingUnusedLinked(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list -deps listed %d packages; want the ledger's whole graph", len(deps))
	}
	banned := []string{
		"github.com/anthropics",
		"github.com/agentledger/ledger/compact/anthropic",
		"github.com/agentledger/ledger/cmd/internal/agenttest",
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
