package transcript

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentledger/ledger/compact"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/transcript")

const testdataDir = "../testdata/transcript"

var fixtures = []struct {
	name, file string
	format     Format
}{
	{"claude-session", "claude-session/transcript.jsonl", FormatClaude},
	{"codex-rollout", "codex-rollout/rollout.jsonl", FormatCodex},
	{"bad-input", "bad-input/transcript.jsonl", FormatClaude},
	{"pi-session", piFixture, FormatPi},
}

func fixture(t testing.TB, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdataDir, file))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestGolden compares every record of each fixture with its golden file
// (go test -run Golden -update rewrites them).
func TestGolden(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			recs, res, _ := readBytes(t, fx.format, fixture(t, fx.file))
			got, err := json.MarshalIndent(struct {
				Result  Result
				Records []Record
			}{res, recs}, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join(testdataDir, fx.name, "records.golden.json")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("records differ from %s (run with -update after checking the diff):\n%s", golden, got)
			}
		})
	}
}

func TestClaudeSession(t *testing.T) {
	recs, res, st := readBytes(t, FormatClaude, fixture(t, "claude-session/transcript.jsonl"))
	if res.Skipped != 0 || res.Lines != 20 || res.NextLine != 21 {
		t.Fatalf("result %+v", res)
	}
	msgs := map[string]*compact.Message{}
	var order []string
	var bounds []*compact.Boundary
	var sessions []*SessionInfo
	for _, r := range recs {
		if r.Message != nil {
			msgs[r.Message.UUID] = r.Message
			order = append(order, r.Message.UUID)
		}
		if r.Boundary != nil {
			bounds = append(bounds, r.Boundary)
		}
		if r.Session != nil {
			sessions = append(sessions, r.Session)
		}
	}
	u := func(n int) string {
		return "a0000000-0000-4000-8000-" + strings.Repeat("0", 10) + string(rune('0'+n/10)) + string(rune('0'+n%10))
	}
	const sid = "7d1c2a90-5b7e-4c11-9a3e-2f6b8d0c4e15"

	if got, want := len(order), 12; got != want {
		t.Fatalf("%d messages, want %d: %v", got, want, order)
	}
	// The title waits for the first line naming the session (line 3).
	wantSessions := []SessionInfo{
		{ID: sid, Project: "/home/dev/src/parser", GitBranch: "main", Title: "Fix flaky parser test"},
		{ID: sid, Project: "/home/dev/src/parser", GitBranch: "fix-crlf"},
	}
	if len(sessions) != len(wantSessions) {
		t.Fatalf("sessions = %+v", sessions)
	}
	for i := range wantSessions {
		if *sessions[i] != wantSessions[i] {
			t.Errorf("session %d = %+v, want %+v", i, *sessions[i], wantSessions[i])
		}
	}
	if recs[0].Line != 3 || recs[0].Session == nil || recs[0].Message == nil {
		t.Errorf("first record = line %d %+v", recs[0].Line, recs[0])
	}

	// One response split over two lines: same ResponseID and usage.
	a, b := msgs[u(2)], msgs[u(3)]
	if a.ResponseID != "msg_011:req_011" || b.ResponseID != a.ResponseID || a.Usage == nil || *a.Usage != *b.Usage {
		t.Errorf("split response: %q %v / %q %v", a.ResponseID, a.Usage, b.ResponseID, b.Usage)
	}
	if a.Model != "claude-opus-4-6" || a.Blocks[0].Kind != compact.BlockThinking || a.Blocks[0].Text != "Look at how lines are split first." {
		t.Errorf("thinking line: %+v", a)
	}
	if tu := b.Blocks[0]; tu.Kind != compact.BlockToolUse || tu.ToolName != "Bash" || tu.ToolID != "toolu_01" ||
		tu.Input != `{"command":"go test ./parser/","description":"Run the parser tests"}` {
		t.Errorf("tool_use = %+v", tu)
	}
	// The tool result's parent in the file is a progress line: it is
	// parented to the tool call instead.
	res1 := msgs[u(4)]
	if tr := res1.Blocks[0]; tr.Kind != compact.BlockToolResult || tr.ToolID != "toolu_01" || !tr.IsError ||
		!strings.HasPrefix(tr.Text, "--- FAIL: TestSplit") || res1.ParentUUID != u(3) || res1.Meta {
		t.Errorf("tool_result = %+v, parent %q", tr, res1.ParentUUID)
	}
	if tr := msgs[u(6)].Blocks[0]; tr.Text != "package parser\n\nfunc Split(s string) []string\n[image]" || tr.IsError {
		t.Errorf("flattened tool_result = %q", tr.Text)
	}
	if bs := msgs[u(7)].Blocks; len(bs) != 2 || bs[1].Kind != compact.BlockText || bs[1].Text != "[container_upload]" {
		t.Errorf("unknown block = %+v", bs)
	}
	// Meta: isMeta, a command wrapper, a local command; not the summary.
	for n, want := range map[int]bool{1: false, 8: true, 9: true, 11: false, 12: true, 13: false} {
		if got := msgs[u(n)].Meta; got != want {
			t.Errorf("message %d meta = %v, want %v", n, got, want)
		}
	}
	if m := msgs[u(12)]; m.Role != compact.RoleSystem || m.Text() != "<local-command-stdout>Compacted</local-command-stdout>" {
		t.Errorf("local command = %+v", m)
	}

	// The compaction: boundary, then its summary parented to it. The
	// boundary's logical parent is a turn_duration line: resolved past the
	// stop hook summary to the last message.
	if len(bounds) != 1 {
		t.Fatalf("boundaries = %v", bounds)
	}
	bd := bounds[0]
	want := compact.NewBoundary(sid, u(10), "manual", time.Date(2026, 3, 1, 10, 5, 30, 0, time.UTC), 51234, 0)
	want.LogicalParentUUID = u(7)
	if *bd != want {
		t.Errorf("boundary = %+v\nwant %+v", *bd, want)
	}
	if s := msgs[u(11)]; !s.CompactSummary || s.ParentUUID != u(10) || s.Role != compact.RoleUser {
		t.Errorf("summary = %+v", s)
	}
	if st.SessionID != sid || st.LastUUID != u(13) || st.LastContextTokens != 51234 {
		t.Errorf("state = %+v", st)
	}
}

