package transcript

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentledger/ledger/compact"
)

// corpusDir finds the shared corpus of real transcripts: $LEDGER_CORPUS,
// else shared/corpus beside the repository (../shared/corpus from the
// module root), and skips the test when it is absent.
func corpusDir(t testing.TB) string {
	t.Helper()
	if dir := os.Getenv("LEDGER_CORPUS"); dir != "" {
		if _, err := os.Stat(dir); err != nil {
			if os.Getenv("LEDGER_REQUIRE_CORPUS") != "" {
				t.Fatalf("corpus required (LEDGER_REQUIRE_CORPUS) but not found at %s", dir)
			}
			t.Skipf("corpus not found at %s: set LEDGER_CORPUS", dir)
		}
		return dir
	}
	candidates := []string{
		filepath.Join("..", "..", "shared", "corpus"), // from transcript/ via the module root
		filepath.Join("..", "shared", "corpus"),
	}
	for _, dir := range candidates {
		if _, err := os.Stat(filepath.Join(dir, "README.md")); err == nil {
			return dir
		}
	}
	abs, _ := filepath.Abs(candidates[0])
	if os.Getenv("LEDGER_REQUIRE_CORPUS") != "" {
		t.Fatalf("corpus required (LEDGER_REQUIRE_CORPUS) but not found at %s", abs)
	}
	t.Skipf("corpus not found at %s: set LEDGER_CORPUS", abs)
	return ""
}

// corpusWant is what one corpus file must read as. The figures were
// counted independently of this package, with python3 and jq over the raw
// JSON (see the report that came with this test): a Claude message is a
// user or assistant line or a system local_command line; a Codex message
// is a response_item of type message, function_call, custom_tool_call,
// web_search_call, *_call_output or reasoning.
type corpusWant struct {
	file     string
	format   Format
	lines    int
	messages int
	roles    map[compact.Role]int
	// responses is the number of distinct ResponseIDs; usages the number
	// of messages carrying a Usage.
	responses, usages   int
	toolUse, toolResult int
	isError, thinking   int
	meta, sidechain     int
	compactSummary      int
	sessionRecords      int
	titles              []string
	bounds              []compact.Boundary // Trigger and PreTokens compared
	// dangling counts messages whose parent is neither "" nor a message or
	// boundary read before (after parents are resolved past skipped lines).
	dangling int
}

