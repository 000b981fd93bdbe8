package engine

import (
	"testing"

	"github.com/agentledger/ledger/compact"
)

func TestMeterLineShowsOnlyWhatIsKnown(t *testing.T) {
	t.Parallel()
	live := []compact.Message{
		{Role: compact.RoleUser, Blocks: []compact.Block{{Kind: compact.BlockText, Text: "run the tests"}}},
		{Role: compact.RoleAssistant, Blocks: []compact.Block{{Kind: compact.BlockToolUse, ToolName: "Bash", Input: `{"command":"go test ./..."}`}}},
		{Role: compact.RoleUser, Blocks: []compact.Block{{Kind: compact.BlockToolResult, Text: "ok  \tgithub.com/x/y\t0.1s\nFAIL\tgithub.com/x/z"}, {Kind: compact.BlockImage}}},
	}
	u := &compact.Usage{InputTokens: 120, CacheCreationInputTokens: 1000, CacheReadInputTokens: 38000, OutputTokens: 1234}
	tests := []struct {
		name  string
		parts meterParts
		want  string
	}{
		{"no usage: estimates, marked", meterParts{live: live, ratio: 0.004},
			"ctx 0% (estimated) · transcript ~1,705 · tool results ~24 · images 1"},
		{"usage split: exact, thousands", meterParts{live: live, usage: u, ratio: 0.196},
			"ctx 20% · cached 38,000 · new 1,120 · output 1,234 · tool results ~24 · images 1"},
		{"total only: no made-up split", meterParts{live: live[:2], usage: &compact.Usage{InputTokens: 39120}, totalOnly: true, ratio: 0.15},
			"ctx 15% · context 39,120 · tool results ~0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.parts.line(); got != tc.want {
				t.Errorf("line\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
