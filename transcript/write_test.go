package transcript

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/compact"
)

// split is a read's messages and boundaries, and its first session facts.
func split(recs []Record) (msgs []compact.Message, bounds []compact.Boundary, facts SessionFacts) {
	for _, r := range recs {
		if r.Message != nil {
			msgs = append(msgs, *r.Message)
		}
		if r.Boundary != nil {
			bounds = append(bounds, *r.Boundary)
		}
		if s := r.Session; s != nil {
			if facts.ID == "" {
				facts.ID = s.ID
			}
			if facts.Project == "" {
				facts.Project = s.Project
			}
			if facts.GitBranch == "" {
				facts.GitBranch = s.GitBranch
			}
			if s.Title != "" {
				facts.Title = s.Title
			}
			if s.Model != "" {
				facts.Model = s.Model
			}
		}
	}
	return msgs, bounds, facts
}

// A transcript written back from what a reader read reads back to the
// same messages and boundaries (Codex: but for the uuids, hashes of the
// lines), and writing is deterministic.
func TestWrittenTranscriptsReadBackTheSame(t *testing.T) {
	var gen bytes.Buffer
	if err := Generate(&gen, GenOptions{Seed: 7, Project: "/src/app", Messages: 300, CompactEvery: 120,
		Start: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	sample := filepath.Join("..", "testdata", "sample")
	tests := []struct {
		name   string
		format Format
		data   func(t *testing.T) []byte
	}{
		{"generated claude", FormatClaude, func(*testing.T) []byte { return gen.Bytes() }},
		{"sample claude", FormatClaude, func(t *testing.T) []byte {
			return readAll(t, filepath.Join(sample, "claude", "-home-dev-src-payments", "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57.jsonl"))
		}},
		{"sample codex", FormatCodex, func(t *testing.T) []byte {
			return readAll(t, filepath.Join(sample, "codex", "2026", "03", "02", "rollout-2026-03-02T14-00-00-0199f3a2-7d4e-7c10-b2a9-5e8f1d3c6a20.jsonl"))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs, _, _ := readBytes(t, tc.format, tc.data(t))
			msgs, bounds, facts := split(recs)
			if len(msgs) == 0 || tc.name == "generated claude" && len(bounds) == 0 {
				t.Fatalf("nothing to write back: %d messages, %d boundaries", len(msgs), len(bounds))
			}
			write := WriteClaude
			if tc.format == FormatCodex {
				write = WriteCodex
			}
			var out, again bytes.Buffer
			if err := write(&out, facts, msgs, bounds); err != nil {
				t.Fatal(err)
			}
			if err := write(&again, facts, msgs, bounds); err != nil || !bytes.Equal(out.Bytes(), again.Bytes()) {
				t.Fatalf("two writes differ (%v)", err)
			}
			recs2, res, _ := readBytes(t, tc.format, out.Bytes())
			if res.Skipped != 0 {
				t.Errorf("%d written lines skipped: %+v", res.Skipped, res.Skips)
			}
			msgs2, bounds2, facts2 := split(recs2)
			if facts2 != (SessionFacts{ID: facts.ID, Project: facts.Project, GitBranch: facts.GitBranch, Title: facts.Title, Model: facts.Model}) {
				t.Errorf("facts back %+v, want %+v", facts2, facts)
			}
			if len(bounds2) != len(bounds) {
				t.Errorf("%d boundaries back, want %d", len(bounds2), len(bounds))
			}
			if tc.format == FormatCodex {
				msgs, msgs2 = noUUIDs(msgs), noUUIDs(msgs2)
			} else if !reflect.DeepEqual(bounds2, bounds) {
				t.Errorf("boundaries back %+v, want %+v", bounds2, bounds)
			}
			if len(msgs2) != len(msgs) {
				t.Fatalf("%d messages back, want %d", len(msgs2), len(msgs))
			}
			for i := range msgs {
				if !reflect.DeepEqual(msgs2[i], msgs[i]) {
					t.Fatalf("message %d back\n %+v\nwant\n %+v", i, msgs2[i], msgs[i])
				}
			}
		})
	}
}

func noUUIDs(ms []compact.Message) []compact.Message {
	out := make([]compact.Message, len(ms))
	for i, m := range ms {
		m.UUID, m.ParentUUID = "", ""
		out[i] = m
	}
	return out
}

func readAll(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The Markdown transcript shows each message, fences tool output (a fence
// longer than any backtick run in it) and marks compactions.
func TestWriteMarkdown(t *testing.T) {
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	msgs := []compact.Message{
		{UUID: "a", Role: compact.RoleUser, Time: at, Blocks: []compact.Block{{Kind: compact.BlockText, Text: "fix it"}}},
		{UUID: "b", Role: compact.RoleAssistant, Time: at.Add(time.Second), Blocks: []compact.Block{
			{Kind: compact.BlockThinking, Text: "look first"},
			{Kind: compact.BlockToolUse, ToolName: "Bash", ToolID: "t1", Input: `{"command":"go test"}`}}},
		{UUID: "c", ParentUUID: "b", Role: compact.RoleUser, Time: at.Add(2 * time.Second), Blocks: []compact.Block{
			{Kind: compact.BlockToolResult, ToolID: "t1", Text: "```\nFAIL", IsError: true}}},
		{UUID: "d", ParentUUID: "x", Role: compact.RoleUser, CompactSummary: true, Time: at.Add(4 * time.Second),
			Blocks: []compact.Block{{Kind: compact.BlockText, Text: "summary"}}},
	}
	bounds := []compact.Boundary{compact.NewBoundary("s", "x", "auto", at.Add(3*time.Second), 150000, 0)}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, SessionFacts{ID: "s", Title: "Fix it", Project: "/src/app"}, msgs, bounds); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{"# Fix it\n", "- Project: /src/app\n", "## #0 · user · 2026-03-02 09:00:00Z\n\nfix it\n",
		"> look first\n", "**Bash** call `t1`\n```\n{\"command\":\"go test\"}\n```\n", "**error** of `t1`\n````\n```\nFAIL\n````\n",
		"---\n\n*Context compacted (auto) at 2026-03-02 09:00:03Z, 150000 tokens before.*\n\n## #3 · compaction summary · "} {
		if !strings.Contains(got, want) {
			t.Errorf("markdown lacks %q:\n%s", want, got)
		}
	}
}
