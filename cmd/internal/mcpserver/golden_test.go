package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/mcp/tools.golden.json")

// goldenTools is what tools/list returns, kept in the repository so that a
// changed description or schema shows in review. The end-to-end test in
// cmd/ledger compares the binary's list with it too.
var goldenTools = filepath.Join("..", "..", "..", "testdata", "mcp", "tools.golden.json")

// TestToolsListGolden: tools/list is the golden file (go test -run
// ToolsListGolden ./cmd/internal/mcpserver -update rewrites it).
func TestToolsListGolden(t *testing.T) {
	f := newFixture(t, 0)
	lt, err := f.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(lt.Tools, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.MkdirAll(filepath.Dir(goldenTools), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenTools, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenTools)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("tools/list differs from %s (run with -update if the change is meant):\n%s", goldenTools, got)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
		if tl.Description == "" || tl.InputSchema == nil || tl.OutputSchema == nil {
			t.Errorf("%s: description, input or output schema missing", tl.Name)
		}
	}
	if want := []string{"audit", "handoff", "message", "meter", "note", "resume", "search", "sessions"}; !equalSorted(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

func equalSorted(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]bool{}
	for _, x := range a {
		seen[x] = true
	}
	for _, x := range b {
		if !seen[x] {
			return false
		}
	}
	return true
}
