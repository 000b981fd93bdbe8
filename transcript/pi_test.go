package transcript

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentledger/ledger/compact"
)

// piFixture is a real Pi 0.73.1 session (testdata/agents/pi-0.73.1/README.md
// says how it was made): a tool call, an auto compaction, a resumed run, a
// branch back to the first reply with its summary, and a turn on the new
// branch.
const piFixture = "../agents/pi-0.73.1/2026-11-26T07-29-37-590Z_01a216c2-8921-7397-bbc1-38fa2acd5419.jsonl"

func TestPiDetect(t *testing.T) {
	t.Parallel()
	data := fixture(t, piFixture)
	for name, in := range map[string][]byte{
		"file":             data,
		"with a BOM":       append([]byte("\xEF\xBB\xBF"), data...),
		"from its entries": data[bytes.IndexByte(data, '\n')+1:],
	} {
		f, err := Detect(bytes.NewReader(in))
		if err != nil || f != FormatPi {
			t.Errorf("%s: Detect = %q, %v", name, f, err)
		}
	}
}

func TestPiSession(t *testing.T) {
	t.Parallel()
	recs, res, st := readBytes(t, FormatPi, fixture(t, piFixture))
	if res.Skipped != 0 || res.Lines != 21 {
		t.Fatalf("result %+v", res)
	}
	const sid = "01a216c2-8921-7397-bbc1-38fa2acd5419"
	if st.SessionID != sid || st.LastUUID != "ca709778" {
		t.Fatalf("state %+v", st)
	}
	head := recs[0].Session
	if head == nil || head.ID != sid || head.Project != "/work/agents-cache/proj-pi" || head.Time.IsZero() {
		t.Fatalf("header %+v", head)
	}
	ty := tallyOf(recs)
	if ty.messages != 17 || ty.boundaries != 1 || ty.toolUse != 4 || ty.toolResult != 4 || ty.meta != 1 {
		t.Fatalf("tally %+v", ty)
	}
	if ty.roles[compact.RoleUser] != 5 || ty.roles[compact.RoleAssistant] != 8 || ty.roles[compact.RoleTool] != 4 {
		t.Errorf("roles %v", ty.roles)
	}
	b := ty.bounds[0]
	if b.UUID != "65a3b42d" || b.SessionID != sid || b.PreTokens != 15520 || b.Trigger != "auto" ||
		b.LogicalParentUUID != "77a4a8f3" || !strings.HasPrefix(b.Summary, "## Goal\nWrite notes files") {
		t.Errorf("boundary %+v", b)
	}
	var byID = map[string]*compact.Message{}
	for _, r := range recs {
		if m := r.Message; m != nil {
			if m.SessionID != sid || m.Time.IsZero() {
				t.Errorf("message %s: session %q time %v", m.UUID, m.SessionID, m.Time)
			}
			byID[m.UUID] = m
		}
	}
	// The first user message hangs on the root: the model and thinking
	// level entries before it are skipped, and their ids alias to nothing.
	if m := byID["10f65e52"]; m == nil || m.ParentUUID != "" || m.Text() != "Write notes-1.txt with the word alpha" {
		t.Errorf("first prompt %+v", m)
	}
	call := byID["51d3d638"]
	if call == nil || call.Model != "m" || call.Usage == nil || call.Usage.InputTokens != 1201 || call.Usage.OutputTokens != 20 ||
		call.ResponseID != "51d3d638" || call.Blocks[0].ToolName != "write" || call.Blocks[0].ToolID != "call_1" ||
		call.Blocks[0].Input != `{"path":"notes-1.txt","content":"alpha 1\n"}` {
		t.Errorf("tool call %+v", call)
	}
	if r := byID["577f8527"]; r == nil || r.Role != compact.RoleTool || r.Blocks[0].ToolID != "call_1" ||
		r.Blocks[0].Text != "Successfully wrote 8 bytes to notes-1.txt" || r.Blocks[0].IsError {
		t.Errorf("tool result %+v", r)
	}
	// The message after the compaction hangs on it.
	if m := byID["af6ed71d"]; m == nil || m.ParentUUID != "65a3b42d" {
		t.Errorf("prompt after the compaction %+v", m)
	}
	// The branch: its summary is a meta message under the entry branched
	// from, and the new branch's prompt hangs on the summary.
	if m := byID["b186afc1"]; m == nil || !m.Meta || m.ParentUUID != "1c52e723" ||
		!strings.HasPrefix(m.Text(), "The user explored a different conversation branch") {
		t.Errorf("branch summary %+v", m)
	}
	if m := byID["70bf25ad"]; m == nil || m.ParentUUID != "b186afc1" || m.Text() != "Write notes-5.txt on the new branch" {
		t.Errorf("prompt on the new branch %+v", m)
	}
	// The last usage in the file is the latest leaf's: the context in use.
	var last *compact.Usage
	for _, r := range recs {
		if r.Message != nil && r.Message.Usage != nil {
			last = r.Message.Usage
		}
	}
	if last == nil || last.ContextTokens() != 1210 {
		t.Errorf("last usage %+v", last)
	}
}

