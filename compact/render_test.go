package compact

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in ../testdata/compact")

// sampleConversation is a short coding session with every kind of block.
func sampleConversation() []Message {
	return []Message{
		{Role: RoleUser, Blocks: text("Make `ledger search` accept --since. Keep the FTS query quoted.")},
		{Role: RoleUser, Meta: true, Blocks: text("<system-reminder>CLAUDE.md: run go vet before committing</system-reminder>")},
		{Role: RoleAssistant, Blocks: []Block{
			{Kind: BlockThinking, Text: "private reasoning"},
			{Kind: BlockText, Text: "I'll look at the command first."},
			{Kind: BlockToolUse, ToolID: "t1", ToolName: "Read", Input: `{"file_path":"cmd/ledger/search.go"}`},
		}},
		{Role: RoleUser, Blocks: []Block{{Kind: BlockToolResult, ToolID: "t1", Text: strings.Repeat("package main // search.go\n", 200)}}},
		{Role: RoleAssistant, Blocks: []Block{{Kind: BlockToolUse, ToolID: "t2", ToolName: "Bash", Input: `{"command":"go test ./cmd/..."}`}}},
		{Role: RoleUser, Blocks: []Block{{Kind: BlockToolResult, ToolID: "t2", IsError: true, Text: "--- FAIL: TestSearchSince\n    search_test.go:41: got 0 hits, want 2"}}},
		{Role: RoleUser, Blocks: []Block{{Kind: BlockImage}}},
	}
}

func TestRenderTranscript(t *testing.T) {
	got := RenderTranscript(sampleConversation(), 300)
	golden := filepath.Join("..", "testdata", "compact", "render_transcript.golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("RenderTranscript differs from %s:\n%s", golden, got)
	}
	if strings.Contains(got, "private reasoning") {
		t.Error("thinking was rendered")
	}
}