var corpusWants = []corpusWant{
	{file: "claude/agenthistory-session-01.jsonl", format: FormatClaude, lines: 5, messages: 2,
		roles:     map[compact.Role]int{"user": 1, "assistant": 1},
		responses: 1, usages: 1, sessionRecords: 2},
	{file: "claude/ccviewer-1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl", format: FormatClaude, lines: 29, messages: 29,
		roles:     map[compact.Role]int{"user": 14, "assistant": 15},
		responses: 7, usages: 15, toolUse: 12, toolResult: 12, isError: 1, meta: 2, sessionRecords: 1},
	{file: "claude/ccviewer-fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl", format: FormatClaude, lines: 438, messages: 437,
		roles:     map[compact.Role]int{"user": 175, "assistant": 262},
		responses: 170, usages: 262, toolUse: 167, toolResult: 167, isError: 23, meta: 2, sidechain: 405,
		sessionRecords: 6, titles: []string{"Empty Repo Setup: CLAUDE.md Foundation Created"}},
	// Two of its user messages are prompts typed while the agent worked
	// ("check again", "new beads for the epic were added. tackle them"):
	// their queue-operation enqueue/remove lines are their only record.
	{file: "claude/spotter-258c7280-ae70-4798-800f-63464d01a85d.jsonl", format: FormatClaude, lines: 1863, messages: 493,
		roles:     map[compact.Role]int{"user": 194, "assistant": 299},
		responses: 152, usages: 299, toolUse: 186, toolResult: 186, isError: 7, thinking: 19, meta: 3,
		compactSummary: 1, sessionRecords: 1,
		bounds: []compact.Boundary{{Trigger: "auto", PreTokens: 167094}}},
	{file: "claude/spotter-258c7280-ae70-4798-800f-63464d01a85d.subagents.agent-acompact-fffbd0.jsonl", format: FormatClaude,
		lines: 4, messages: 4, roles: map[compact.Role]int{"user": 3, "assistant": 1},
		responses: 1, usages: 1, meta: 2, sidechain: 4, sessionRecords: 1, dangling: 3},
	{file: "claude/spotter-ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl", format: FormatClaude, lines: 2385, messages: 657,
		roles:     map[compact.Role]int{"user": 249, "assistant": 408},
		responses: 217, usages: 408, toolUse: 242, toolResult: 242, isError: 12, thinking: 6, meta: 4,
		compactSummary: 1, sessionRecords: 1,
		bounds: []compact.Boundary{{Trigger: "manual", PreTokens: 142431}}},
	{file: "claude/spotter-ae4a77f8-aedd-4bc1-888f-c94edc91af04.subagents.agent-acompact-946d2b.jsonl", format: FormatClaude,
		lines: 2, messages: 2, roles: map[compact.Role]int{"user": 1, "assistant": 1},
		responses: 1, usages: 1, sidechain: 2, sessionRecords: 1, dangling: 1},
	{file: "claude/spotter-fa812bfe-b295-4cca-9c2f-fdf01028cb46.subagents.agent-a93ccab.jsonl", format: FormatClaude,
		lines: 116, messages: 62, roles: map[compact.Role]int{"user": 26, "assistant": 36},
		responses: 11, usages: 36, toolUse: 25, toolResult: 25, sidechain: 62, sessionRecords: 1},
	{file: "claude/spotter-short.jsonl", format: FormatClaude, lines: 15, messages: 11,
		roles:     map[compact.Role]int{"user": 4, "assistant": 5, "system": 2},
		responses: 1, usages: 5, toolUse: 2, toolResult: 2, isError: 2, thinking: 1, meta: 3, sessionRecords: 1},
	{file: "claude/spotter-subagent.jsonl", format: FormatClaude, lines: 96, messages: 48,
		roles:     map[compact.Role]int{"user": 20, "assistant": 28},
		responses: 12, usages: 28, toolUse: 16, toolResult: 16, thinking: 4, meta: 3, sessionRecords: 1},
	{file: "claude/spotter-tool_heavy.jsonl", format: FormatClaude, lines: 39, messages: 24,
		roles:     map[compact.Role]int{"user": 13, "assistant": 9, "system": 2},
		responses: 4, usages: 9, toolUse: 6, toolResult: 6, thinking: 1, meta: 7, sessionRecords: 1},
	{file: "codex/localpush-rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl", format: FormatCodex,
		lines: 702, messages: 341, roles: map[compact.Role]int{"system": 10, "user": 10, "assistant": 217, "tool": 104},
		toolUse: 105, toolResult: 104, thinking: 69, meta: 10,
		// 1 session_meta + 81 turn_context + 5 task_started + 161 token_count with usage
		sessionRecords: 248},
	{file: "codex/localpush-rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl", format: FormatCodex,
		lines: 2722, messages: 1302, roles: map[compact.Role]int{"system": 45, "user": 46, "assistant": 846, "tool": 365},
		toolUse: 372, toolResult: 365, thinking: 219, meta: 45,
		// 1 session_meta + 286 turn_context + 33 task_started + 572 token_count with info
		sessionRecords: 892,
		// The token_count just before `compacted` reports all zeros (the
		// compaction's own call): the one before it, 209950, is the
		// context that was compacted.
		bounds: []compact.Boundary{{Trigger: "auto", PreTokens: 209950}}},
}