// piTwiceFixture is a real Pi 0.73.1 session (run by TestAgentPi, its HOME
// spelt /home/dev) in which Pi compacted twice at one point: the
// compaction of a prompt's end (c3758d5c) and, racing it, that of the next
// prompt's start (6a490292, its child), both prepared from the same branch
// (the same tokensBefore and firstKeptEntryId), each summarized by a
// request of its own; the next prompt hangs on the second.
const piTwiceFixture = "../agents/pi-0.73.1/compacted-twice/2026-11-26T13-26-34-842Z_01a21809-5657-77d2-bdcf-e11ec1624023.jsonl"

// TestPiCompactedTwice: Pi compacts no branch that ends with a compaction
// (its prepareCompaction), so a compaction right under another is the
// same compaction, run twice: one boundary, the first's, with its
// summary; what follows the second hangs on the first. The same when the
// two are read by two reads (a hook ingests between Pi's writes), the
// State kept as JSON between them.
func TestPiCompactedTwice(t *testing.T) {
	t.Parallel()
	data := fixture(t, piTwiceFixture)
	check := func(t *testing.T, recs []Record) {
		t.Helper()
		ty := tallyOf(recs)
		if ty.boundaries != 1 {
			t.Fatalf("%d boundaries, want 1: %+v", ty.boundaries, ty.bounds)
		}
		if b := ty.bounds[0]; b.UUID != "c3758d5c" || b.LogicalParentUUID != "3a5644e8" || b.PreTokens != 15560 ||
			b.Summary != "## Goal\nThe user asked for tides.md and b.txt; periwinkle." {
			t.Errorf("boundary %+v", b)
		}
		for _, r := range recs {
			if m := r.Message; m != nil && m.UUID == "34252123" && m.ParentUUID != "c3758d5c" {
				t.Errorf("the prompt after the compaction hangs on %q, want the compaction", m.ParentUUID)
			}
		}
	}
	t.Run("one read", func(t *testing.T) {
		t.Parallel()
		recs, res, st := readBytes(t, FormatPi, data)
		if res.Skipped != 0 || st.LastUUID != "d0143f58" {
			t.Fatalf("result %+v, state %+v", res, st)
		}
		check(t, recs)
	})
	t.Run("two reads", func(t *testing.T) {
		t.Parallel()
		cut := bytes.Index(data, []byte(`{"type":"compaction","id":"6a490292"`))
		if cut < 0 {
			t.Fatal("no second compaction in the fixture")
		}
		st := &State{Format: FormatPi}
		var recs []Record
		collect := func(r Record) error { recs = append(recs, r); return nil }
		res, err := Read(context.Background(), bytes.NewReader(data[:cut]), st, 0, 1, collect)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		var again State
		if err := json.Unmarshal(b, &again); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(context.Background(), bytes.NewReader(data[cut:]), &again, res.End, res.NextLine, collect); err != nil {
			t.Fatal(err)
		}
		check(t, recs)
	})
}

