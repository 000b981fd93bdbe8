package compact

import (
	"reflect"
	"strings"
	"testing"
)

// tm is a message of n tokens by perMessage.
func tm(uuid string, n int) Message {
	return Message{UUID: uuid, Role: RoleUser, Blocks: text(strings.Repeat("x", n))}
}

func toolUse(uuid, id string, n int) Message {
	return Message{UUID: uuid, Role: RoleAssistant, Blocks: []Block{{Kind: BlockToolUse, ToolID: id, ToolName: "Bash", Text: strings.Repeat("x", n)}}}
}

func toolResult(uuid, id string, n int) Message {
	return Message{UUID: uuid, Role: RoleUser, Blocks: []Block{{Kind: BlockToolResult, ToolID: id, Text: strings.Repeat("x", n)}}}
}

func TestSplitAt(t *testing.T) {
	line := func(uuid, resp string, n int) Message {
		m := tm(uuid, n)
		m.Role, m.ResponseID = RoleAssistant, resp
		return m
	}
	tests := []struct {
		name string
		msgs []Message
		keep int64
		want int
	}{
		{"empty", nil, 100, 0},
		{"everything fits", []Message{tm("a", 10), tm("b", 10)}, 100, 0},
		{"nothing fits", []Message{tm("a", 10), tm("b", 200)}, 100, 2},
		{"most recent that fit", []Message{tm("a", 50), tm("b", 50), tm("c", 30), tm("d", 30)}, 100, 2},
		{"exactly the budget", []Message{tm("a", 50), tm("b", 60), tm("c", 40)}, 100, 1},
		{"tool result not separated from its call", []Message{
			tm("a", 10), toolUse("b", "t1", 30), toolResult("c", "t1", 40), tm("d", 40),
		}, 80, 3},
		{"call and result together when both fit", []Message{
			tm("a", 100), toolUse("b", "t1", 30), toolResult("c", "t1", 30), tm("d", 30),
		}, 100, 1},
		{"parallel calls: results after a later call", []Message{
			tm("a", 10), toolUse("b", "t1", 10), toolUse("c", "t2", 10), toolResult("d", "t1", 10), toolResult("e", "t2", 10), tm("f", 10),
		}, 35, 5},
		{"lines of one response stay together", []Message{
			tm("a", 10), line("b", "r1", 50), line("c", "r1", 10), tm("d", 10),
		}, 30, 3},
		{"chained: moving past a result exposes a response split", []Message{
			line("a", "r1", 10), toolUse("b", "t1", 10), toolResult("c", "t1", 10), line("d", "r2", 10), line("e", "r2", 10), tm("f", 10),
		}, 30, 3},
		{"tool use without a result", []Message{tm("a", 10), toolUse("b", "t1", 10), tm("c", 10)}, 20, 1},
		{"result before its call is ignored", []Message{toolResult("a", "t1", 10), toolUse("b", "t1", 10), tm("c", 10)}, 20, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SplitAt(tt.msgs, tt.keep, perMessage{}); got != tt.want {
				t.Errorf("SplitAt = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestSplitPoint(t *testing.T) {
	msgs := []Message{tm("a", 400), tm("b", 300), tm("c", 300)}
	tests := []struct {
		window int64
		want   int
	}{
		{1000, 2}, // 40% = 400: c fits, b+c = 600 does not
		{1500, 1}, // 600: b and c
		{2500, 0}, // 1000: all
		{100, 3},  // 40: none
	}
	for _, tt := range tests {
		if got := SplitPoint(msgs, tt.window, perMessage{}); got != tt.want {
			t.Errorf("SplitPoint(window %d) = %d, want %d", tt.window, got, tt.want)
		}
	}
}

// TestSplitCorpus splits real sessions at many windows and checks that no
// split separates a tool call from its result.
func TestSplitCorpus(t *testing.T) {
	for _, prefix := range []string{"spotter-ae4a77f8", "ccviewer-fe5e1c67"} {
		t.Run(prefix, func(t *testing.T) {
			msgs := readClaude(t, corpusFile(t, prefix))
			for keep := int64(500); keep < 300_000; keep = keep * 3 / 2 {
				i := SplitAt(msgs, keep, CharsEstimator{})
				if i < 0 || i > len(msgs) {
					t.Fatalf("keep %d: split %d out of range", keep, i)
				}
				if id := separatedTool(msgs, i); id != "" {
					t.Errorf("keep %d: split at %d separates tool call %s from its result", keep, i, id)
				}
				if i > 0 && i < len(msgs) && msgs[i].ResponseID != "" && msgs[i].ResponseID == msgs[i-1].ResponseID {
					t.Errorf("keep %d: split at %d cuts response %s", keep, i, msgs[i].ResponseID)
				}
			}
		})
	}
}

// separatedTool returns the id of a tool call before i whose result is at
// or after i, if any.
func separatedTool(msgs []Message, i int) string {
	called := map[string]bool{}
	for _, m := range msgs[:i] {
		for _, b := range m.Blocks {
			if b.Kind == BlockToolUse {
				called[b.ToolID] = true
			}
		}
	}
	for _, m := range msgs[i:] {
		for _, b := range m.Blocks {
			if b.Kind == BlockToolResult && called[b.ToolID] {
				return b.ToolID
			}
		}
	}
	return ""
}

func TestPruneToolResults(t *testing.T) {
	long := strings.Repeat("0123456789", 150) // 1500 characters
	msgs := []Message{
		toolResult("a", "t1", 0),
		{UUID: "b", Role: RoleUser, Blocks: []Block{{Kind: BlockToolResult, Text: long}, {Kind: BlockText, Text: long}}},
		{UUID: "c", Role: RoleUser, Blocks: []Block{{Kind: BlockToolResult, Text: strings.Repeat("y", PruneThreshold)}}},
		{UUID: "d", Role: RoleUser, Blocks: []Block{{Kind: BlockToolResult, Text: long}}},
	}
	msgs[0].Blocks[0].Text = long
	before := clone(msgs)

	tests := []struct {
		name       string
		keepRecent int
		pruned     []bool // per message: first block shortened?
	}{
		{"keep the last one", 1, []bool{true, true, false, false}},
		{"keep none", 0, []bool{true, true, false, true}},
		{"keep all", 4, []bool{false, false, false, false}},
		{"keep more than there are", 10, []bool{false, false, false, false}},
		{"negative keeps none", -1, []bool{true, true, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PruneToolResults(msgs, tt.keepRecent)
			if len(got) != len(msgs) {
				t.Fatalf("len = %d, want %d", len(got), len(msgs))
			}
			for i, m := range got {
				shortened := m.Blocks[0].Text != msgs[i].Blocks[0].Text
				if shortened != tt.pruned[i] {
					t.Errorf("message %d shortened = %v, want %v", i, shortened, tt.pruned[i])
				}
				if shortened && len([]rune(m.Blocks[0].Text)) > PruneThreshold {
					t.Errorf("message %d still %d characters", i, len([]rune(m.Blocks[0].Text)))
				}
			}
			if got[1].Blocks[1].Text != long {
				t.Error("a text block was pruned")
			}
			if !reflect.DeepEqual(msgs, before) {
				t.Error("PruneToolResults modified its input")
			}
		})
	}
}

func TestShorten(t *testing.T) {
	tests := []struct {
		name  string
		s     string
		limit int
		want  string
	}{
		{"fits", "abc", 10, "abc"},
		{"head and tail", "abcdefghijklmnopqrstuvwxyz", 10, "abcdef\n[… 17 characters pruned …]\nxyz"},
		{"runes", strings.Repeat("é", 21), 10, "éééééé\n[… 12 characters pruned …]\nééé"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := shorten(tt.s, tt.limit); got != tt.want {
				t.Errorf("shorten = %q, want %q", got, tt.want)
			}
		})
	}
}

func clone(msgs []Message) []Message {
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		m.Blocks = append([]Block(nil), m.Blocks...)
		out[i] = m
	}
	return out
}