func TestCorpus(t *testing.T) {
	dir := corpusDir(t)
	all, err := filepath.Glob(filepath.Join(dir, "*", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(all), len(corpusWants); got != want {
		t.Errorf("corpus has %d files, the table %d: update the table", got, want)
	}
	for _, w := range corpusWants {
		t.Run(filepath.Base(w.file), func(t *testing.T) {
			path := filepath.Join(dir, w.file)
			if format := detectFile(t, path); format != w.format {
				t.Fatalf("format = %q, want %q", format, w.format)
			}
			recs, res, st := readFile(t, path)
			if res.Skipped != 0 || res.Repaired != 0 {
				t.Errorf("skipped %d (%v), repaired %d; want none", res.Skipped, res.Skips, res.Repaired)
			}
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if res.End != info.Size() || res.Lines != w.lines || res.NextLine != w.lines+1 {
				t.Errorf("End %d, Lines %d, NextLine %d; want %d, %d, %d", res.End, res.Lines, res.NextLine, info.Size(), w.lines, w.lines+1)
			}
			got := tallyOf(recs)
			check := func(name string, got, want int) {
				t.Helper()
				if got != want {
					t.Errorf("%s = %d, want %d", name, got, want)
				}
			}
			check("messages", got.messages, w.messages)
			for role, n := range w.roles {
				check("role "+string(role), got.roles[role], n)
			}
			check("roles", len(got.roles), len(w.roles))
			check("distinct response ids", len(got.responseIDs), w.responses)
			check("usages", got.usages, w.usages)
			check("tool_use blocks", got.toolUse, w.toolUse)
			check("tool_result blocks", got.toolResult, w.toolResult)
			check("is_error results", got.isError, w.isError)
			check("thinking blocks", got.thinking, w.thinking)
			check("meta messages", got.meta, w.meta)
			check("sidechain messages", got.sidechain, w.sidechain)
			check("compact summaries", got.compactSummary, w.compactSummary)
			check("session records", got.sessions, w.sessionRecords)
			check("dangling parents", dangling(recs), w.dangling)
			check("boundaries", got.boundaries, len(w.bounds))
			for i := range min(len(got.bounds), len(w.bounds)) {
				g, wb := got.bounds[i], w.bounds[i]
				if g.Trigger != wb.Trigger || g.PreTokens != wb.PreTokens {
					t.Errorf("boundary %d: trigger %q pre %d, want %q %d", i, g.Trigger, g.PreTokens, wb.Trigger, wb.PreTokens)
				}
				if g.Type != "system" || g.Subtype != "compact_boundary" || g.UUID == "" || g.SessionID == "" || g.Time.IsZero() {
					t.Errorf("boundary %d incomplete: %+v", i, g)
				}
			}
			if len(got.titles) != len(w.titles) || (len(w.titles) > 0 && got.titles[0] != w.titles[0]) {
				t.Errorf("titles = %q, want %q", got.titles, w.titles)
			}
			if len(got.sessionIDs) != 1 {
				t.Errorf("session ids = %v, want one", got.sessionIDs)
			}
			if st.SessionID == "" || st.LastUUID == "" {
				t.Errorf("state not advanced: %+v", st)
			}
			for _, r := range recs {
				if m := r.Message; m != nil && (m.UUID == "" || m.SessionID == "" || m.Time.IsZero()) {
					t.Fatalf("line %d: incomplete message %+v", r.Line, m)
				}
			}
		})
	}
}

// dangling counts messages whose parent was not read before them.
func dangling(recs []Record) int {
	seen := map[string]bool{}
	n := 0
	for _, r := range recs {
		if b := r.Boundary; b != nil {
			seen[b.UUID] = true
		}
		if m := r.Message; m != nil {
			if m.ParentUUID != "" && !seen[m.ParentUUID] {
				n++
			}
			seen[m.UUID] = true
		}
	}
	return n
}

// TestCorpusCompaction checks the two Claude compactions end to end: the
// boundary, then the summary message parented to it.
func TestCorpusCompaction(t *testing.T) {
	dir := corpusDir(t)
	tests := []struct {
		file              string
		boundary, logical string
	}{
		{"claude/spotter-258c7280-ae70-4798-800f-63464d01a85d.jsonl",
			"d46d6800-2f43-4360-ba84-c1de9c1ecbae", "7c642069-996d-4ae0-a61c-554b35d36fb6"},
		// The logical parent in the file, 23b73f9a-..., is a turn_duration
		// line; its nearest message ancestor is 1d698e31-....
		{"claude/spotter-ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl",
			"434dc859-6299-4713-8613-d28662692f06", "1d698e31-9e57-4b0c-b787-727e7bcea2f9"},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			recs, _, _ := readFile(t, filepath.Join(dir, tt.file))
			var b *compact.Boundary
			for _, r := range recs {
				if r.Boundary != nil {
					b = r.Boundary
					continue
				}
				if b != nil && r.Message != nil {
					m := r.Message
					if !m.CompactSummary || m.ParentUUID != b.UUID || m.Role != compact.RoleUser {
						t.Errorf("message after boundary: summary %v parent %q role %q", m.CompactSummary, m.ParentUUID, m.Role)
					}
					break
				}
			}
			if b == nil {
				t.Fatal("no boundary")
			}
			if b.UUID != tt.boundary || b.LogicalParentUUID != tt.logical {
				t.Errorf("boundary %q logical parent %q, want %q %q", b.UUID, b.LogicalParentUUID, tt.boundary, tt.logical)
			}
		})
	}
}