// TestPiEntries covers the entry and message kinds the fixture lacks.
func TestPiEntries(t *testing.T) {
	t.Parallel()
	lines := []string{
		`{"type":"session","version":3,"id":"s1","timestamp":"2026-01-02T03:04:05.000Z","cwd":"/p"}`,
		`{"type":"model_change","id":"a1","parentId":null,"timestamp":"2026-01-02T03:04:06.000Z","provider":"anthropic","modelId":"claude-sonnet-4-5"}`,
		`{"type":"custom_message","id":"a2","parentId":"a1","timestamp":"2026-01-02T03:04:07.000Z","customType":"ledger","content":"ledger: resume here","display":false}`,
		`{"type":"message","id":"a3","parentId":"a2","timestamp":1767323048000,"message":{"role":"user","content":"hi","timestamp":1}}`,
		`{"type":"message","id":"a4","parentId":"a3","timestamp":"2026-01-02T03:04:09.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"yes"},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"go test ./..."}}],"model":"claude-sonnet-4-5","usage":{"input":10,"output":5,"cacheRead":100,"cacheWrite":7},"stopReason":"toolUse"}}`,
		`{"type":"message","id":"a5","parentId":"a4","timestamp":"2026-01-02T03:04:10.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"FAIL"},{"type":"image","data":"x","mimeType":"image/png"}],"isError":true}}`,
		`{"type":"message","id":"a6","parentId":"a5","timestamp":"2026-01-02T03:04:11.000Z","message":{"role":"bashExecution","command":"ls","output":"a\nb","exitCode":2,"cancelled":false,"truncated":false}}`,
		`{"type":"label","id":"a7","parentId":"a6","timestamp":"2026-01-02T03:04:12.000Z","targetId":"a3","label":"x"}`,
		`{"type":"session_info","id":"a8","parentId":"a7","timestamp":"2026-01-02T03:04:13.000Z","name":"Refactor"}`,
		`{"type":"message","id":"a9","parentId":"a8","timestamp":"2026-01-02T03:04:14.000Z","message":{"role":"assistant","content":[],"model":"claude-sonnet-4-5","stopReason":"error","errorMessage":"overloaded"}}`,
		`{"type":"some_future_kind","id":"b1","parentId":"a9","timestamp":"2026-01-02T03:04:15.000Z","payload":[1,2]}`,
		`{"type":"message","id":"b2","parentId":"a9","message":{"role":"assistant","content":"x","usage":"lots"}}`,
		`{"type":"message","parentId":"a9","message":{"role":"user","content":"no id"}}`,
		`[1,2,3]`,
		`{"type":"message","id":"b3","parentId":"a9","message":{"role":"mystery"}}`,
		`{"type":"message","id":"b4","parentId":"b3","message":{"role":"user","content":"after the mystery"}}`,
	}
	recs, res, _ := readBytes(t, FormatPi, []byte(strings.Join(lines, "\n")+"\n"))
	if res.Skipped != 3 || res.Skips[0].Reason != "malformed pi record (message.usage)" || res.Skips[1].Reason != "pi entry without id" ||
		res.Skips[2].Reason != "not a pi record" {
		t.Fatalf("skips %+v", res.Skips)
	}
	byID := map[string]*compact.Message{}
	var models, titles []string
	for _, r := range recs {
		if r.Message != nil {
			byID[r.Message.UUID] = r.Message
		}
		if s := r.Session; s != nil {
			if s.Model != "" {
				models = append(models, s.Model)
			}
			if s.Title != "" {
				titles = append(titles, s.Title)
			}
		}
	}
	if m := byID["a2"]; m == nil || !m.Meta || m.Text() != "ledger: resume here" || m.ParentUUID != "" {
		t.Errorf("custom message %+v", m)
	}
	if m := byID["a3"]; m == nil || m.Time.UTC().Format("15:04:05") != "03:04:08" || m.ParentUUID != "a2" {
		t.Errorf("user message with a numeric timestamp %+v", m)
	}
	a4 := byID["a4"]
	if a4 == nil || len(a4.Blocks) != 3 || a4.Blocks[0].Kind != compact.BlockThinking || a4.Usage.ContextTokens() != 117 ||
		a4.Usage.CacheCreationInputTokens != 7 {
		t.Errorf("assistant %+v", a4)
	}
	if r := byID["a5"]; r == nil || !r.Blocks[0].IsError || r.Blocks[0].Text != "FAIL\n[image]" {
		t.Errorf("tool result %+v", r)
	}
	if m := byID["a6"]; m == nil || !m.Meta || m.Text() != "!ls\na\nb\n[exit code 2]" {
		t.Errorf("bash execution %+v", m)
	}
	if m := byID["a9"]; m == nil || m.Text() != "[error: overloaded]" || m.ParentUUID != "a6" || m.Usage != nil {
		t.Errorf("failed reply (its parent through the label and the name) %+v", m)
	}
	if m := byID["b4"]; m == nil || m.ParentUUID != "a9" {
		t.Errorf("after an unknown role (skipped: its child hangs on its parent) %+v", m)
	}
	if len(models) != 3 || models[0] != "claude-sonnet-4-5" || len(titles) != 1 || titles[0] != "Refactor" {
		t.Errorf("models %v titles %v", models, titles)
	}
}

// TestPiBeforeHeader: entries read with no session known (a file cut
// before its header) are skipped, not stored under no session.
func TestPiBeforeHeader(t *testing.T) {
	t.Parallel()
	recs, res, _ := readBytes(t, FormatPi, []byte(`{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"x"}}`+"\n"))
	if len(recs) != 0 || res.Skipped != 1 || res.Skips[0].Reason != "pi entry before the session header" {
		t.Fatalf("records %+v, result %+v", recs, res)
	}
}
