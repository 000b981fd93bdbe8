package handoff

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentledger/ledger/transcript/transcripttest"
)

// corpusDir finds the shared corpus of real transcripts, or skips.
func corpusDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("LEDGER_CORPUS")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "corpus")
	}
	if _, err := os.Stat(filepath.Join(dir, "claude")); err != nil {
		if os.Getenv("LEDGER_REQUIRE_CORPUS") != "" {
			t.Fatalf("corpus required (LEDGER_REQUIRE_CORPUS) but not found at %s", dir)
		}
		t.Skipf("real transcript corpus not found at %s (set LEDGER_CORPUS): %v", dir, err)
	}
	return dir
}

func TestCorpusClaude(t *testing.T) {
	dir := corpusDir(t)
	cases := []struct {
		file      string
		wantFiles int // counted by hand with python3 over the raw JSON
	}{
		{"spotter-258c7280-ae70-4798-800f-63464d01a85d.jsonl", 26},
		{"spotter-ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl", 21},
	}
	for _, tc := range cases {
		t.Run(tc.file[:16], func(t *testing.T) {
			path := filepath.Join(dir, "claude", tc.file)
			edited := transcripttest.EditedFiles(t, path)
			if len(edited) != tc.wantFiles {
				t.Fatalf("raw JSON names %d edited files, python3 counted %d", len(edited), tc.wantFiles)
			}
			// A file the session created and later removed with rm changed
			// nothing.
			want := transcripttest.NotRemoved(t, path, edited)
			s := decodeClaude(t, path)
			doc := Extract(s.msgs, ExtractOptions{Project: s.project, Branch: s.branch, Trigger: "manual",
				Compactions: s.compactions})
			got := map[string]bool{}
			for _, p := range doc.FilesModified {
				got[p] = true
			}
			for _, p := range want {
				if !got[p] {
					t.Errorf("files_modified lacks %s", p)
				}
			}
			if len(doc.FilesModified) != len(want) {
				t.Errorf("files_modified has %d files, the transcript edits %d", len(doc.FilesModified), len(want))
			}
			if doc.Task == "" || doc.Session == "" || doc.CreatedAt.IsZero() {
				t.Errorf("task %q, session %q, created %v: want all set", doc.Task, doc.Session, doc.CreatedAt)
			}

			const budget = DefaultBudget
			md := Render(doc, budget, ApproxTokens)
			tokens := ApproxTokens(md)
			if tokens > budget {
				t.Errorf("markdown is %d tokens, budget %d", tokens, budget)
			}
			shown := 0
			for _, p := range want {
				if line := "- " + showPath(p, doc.Project); strings.Contains(md, line+"\n") || strings.Contains(md, line+" (") {
					shown++
				}
			}
			if shown != len(want) {
				t.Errorf("markdown at budget %d shows %d of %d files", budget, shown, len(want))
			}
			t.Logf("%s: %d/%d files shown, markdown %d tokens (chars/4) at budget %d; "+
				"native compaction summary %d chars = %d tokens (chars/4)",
				tc.file[:16], shown, len(want), tokens, budget, len([]rune(s.summary)), ApproxTokens(s.summary))
			if testing.Verbose() {
				t.Logf("\n%s", md)
			}

			back, err := Parse(Render(doc, 1<<30, ApproxTokens))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := carried(back), carried(doc); !reflect.DeepEqual(got, want) {
				t.Errorf("round trip differs:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestCorpusCodex(t *testing.T) {
	dir := corpusDir(t)
	paths, _ := filepath.Glob(filepath.Join(dir, "codex", "localpush-rollout-2026-02-23T12-54-34-*.jsonl"))
	if len(paths) != 1 {
		t.Fatalf("codex rollout not found in %s", dir)
	}
	s := decodeCodex(t, paths[0])
	doc := Extract(s.msgs, ExtractOptions{Project: s.project, Branch: s.branch, Trigger: "manual",
		Compactions: s.compactions})
	md := Render(doc, 0, ApproxTokens)
	t.Logf("\n%s", md)
	// The author redacted every free text: the task must be the first typed
	// request (len=32 placeholder), not AGENTS.md or the environment block.
	if !strings.HasPrefix(doc.Task, "[REDACTED_TEXT len=32 ") {
		t.Errorf("task = %q, want the first typed request's placeholder", doc.Task)
	}
	if doc.Session != "019c8a59-e9dd-71f0-9ae3-4079fe9726a9" || doc.Branch != "main" {
		t.Errorf("session %q branch %q", doc.Session, doc.Branch)
	}
	if !strings.Contains(doc.Context, "compactions: 1") {
		t.Errorf("context = %q, want the one compaction", doc.Context)
	}
	if n := ApproxTokens(md); n > DefaultBudget {
		t.Errorf("markdown is %d tokens, over the default budget", n)
	}
	if _, err := Parse(md); err != nil {
		t.Error(err)
	}
}

// TestCorpusAll extracts every corpus transcript: whatever it holds, the
// Markdown fits the default budget and reads back into the same document.
func TestCorpusAll(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the whole-corpus sweep reads every transcript")
	}
	dir := corpusDir(t)
	paths, _ := filepath.Glob(filepath.Join(dir, "*", "*.jsonl"))
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			var s session
			if filepath.Base(filepath.Dir(path)) == "codex" {
				s = decodeCodex(t, path)
			} else {
				s = decodeClaude(t, path)
			}
			doc := Extract(s.msgs, ExtractOptions{Project: s.project, Branch: s.branch, Compactions: s.compactions})
			md := Render(doc, 0, ApproxTokens)
			if n := ApproxTokens(md); n > DefaultBudget {
				t.Errorf("markdown is %d tokens", n)
			}
			if testing.Verbose() {
				t.Logf("\n%s", md)
			}
			back, err := Parse(Render(doc, 1<<30, ApproxTokens))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := carried(back), carried(doc); !reflect.DeepEqual(got, want) {
				t.Errorf("round trip differs:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}