// TestCorpusCodexUsage checks that a Codex usage's ContextTokens is the
// input_tokens Codex reported (cached tokens included).
func TestCorpusCodexUsage(t *testing.T) {
	dir := corpusDir(t)
	path := filepath.Join(dir, "codex/localpush-rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl")
	recs, _, st := readFile(t, path)
	var last *compact.Usage
	for _, r := range recs {
		if r.Session != nil && r.Session.Usage != nil {
			last = r.Session.Usage
		}
	}
	// The file's last token_count (checked with jq): input 164606 of which
	// 164352 cached, output 93.
	want := compact.Usage{InputTokens: 164606 - 164352, CacheReadInputTokens: 164352, OutputTokens: 93}
	if last == nil || *last != want {
		t.Fatalf("last usage = %+v, want %+v", last, want)
	}
	if got := last.ContextTokens(); got != 164606 || st.LastContextTokens != 164606 {
		t.Errorf("ContextTokens %d, state %d; want 164606", got, st.LastContextTokens)
	}
}

// TestCorpusIncremental reads every corpus file in pieces of a few dozen
// lines, storing the state as JSON between pieces as ingest does, and
// checks that the pieces give the messages and boundaries of one read.
func TestCorpusIncremental(t *testing.T) {
	dir := corpusDir(t)
	for _, w := range corpusWants {
		t.Run(filepath.Base(w.file), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, w.file))
			if err != nil {
				t.Fatal(err)
			}
			whole, _, _ := readBytes(t, w.format, data)
			for _, every := range []int{1, 37} {
				st := &State{Format: w.format}
				var got []Record
				start, line := int64(0), 1
				for start < int64(len(data)) {
					end := start
					for range every {
						i := bytes.IndexByte(data[end:], '\n')
						if i < 0 {
							break
						}
						end += int64(i) + 1
					}
					res, err := Read(context.Background(), bytes.NewReader(data[start:end]), st, start, line, func(r Record) error {
						got = append(got, r)
						return nil
					})
					if err != nil || res.End != end {
						t.Fatalf("piece at %d: %v, End %d want %d", start, err, res.End, end)
					}
					start, line = res.End, res.NextLine
					st = roundTrip(t, st)
				}
				if g, w := contentOf(t, got), contentOf(t, whole); g != w {
					t.Fatalf("every %d lines: records differ", every)
				}
			}
		})
	}
}