func TestCodexRollout(t *testing.T) {
	recs, res, st := readBytes(t, FormatCodex, fixture(t, "codex-rollout/rollout.jsonl"))
	if res.Skipped != 0 || res.Lines != 31 {
		t.Fatalf("result %+v", res)
	}
	const sid = "019d0000-1111-7222-8333-444455556666"
	var msgs []*compact.Message
	var bounds []*compact.Boundary
	var sessions []SessionInfo
	prev := ""
	for _, r := range recs {
		if m := r.Message; m != nil {
			if m.ParentUUID != prev || !strings.HasPrefix(m.UUID, "codex-") || len(m.UUID) != len("codex-")+24 || m.SessionID != sid {
				t.Errorf("line %d: uuid %q parent %q (want %q) session %q", r.Line, m.UUID, m.ParentUUID, prev, m.SessionID)
			}
			prev = m.UUID
			msgs = append(msgs, m)
		}
		if b := r.Boundary; b != nil {
			if b.LogicalParentUUID != prev {
				t.Errorf("boundary logical parent %q, want %q", b.LogicalParentUUID, prev)
			}
			prev = b.UUID
			bounds = append(bounds, b)
		}
		if r.Session != nil {
			sessions = append(sessions, *r.Session)
		}
	}
	type want struct {
		role compact.Role
		kind compact.BlockKind
		meta bool
		text string // Text() or the first block's text
		tool string
		err  bool
	}
	wants := []want{
		{role: "system", kind: "text", meta: true, text: "<permissions instructions>Sandbox: workspace-write.</permissions instructions>"},
		{role: "user", kind: "text", meta: true},
		{role: "user", kind: "text", meta: true},
		{role: "user", kind: "text", text: "Add a --json flag to the list command."},
		{role: "assistant", kind: "thinking", text: "Finding the list command\n\nChecking flags"},
		{role: "assistant", kind: "tool_use", tool: "shell"},
		{role: "tool", kind: "tool_result", text: "--- FAIL: TestList\nFAIL\n", err: true},
		{role: "assistant", kind: "tool_use", tool: "apply_patch"},
		{role: "tool", kind: "tool_result", text: "Success. Updated the following files:\nM list.go\n"},
		{role: "assistant", kind: "tool_use", tool: "exec_command"},
		{role: "tool", kind: "tool_result", err: true},
		{role: "assistant", kind: "tool_use", tool: "web_search"},
		{role: "assistant", kind: "text", text: "Added --json; go vet is clean now."},
		{role: "user", kind: "text", text: "/compact"},
		{role: "assistant", kind: "text", text: "Context compacted; ready."},
	}
	if len(msgs) != len(wants) {
		t.Fatalf("%d messages, want %d", len(msgs), len(wants))
	}
	for i, w := range wants {
		m := msgs[i]
		b := m.Blocks[0]
		if m.Role != w.role || b.Kind != w.kind || m.Meta != w.meta || b.ToolName != w.tool || b.IsError != w.err ||
			(w.text != "" && b.Text != w.text) || m.Time.IsZero() {
			t.Errorf("message %d = %+v, want %+v", i, m, w)
		}
	}
	if in := msgs[5].Blocks[0]; in.Input != `{"command":["go","test","./..."],"workdir":"/home/dev/src/cli"}` || in.ToolID != "call_1" {
		t.Errorf("function_call = %+v", in)
	}
	if in := msgs[7].Blocks[0]; !strings.HasPrefix(in.Input, "*** Begin Patch\n") || in.ToolID != "call_2" {
		t.Errorf("custom_tool_call = %+v", in)
	}
	if in := msgs[11].Blocks[0]; in.Input != `{"type":"search","query":"cobra bool flag default"}` {
		t.Errorf("web_search = %+v", in)
	}

	if len(bounds) != 1 {
		t.Fatalf("boundaries = %d, want 1 (context_compacted must not add one)", len(bounds))
	}
	bd := bounds[0]
	if bd.Trigger != "manual" || bd.PreTokens != 150000 || bd.SessionID != sid ||
		bd.Summary != "Summary: list gained a --json flag; go vet is clean." ||
		!bd.Time.Equal(time.Date(2026, 3, 2, 9, 1, 2, 0, time.UTC)) || !strings.HasPrefix(bd.UUID, "codex-") {
		t.Errorf("boundary = %+v", bd)
	}

	wantSessions := []SessionInfo{
		{ID: sid, Project: "/home/dev/src/cli", GitBranch: "feature/json", Time: time.Date(2026, 3, 2, 8, 59, 58, 500e6, time.UTC)},
		{ID: sid, ContextWindow: 272000},
		{ID: sid, Model: "gpt-5-codex", Project: "/home/dev/src/cli"},
		{ID: sid, ContextWindow: 272000, Usage: &compact.Usage{InputTokens: 4000, CacheReadInputTokens: 8000, OutputTokens: 300}},
		{ID: sid, ContextWindow: 272000, Usage: &compact.Usage{InputTokens: 10000, CacheReadInputTokens: 140000, OutputTokens: 600}},
		{ID: sid, ContextWindow: 272000}, // the all-zero usage of the compaction call
		{ID: sid, Model: "gpt-5-codex", Project: "/home/dev/src/cli"},
	}
	if len(sessions) != len(wantSessions) {
		t.Fatalf("sessions = %+v", sessions)
	}
	role := map[string]compact.Role{}
	for _, m := range msgs {
		role[m.UUID] = m.Role
	}
	for i, w := range wantSessions {
		g := sessions[i]
		if (g.Usage == nil) != (w.Usage == nil) || (g.Usage != nil && *g.Usage != *w.Usage) {
			t.Errorf("session %d usage = %+v, want %+v", i, g.Usage, w.Usage)
		}
		// A response's usage names the model's item it measures.
		if (g.Usage != nil) != (g.UsageOf != "") || (g.UsageOf != "" && role[g.UsageOf] != compact.RoleAssistant) {
			t.Errorf("session %d: usage of %q (%s)", i, g.UsageOf, role[g.UsageOf])
		}
		g.Usage, w.Usage, g.UsageOf = nil, nil, ""
		if !g.Time.Equal(w.Time) {
			t.Errorf("session %d time = %v, want %v", i, g.Time, w.Time)
		}
		g.Time, w.Time = time.Time{}, time.Time{}
		if g != w {
			t.Errorf("session %d = %+v, want %+v", i, g, w)
		}
	}
	if u := sessions[4].Usage; u.ContextTokens() != 150000 {
		t.Errorf("ContextTokens = %d, want input_tokens 150000", u.ContextTokens())
	}
	if st.SessionID != sid || st.LastUUID != msgs[len(msgs)-1].UUID || st.LastContextTokens != 150000 {
		t.Errorf("state = %+v", st)
	}

	// Reading again gives the same uuids.
	again, _, _ := readBytes(t, FormatCodex, fixture(t, "codex-rollout/rollout.jsonl"))
	for i := range recs {
		if recs[i].Message != nil && again[i].Message.UUID != recs[i].Message.UUID {
			t.Fatalf("record %d: uuid %q then %q", i, recs[i].Message.UUID, again[i].Message.UUID)
		}
	}
}

func TestCodexCompactTrigger(t *testing.T) {
	// Without a "/compact" user message just before, a compaction is auto.
	data := `{"timestamp":"2026-03-02T09:00:00Z","type":"session_meta","payload":{"id":"s"}}
{"timestamp":"2026-03-02T09:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"go on"}]}}
{"timestamp":"2026-03-02T09:00:02Z","type":"compacted","payload":{"message":""}}
{"timestamp":"2026-03-02T09:00:03Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":" /compact "}]}}
{"timestamp":"2026-03-02T09:00:04Z","type":"compacted","payload":{"message":""}}
{"timestamp":"2026-03-02T09:00:05Z","type":"compacted","payload":{"message":""}}
`
	recs, _, _ := readBytes(t, FormatCodex, []byte(data))
	var triggers []string
	for _, r := range recs {
		if r.Boundary != nil {
			triggers = append(triggers, r.Boundary.Trigger)
		}
	}
	if got, want := strings.Join(triggers, ","), "auto,manual,auto"; got != want {
		t.Errorf("triggers = %s, want %s", got, want)
	}
}

func TestCodexOutput(t *testing.T) {
	tests := []struct {
		name, raw string
		text      string
		failed    bool
	}{
		{"plain", `"hello"`, "hello", false},
		{"wrapped ok", `"{\"output\":\"done\",\"metadata\":{\"exit_code\":0}}"`, "done", false},
		{"wrapped failed", `"{\"output\":\"boom\",\"metadata\":{\"exit_code\":127}}"`, "boom", true},
		{"json without output", `"{\"a\":1}"`, `{"a":1}`, false},
		{"exit code header", `"Exit code: 1\nWall time: 0.1 seconds\nOutput:\nx"`, "Exit code: 1\nWall time: 0.1 seconds\nOutput:\nx", true},
		{"exit code zero", `"Exit code: 0\nOutput:\nx"`, "Exit code: 0\nOutput:\nx", false},
		{"code after output is output", `"Output:\nProcess exited with code 1"`, "Output:\nProcess exited with code 1", false},
		{"content items", `[{"type":"input_text","text":"a"},{"type":"input_image","image_url":"data:"}]`, "a\n[image]", false},
		{"object", `{"content":"nope","success":false}`, "nope", true},
		{"null", `null`, "", false},
		{"number", `42`, "42", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, failed := codexOutput(json.RawMessage(tt.raw))
			if text != tt.text || failed != tt.failed {
				t.Errorf("codexOutput(%s) = %q, %v; want %q, %v", tt.raw, text, failed, tt.text, tt.failed)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	data := fixture(t, "bad-input/transcript.jsonl")
	recs, res, _ := readBytes(t, FormatClaude, data)
	wantSkips := []Skip{
		{2, "invalid json"},
		{3, "invalid json"},
		{4, "not a claude record"},
		{5, "claude record without type"},
		{6, "not a claude record"},
	}
	if res.Skipped != 6 || len(res.Skips) != MaxSkipsListed {
		t.Errorf("skipped %d, listed %v", res.Skipped, res.Skips)
	}
	for i := range min(len(res.Skips), len(wantSkips)) {
		if res.Skips[i] != wantSkips[i] {
			t.Errorf("skip %d = %+v, want %+v", i, res.Skips[i], wantSkips[i])
		}
	}
	if res.Repaired != 2 {
		t.Errorf("repaired = %d, want 2", res.Repaired)
	}
	// The partial last line is not read.
	last := bytes.LastIndexByte(data, '\n') + 1
	if res.End != int64(last) || res.Lines != 13 || res.NextLine != 14 {
		t.Errorf("End %d Lines %d NextLine %d, want %d 13 14", res.End, res.Lines, res.NextLine, last)
	}
	var texts []string
	for _, r := range recs {
		if r.Message != nil {
			texts = append(texts, r.Message.Text())
		}
	}
	want := []string{"first valid line", "bad utf8 here: \uFFFD end", "nul bytes", "after the junk"}
	if strings.Join(texts, "|") != strings.Join(want, "|") {
		t.Errorf("texts = %q, want %q", texts, want)
	}
	// The assistant's parent is a progress line: resolved to the message
	// before it.
	if m := recs[len(recs)-1].Message; m.ParentUUID != "a0000000-0000-4000-8000-000000000003" {
		t.Errorf("parent = %q", m.ParentUUID)
	}
}

func TestMalformedRecords(t *testing.T) {
	tests := []struct {
		name, line, reason string
	}{
		{"message not an object", `{"type":"user","message":5}`, "malformed claude record (message)"},
		{"no message", `{"type":"assistant","uuid":"u"}`, "claude assistant line without message"},
		{"content a number", `{"type":"user","message":{"role":"user","content":7}}`, "malformed claude record (message.content)"},
		{"block not an object", `{"type":"user","message":{"role":"user","content":[1]}}`, "malformed claude record (message.content)"},
		{"uuid a number", `{"type":"user","uuid":5,"message":{"content":"x"}}`, "malformed claude record (uuid)"},
		{"codex line", `{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}`, "not a claude record (codex line?)"},
		{"trailing garbage", `{"type":"user"} x`, "invalid json"},
		{"odd field of a skipped type", `{"type":"progress","uuid":{"a":1}}`, ""},
		{"unknown type", `{"type":"brand-new-kind","whatever":[1]}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, res, _ := readBytes(t, FormatClaude, []byte(tt.line+"\n"))
			var got string
			if len(res.Skips) > 0 {
				got = res.Skips[0].Reason
			}
			if got != tt.reason || res.Skipped != len(res.Skips) {
				t.Errorf("reason %q (%d skipped), want %q", got, res.Skipped, tt.reason)
			}
		})
	}
	codex := []struct{ name, line, reason string }{
		{"no payload", `{"timestamp":"t","type":"event_msg"}`, "not a codex record"},
		{"array", `[1]`, "not a codex record"},
		{"not json", `{"type":`, "invalid json"},
		{"payload of a wrong type", `{"type":"session_meta","payload":{"id":5}}`, "malformed codex record (payload.id)"},
		{"unknown type", `{"type":"new","payload":{}}`, ""},
		{"message content a number", `{"type":"response_item","payload":{"type":"message","role":"user","content":3}}`, "malformed codex record (payload.content)"},
		{"message parts of a wrong type", `{"type":"response_item","payload":{"type":"message","role":"user","content":[{"text":1}]}}`, "malformed codex record (payload.content)"},
		{"odd field of a skipped event", `{"type":"event_msg","payload":{"type":"agent_message","message":"x","id":7}}`, ""},
		{"odd field of a used event", `{"type":"event_msg","payload":{"type":"token_count","info":"x"}}`, "malformed codex record (payload.info)"},
	}
	for _, tt := range codex {
		t.Run("codex "+tt.name, func(t *testing.T) {
			_, res, _ := readBytes(t, FormatCodex, []byte(tt.line+"\n"))
			var got string
			if len(res.Skips) > 0 {
				got = res.Skips[0].Reason
			}
			if got != tt.reason {
				t.Errorf("reason %q, want %q", got, tt.reason)
			}
		})
	}
}

// TestHugeLine reads a 20 MB line between two ordinary ones: its text is
// cut to its first keepHead and last keepTail bytes around a marker with
// the sizes, every other field of the line is read, and the lines after it
// are read as usual.
func TestHugeLine(t *testing.T) {
	// Longer than maxKeptLine by its head: only cut does it fit. (Longer
	// is more bytes for the race detector to watch, not another case.)
	text := strings.Repeat("0123456789abcdef", (maxKeptLine+keepHead)/16-1) + "the end"
	huge, err := json.Marshal(map[string]any{"type": "user", "uuid": "big", "sessionId": "s",
		"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": text}}}})
	if err != nil {
		t.Fatal(err)
	}
	data := fixture(t, "bad-input/transcript.jsonl")
	var buf bytes.Buffer
	buf.WriteString(`{"type":"user","uuid":"a","sessionId":"s","message":{"role":"user","content":"before"}}` + "\n")
	buf.Write(huge)
	buf.WriteByte('\n')
	buf.Write(data)
	recs, res, _ := readBytes(t, FormatClaude, buf.Bytes())
	if len(recs) < 3 || recs[1].Message == nil || recs[1].Message.UUID != "big" {
		t.Fatalf("huge line not read")
	}
	got := recs[1].Message.Text()
	cut := len(text) - keepHead - keepTail
	marker := fmt.Sprintf("\n[ledger: %d bytes cut from this text of %d bytes]\n", cut, len(text))
	if got != text[:keepHead]+marker+text[len(text)-keepTail:] {
		t.Errorf("huge text: %d bytes, %q ... %q; want its head, %q and its tail", len(got), got[:40], got[max(0, len(got)-40):], marker)
	}
	if recs[1].Line != 2 || recs[1].Offset != int64(bytes.IndexByte(buf.Bytes(), '\n')+1) {
		t.Errorf("huge line at %d/%d", recs[1].Line, recs[1].Offset)
	}
	if res.Skipped != 6 || res.Lines != 15 {
		t.Errorf("result %+v", res)
	}
	if want := int64(bytes.LastIndexByte(buf.Bytes(), '\n') + 1); res.End != want {
		t.Errorf("End %d, want %d", res.End, want)
	}
}

// TestLongLineCuts: the cut of a long line's strings keeps the line valid
// JSON and valid UTF-8 whatever falls at the cut (multi-byte characters,
// escapes, surrogate pairs); strings within the limit, keys and numbers
// are kept as they are; a line too long even cut is skipped with its
// size, and the next line is read.
func TestLongLineCuts(t *testing.T) {
	units := []string{"x", "é", "€", "😀", `\n`, `\"`, `\\`, `\u00e9`, `\ud83d\ude00`, "a\\u0041"}
	// Three texts of three units to a line: each is cut on its own, and
	// three fill a line past maxWholeLine where one needed padding.
	for i := 0; i < len(units); i += 3 {
		group := units[i:min(i+3, len(units))]
		t.Run(strings.Join(group, " "), func(t *testing.T) {
			// Longer than what a cut keeps by a quarter: a longer text is
			// more bytes for the race detector to watch, not another cut.
			var longs []string
			line := `{"type":"user","uuid":"u","sessionId":"s","message":{"role":"user","content":[`
			for _, unit := range group {
				long := strings.Repeat(unit, (keepHead+keepTail)/len(unit)*5/4+1)
				longs = append(longs, long)
				line += `{"type":"text","text":"` + long + `"},`
			}
			line += `{"type":"text","text":"short \"one\""}]},"n":[1,2.5,true,null]}`
			line += strings.Repeat(" ", max(0, maxWholeLine+1-len(line)))
			recs, res, _ := readBytes(t, FormatClaude, []byte(line+"\n"+`{"type":"user","uuid":"v","sessionId":"s","message":{"role":"user","content":"next"}}`+"\n"))
			if len(recs) != 2 || res.Skipped != 0 {
				t.Fatalf("%d records, %+v", len(recs), res)
			}
			m := recs[0].Message
			if len(m.Blocks) != len(group)+1 || m.Blocks[len(group)].Text != `short "one"` {
				t.Fatalf("blocks %d, last %q", len(m.Blocks), m.Blocks[len(m.Blocks)-1].Text)
			}
			for j, long := range longs {
				got := m.Blocks[j].Text
				if !utf8.ValidString(got) || strings.ContainsRune(got, utf8.RuneError) {
					t.Errorf("%s: cut text is not clean UTF-8: %q", group[j], got[keepHead-8:keepHead+8])
				}
				var full string
				if err := json.Unmarshal([]byte(`"`+long+`"`), &full); err != nil {
					t.Fatal(err)
				}
				// The limits count bytes of JSON: six of them make one byte of é.
				head, rest, ok := strings.Cut(got, "\n[ledger: ")
				if !ok || !strings.HasPrefix(full, head) || len(head) < keepHead/4 {
					t.Errorf("%s: head of %d bytes is not the text's start", group[j], len(head))
				}
				_, tail, _ := strings.Cut(rest, "]\n")
				if !strings.HasSuffix(full, tail) || len(tail) < keepTail/4 {
					t.Errorf("%s: tail of %d bytes is not the text's end", group[j], len(tail))
				}
			}
			if recs[1].Message.Text() != "next" {
				t.Errorf("next line: %q", recs[1].Message.Text())
			}
		})
	}
	t.Run("too long even cut", func(t *testing.T) {
		// Past maxKeptLine by its few other bytes, and nothing to cut.
		numbers := `{"type":"user","uuid":"u","sessionId":"s","n":[` + strings.Repeat("1,", maxKeptLine/2) + `1]}`
		data := numbers + "\n" + `{"type":"user","uuid":"v","sessionId":"s","message":{"role":"user","content":"next"}}` + "\n"
		recs, res, _ := readBytes(t, FormatClaude, []byte(data))
		if res.Skipped != 1 || !strings.HasPrefix(res.Skips[0].Reason, fmt.Sprintf("line too long (%d bytes", len(numbers)+1)) {
			t.Errorf("skips %+v", res.Skips)
		}
		if len(recs) != 1 || recs[0].Message.Text() != "next" || res.End != int64(len(data)) || res.Lines != 2 {
			t.Errorf("%d records, %+v", len(recs), res)
		}
	})
	t.Run("no closing quote", func(t *testing.T) {
		bad := `{"type":"user","uuid":"u","message":{"content":"` + strings.Repeat("z", maxWholeLine+10)
		_, res, _ := readBytes(t, FormatClaude, []byte(bad+"\n"))
		if res.Skipped != 1 || res.Skips[0].Reason != "invalid json" {
			t.Errorf("skips %+v", res.Skips)
		}
	})
}

// TestIncremental reads each fixture in two parts, cut at every line
// boundary, as a file that grows between reads, and checks that the two
// reads give exactly the messages and boundaries of one read.
func TestIncremental(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			data := fixture(t, fx.file)
			whole, wholeRes, _ := readBytes(t, fx.format, data)
			want := contentOf(t, whole)
			for cut := 0; cut <= len(data); cut++ {
				if cut > 0 && data[cut-1] != '\n' {
					continue
				}
				path := filepath.Join(t.TempDir(), "t.jsonl")
				if err := os.WriteFile(path, data[:cut], 0o644); err != nil {
					t.Fatal(err)
				}
				st := &State{Format: fx.format}
				first, res1 := readPath(t, path, st, 0, 1)
				if res1.End != int64(cut) {
					t.Fatalf("cut %d: first End %d", cut, res1.End)
				}
				appendFile(t, path, data[cut:])
				st = roundTrip(t, st) // as a caller storing the state between runs
				second, res2 := readPath(t, path, st, res1.End, res1.NextLine)
				got := contentOf(t, append(first, second...))
				if got != want {
					t.Fatalf("cut %d: records differ\n got %s\nwant %s", cut, got, want)
				}
				if res2.End != wholeRes.End || res2.NextLine != wholeRes.NextLine || res1.Skipped+res2.Skipped != wholeRes.Skipped {
					t.Fatalf("cut %d: second %+v, whole %+v", cut, res2, wholeRes)
				}
			}
		})
	}
}

// TestIncrementalPartialLine grows a file by half a line, then completes
// it: the line is read once, when complete.
func TestIncrementalPartialLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	line1 := `{"type":"user","uuid":"u1","sessionId":"s","message":{"role":"user","content":"one"}}` + "\n"
	line2 := `{"type":"assistant","uuid":"u2","parentUuid":"u1","sessionId":"s","message":{"role":"assistant","content":[{"type":"text","text":"two"}]}}` + "\n"
	st := &State{Format: FormatClaude}
	if err := os.WriteFile(path, []byte(line1+line2[:40]), 0o644); err != nil {
		t.Fatal(err)
	}
	recs, res := readPath(t, path, st, 0, 1)
	if len(recs) != 1 || res.End != int64(len(line1)) || res.NextLine != 2 || res.Skipped != 0 {
		t.Fatalf("first read: %d records, %+v", len(recs), res)
	}
	// Still incomplete: nothing new.
	recs, res2 := readPath(t, path, st, res.End, res.NextLine)
	if len(recs) != 0 || res2.End != res.End || res2.Lines != 0 {
		t.Fatalf("second read: %d records, %+v", len(recs), res2)
	}
	appendFile(t, path, []byte(line2[40:]))
	recs, res3 := readPath(t, path, st, res2.End, res2.NextLine)
	if len(recs) != 1 || recs[0].Message.UUID != "u2" || recs[0].Line != 2 || recs[0].Offset != int64(len(line1)) {
		t.Fatalf("third read: %+v", recs)
	}
	if recs[0].Session == nil || recs[0].Session.ID != "s" {
		t.Errorf("a new read re-emits the session: %+v", recs[0].Session)
	}
	if res3.End != int64(len(line1)+len(line2)) || res3.NextLine != 3 || st.LastUUID != "u2" {
		t.Errorf("third read: %+v, state %+v", res3, st)
	}
}

// TestTitleWithoutSession: a title that no later line names a session for
// is emitted at the end of the read with an empty ID.
func TestTitleWithoutSession(t *testing.T) {
	recs, _, _ := readBytes(t, FormatClaude, []byte(`{"type":"summary","summary":"T","leafUuid":"x"}`+"\n"+`{"type":"file-history-snapshot","messageId":"m"}`+"\n"))
	if len(recs) != 1 || recs[0].Session == nil || recs[0].Session.Title != "T" || recs[0].Session.ID != "" || recs[0].Line != 1 {
		t.Fatalf("records = %+v", recs)
	}
	// With the session known from an earlier read, the title is emitted at once.
	st := &State{Format: FormatClaude, SessionID: "s1"}
	var got []Record
	if _, err := Read(context.Background(), strings.NewReader(`{"type":"summary","summary":"T2"}`+"\n"), st, 0, 1, func(r Record) error {
		got = append(got, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || *got[0].Session != (SessionInfo{ID: "s1", Title: "T2"}) {
		t.Fatalf("records = %+v", got)
	}
}

func TestCRLF(t *testing.T) {
	for _, fx := range fixtures[:2] {
		t.Run(fx.name, func(t *testing.T) {
			data := fixture(t, fx.file)
			crlf := bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
			want, wantRes, _ := readBytes(t, fx.format, data)
			got, gotRes, _ := readBytes(t, fx.format, crlf)
			// Offsets move by one byte a line; nothing else may change.
			for i := range got {
				if i >= len(want) || got[i].Offset != want[i].Offset+int64(want[i].Line-1) {
					t.Fatalf("record %d offset %d, want %d", i, got[i].Offset, want[i].Offset+int64(want[i].Line-1))
				}
				got[i].Offset = want[i].Offset
			}
			if g, w := contentOf(t, got), contentOf(t, want); g != w {
				t.Errorf("CRLF records differ:\n got %s\nwant %s", g, w)
			}
			if gotRes.End != int64(len(crlf)) || gotRes.Lines != wantRes.Lines || gotRes.Skipped != 0 {
				t.Errorf("CRLF result %+v", gotRes)
			}
		})
	}
}

func TestCancel(t *testing.T) {
	data := fixture(t, "claude-session/transcript.jsonl")
	big := bytes.Repeat(data, 50)

	t.Run("before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		n := 0
		res, err := Read(ctx, bytes.NewReader(big), &State{Format: FormatClaude}, 100, 7, func(Record) error { n++; return nil })
		if !errors.Is(err, context.Canceled) || n != 0 || res.End != 100 || res.NextLine != 7 {
			t.Errorf("err %v, %d records, %+v", err, n, res)
		}
	})
	t.Run("during", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		n := 0
		res, err := Read(ctx, bytes.NewReader(big), &State{Format: FormatClaude}, 0, 1, func(Record) error {
			if n++; n == 3 {
				cancel()
			}
			return nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
		if res.End == 0 || res.End >= int64(len(big)) || big[res.End-1] != '\n' || res.Lines > ctxCheckEvery {
			t.Errorf("stopped at %+v", res)
		}
		if got := bytes.Count(big[:res.End], []byte("\n")); got != res.Lines {
			t.Errorf("End after %d lines, Lines %d", got, res.Lines)
		}
	})
	t.Run("callback error", func(t *testing.T) {
		boom := errors.New("boom")
		n := 0
		var at Record
		res, err := Read(context.Background(), bytes.NewReader(data), &State{Format: FormatClaude}, 0, 1, func(r Record) error {
			if n++; n == 4 {
				at = r
				return boom
			}
			return nil
		})
		if !errors.Is(err, boom) || res.End != at.Offset || res.NextLine != at.Line {
			t.Errorf("err %v, End %d NextLine %d; failing record at %d line %d", err, res.End, res.NextLine, at.Offset, at.Line)
		}
	})
}

func TestReadErrors(t *testing.T) {
	if _, err := Read(context.Background(), strings.NewReader(""), &State{Format: "yaml"}, 0, 1, nil); err == nil {
		t.Error("unknown format: no error")
	}
	if _, err := Read(context.Background(), strings.NewReader(""), nil, 0, 1, nil); err == nil {
		t.Error("nil state: no error")
	}
	broken := io.MultiReader(strings.NewReader(`{"type":"user","uuid":"u","message":{"content":"x"}}`+"\n"), iotestErrReader{})
	n := 0
	res, err := Read(context.Background(), broken, &State{Format: FormatClaude}, 0, 1, func(Record) error { n++; return nil })
	if err == nil || !strings.Contains(err.Error(), "read line 2") || n != 1 || res.Lines != 1 {
		t.Errorf("err %v, %d records, %+v", err, n, res)
	}
}

type iotestErrReader struct{}

func (iotestErrReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

// contentOf renders the messages and boundaries of recs (not the session
// facts, which a new read re-emits) for comparison.
func contentOf(t testing.TB, recs []Record) string {
	t.Helper()
	var sb strings.Builder
	for _, r := range recs {
		if r.Message == nil && r.Boundary == nil {
			continue
		}
		b, err := json.Marshal(struct {
			Line     int
			Offset   int64
			Message  *compact.Message
			Boundary *compact.Boundary
		}{r.Line, r.Offset, r.Message, r.Boundary})
		if err != nil {
			t.Fatal(err)
		}
		sb.Write(b)
		sb.WriteByte('\n')
	}
	return sb.String()
}

func readPath(t testing.TB, path string, st *State, start int64, line int) ([]Record, Result) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	var recs []Record
	res, err := Read(context.Background(), f, st, start, line, func(r Record) error {
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return recs, res
}

func appendFile(t testing.TB, path string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRetryAfterCallbackError: when fn fails, Read leaves End and the
// State before the failing line, so reading again from there gives what
// one read without the failure gives.
func TestRetryAfterCallbackError(t *testing.T) {
	boom := errors.New("boom")
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			data := fixture(t, fx.file)
			whole, _, _ := readBytes(t, fx.format, data)
			want := contentOf(t, whole)
			for failAt := 1; failAt <= len(whole); failAt++ {
				st := &State{Format: fx.format}
				var got []Record
				n := 0
				res, err := Read(context.Background(), bytes.NewReader(data), st, 0, 1, func(r Record) error {
					if n++; n == failAt {
						return boom
					}
					got = append(got, r)
					return nil
				})
				if !errors.Is(err, boom) {
					t.Fatalf("fail at %d: err %v", failAt, err)
				}
				// Records of the failing line that were already delivered
				// are delivered again: a caller commits by line.
				kept := got[:0]
				for _, r := range got {
					if r.Offset < res.End {
						kept = append(kept, r)
					}
				}
				_, err = Read(context.Background(), bytes.NewReader(data[res.End:]), st, res.End, res.NextLine, func(r Record) error {
					kept = append(kept, r)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if g := contentOf(t, kept); g != want {
					t.Fatalf("fail at %d: records differ\n got %s\nwant %s", failAt, g, want)
				}
			}
		})
	}
}

// roundTrip stores st as JSON and reads it back, as ledger's ingest does
// between runs.
func roundTrip(t testing.TB, st *State) *State {
	t.Helper()
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return &back
}

func TestStateJSON(t *testing.T) {
	// JSON written before the state had a carry still reads.
	var st State
	old := `{"Format":"codex","SessionID":"s","LastUUID":"u","LastContextTokens":7}`
	if err := json.Unmarshal([]byte(old), &st); err != nil {
		t.Fatal(err)
	}
	if st.Format != FormatCodex || st.SessionID != "s" || st.LastUUID != "u" || st.LastContextTokens != 7 || st.c != nil {
		t.Fatalf("state = %+v", st)
	}
	b, err := json.Marshal(st)
	if err != nil || string(b) != old {
		t.Fatalf("marshal = %s, %v; want %s", b, err, old)
	}

	// The carry keeps only the latest links.
	st.carry().userCompact = true
	for i := range 3 * carriedLinks {
		st.carry().aliases.add(fmt.Sprint("p", i), fmt.Sprint("p", i-1))
	}
	back := roundTrip(t, &st)
	if !back.c.userCompact || len(back.c.aliases.cur) != carriedLinks {
		t.Fatalf("carry: compact %v, %d links", back.c.userCompact, len(back.c.aliases.cur))
	}
	last := fmt.Sprint("p", 3*carriedLinks-1)
	if got := back.c.aliases.resolve(last); got != "p-1" {
		t.Errorf("resolve(%s) = %q, want p-1", last, got)
	}
	// A second round trip without reading keeps them.
	if again := roundTrip(t, back); again.c == nil || len(again.c.aliases.cur) != carriedLinks || again.c.aliases.resolve(last) != "p-1" {
		t.Errorf("links lost on a second round trip")
	}
	if b, _ := json.Marshal(back); len(b) > 4096 {
		t.Errorf("state JSON is %d bytes", len(b))
	}
}

// TestEscapedNULRemoved: a NUL written as the escape \u0000 is removed as
// a raw NUL byte is, from every string a record carries (text, thinking,
// tool names, inputs and output, titles, summaries, session facts), in
// both formats; an escaped backslash followed by u0000 is text and stays.
func TestEscapedNULRemoved(t *testing.T) {
	claude := `{"type":"summary","summary":"ti\u0000tle","leafUuid":"x"}
{"type":"user","uuid":"u1","sessionId":"s\u0000","cwd":"/tmp/a\u0000b","gitBranch":"ma\u0000in","message":{"role":"user","content":"a\u0000b \\u0000 kept"}}
{"type":"assistant","uuid":"u2","sessionId":"s","message":{"role":"assistant","model":"m\u0000","content":[{"type":"thinking","thinking":"th\u0000ink"},{"type":"tool_use","id":"t\u00001","name":"Ba\u0000sh","input":{"command":"ls \u0000/tmp","note":"\\u0000"}}]}}
{"type":"user","uuid":"u3","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"out\u0000put"}]}]}}
{"type":"user","uuid":"u4","sessionId":"s","isCompactSummary":true,"message":{"role":"user","content":"sum\u0000mary"}}
`
	codex := `{"timestamp":"2026-03-02T09:00:00Z","type":"session_meta","payload":{"id":"c\u0000x","cwd":"/tmp/c\u0000"}}
{"timestamp":"2026-03-02T09:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hel\u0000lo"}]}}
{"timestamp":"2026-03-02T09:00:02Z","type":"response_item","payload":{"type":"function_call","name":"sh\u0000ell","arguments":"{\"command\":[\"ls\",\"\\u0000x\"]}","call_id":"c1"}}
{"timestamp":"2026-03-02T09:00:03Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"do\u0000ne"}}
{"timestamp":"2026-03-02T09:00:04Z","type":"compacted","payload":{"message":"sum\u0000mary"}}
`
	for _, tc := range []struct {
		f    Format
		data string
	}{{FormatClaude, claude}, {FormatCodex, codex}} {
		t.Run(string(tc.f), func(t *testing.T) {
			recs, res, _ := readBytes(t, tc.f, []byte(tc.data))
			if res.Skipped != 0 || len(recs) < 4 {
				t.Fatalf("%d records, %+v", len(recs), res)
			}
			b, err := json.Marshal(recs)
			if err != nil {
				t.Fatal(err)
			}
			// A NUL in any string marshals as \u0000; the kept text as \\u0000.
			if n := bytes.Count(b, []byte(`\u0000`)) - bytes.Count(b, []byte(`\\u0000`)); n != 0 {
				t.Errorf("%d NULs left in the records: %s", n, b)
			}
			for _, r := range recs {
				for _, blk := range messageBlocks(r) {
					if strings.Contains(blk.Input, `\u0000`) && !strings.Contains(blk.Input, `\\u0000`) {
						t.Errorf("escaped NUL left in a tool input: %s", blk.Input)
					}
				}
			}
		})
	}
	recs, _, _ := readBytes(t, FormatClaude, []byte(claude))
	if got := recs[0].Message.Text(); got != `ab \u0000 kept` {
		t.Errorf("text = %q, want the NUL gone and the escaped backslash kept", got)
	}
}

func messageBlocks(r Record) []compact.Block {
	if r.Message == nil {
		return nil
	}
	return r.Message.Blocks
}

// TestBOM: a transcript that starts with a UTF-8 byte order mark (an
// editor saved it so) is detected and read whole, its first record
// included, in every format; only the offsets after the mark move.
func TestBOM(t *testing.T) {
	t.Parallel()
	const bom = "\uFEFF"
	for _, fx := range fixtures[:2] {
		t.Run(fx.name, func(t *testing.T) {
			data := fixture(t, fx.file)
			marked := append([]byte(bom), data...)
			if f, err := Detect(bytes.NewReader(marked)); err != nil || f != fx.format {
				t.Errorf("Detect = %q, %v; want %q", f, err, fx.format)
			}
			want, wantRes, _ := readBytes(t, fx.format, data)
			got, gotRes, _ := readBytes(t, fx.format, marked)
			for i := range got {
				if got[i].Offset > 0 {
					got[i].Offset -= int64(len(bom))
				}
			}
			if g, w := contentOf(t, got), contentOf(t, want); g != w {
				t.Errorf("records differ:\n got %s\nwant %s", g, w)
			}
			if gotRes.End != int64(len(marked)) || gotRes.Lines != wantRes.Lines || gotRes.Skipped != wantRes.Skipped {
				t.Errorf("result %+v, want %+v", gotRes, wantRes)
			}
		})
	}
}

// TestTimesAndTriggersAsTheyCome: a line whose timestamp is not a time
// the ledger can keep (a number, a word, a valid RFC 3339 time past year
// 9999 in UTC) keeps its record, with its time unknown (zero), in every
// format; a compaction's numeric trigger is kept as its text.
func TestTimesAndTriggersAsTheyCome(t *testing.T) {
	t.Parallel()
	claude := `{"type":"user","message":{"role":"user","content":"one"},"uuid":"u1","timestamp":1767323045000,"sessionId":"s1"}
{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"two"}]},"uuid":"u2","parentUuid":"u1","timestamp":"9999-12-31T23:59:59-23:59","sessionId":"s1"}
{"type":"user","message":{"role":"user","content":"three"},"uuid":"u3","parentUuid":"u2","timestamp":"yesterday","sessionId":"s1"}
{"type":"user","message":{"role":"user","content":"four"},"uuid":"u4","parentUuid":"u3","timestamp":"2026-01-02T03:04:05Z","sessionId":"s1"}
{"type":"system","subtype":"compact_boundary","uuid":"b1","parentUuid":null,"logicalParentUuid":"u4","sessionId":"s1","timestamp":{"ms":1},"compactMetadata":{"trigger":2,"preTokens":100}}
{"type":"system","subtype":"compact_boundary","uuid":"b2","parentUuid":null,"logicalParentUuid":"u4","sessionId":"s1","compactMetadata":{"trigger":"auto","preTokens":100}}
`
	codex := `{"timestamp":12,"type":"session_meta","payload":{"id":"s2","timestamp":12}}
{"timestamp":"9999-12-31T23:59:59-23:59","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"one"}]}}
{"timestamp":true,"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"two"}]}}
{"timestamp":"2026-01-02T03:04:05Z","type":"compacted","payload":{"message":""}}
`
	for _, tc := range []struct {
		format   Format
		data     string
		messages int
		triggers string
	}{{FormatClaude, claude, 4, "2,auto"}, {FormatCodex, codex, 2, "auto"}} {
		recs, res, _ := readBytes(t, tc.format, []byte(tc.data))
		var messages int
		var triggers []string
		for _, r := range recs {
			if m := r.Message; m != nil {
				messages++
				if want := m.Blocks[0].Text == "four"; m.Time.IsZero() == want {
					t.Errorf("%s: message %q at %v", tc.format, m.Text(), m.Time)
				}
			}
			if b := r.Boundary; b != nil {
				triggers = append(triggers, b.Trigger)
				if !b.Time.IsZero() && b.Time.Year() != 2026 {
					t.Errorf("%s: boundary at %v", tc.format, b.Time)
				}
			}
		}
		if messages != tc.messages || strings.Join(triggers, ",") != tc.triggers || res.Skipped != 0 {
			t.Errorf("%s: %d messages, triggers %v, %d skipped %v; want %d, %s, none", tc.format, messages, triggers, res.Skipped, res.Skips, tc.messages, tc.triggers)
		}
	}
}
