package transcript

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentledger/ledger/compact"
)

// agentsDir holds real sessions of Gemini CLI, Qwen Code and Copilot CLI,
// recorded for ledger (testdata/agents/*/README.md says how).
const agentsDir = "../testdata/agents"

// agentFixtures are the real session files of the agents ledger reads
// besides Claude Code and Codex.
var agentFixtures = []struct {
	name, file string
	format     Format
}{
	{"gemini", "gemini-0.61.0/session-2026-11-26T07-33-43a4cd49.jsonl", FormatGemini},
	{"qwen", "qwen-0.24.4/2b788ca2-da3e-4837-8559-64db64b96aa9.jsonl", FormatQwen},
	{"copilot", "copilot-1.0.102/session-state/66fcbb38-f834-48de-bcfa-712cc7192b3c/events.jsonl", FormatCopilot},
}

func agentFixture(t testing.TB, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(agentsDir, file))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// stored is what a store keeps of records: each message and boundary once
// (by uuid, the first copy), in the order first met, and the session facts
// merged as the store merges them (the first project, the latest of the
// rest).
type stored struct {
	msgs    []compact.Message
	bounds  []compact.Boundary
	session SessionInfo
	usages  int
	seen    map[string]bool
}

func storeOf(recs []Record) *stored {
	s := &stored{seen: map[string]bool{}}
	s.add(recs)
	return s
}

func (s *stored) add(recs []Record) {
	for _, r := range recs {
		if m := r.Message; m != nil && !s.seen["m"+m.UUID] {
			s.seen["m"+m.UUID] = true
			s.msgs = append(s.msgs, *m)
		}
		if b := r.Boundary; b != nil && !s.seen["b"+b.UUID] {
			s.seen["b"+b.UUID] = true
			s.bounds = append(s.bounds, *b)
		}
		if i := r.Session; i != nil {
			if s.session.Project == "" {
				s.session.Project = i.Project
			}
			s.session.ID = cmpOrString(i.ID, s.session.ID)
			s.session.Model = cmpOrString(i.Model, s.session.Model)
			s.session.Title = cmpOrString(i.Title, s.session.Title)
			s.session.GitBranch = cmpOrString(i.GitBranch, s.session.GitBranch)
			if i.Usage != nil {
				s.usages++
				s.session.Usage = i.Usage
			}
		}
	}
}

// of returns the messages with role and first block kind.
func (s *stored) of(role compact.Role, kind compact.BlockKind) []compact.Message {
	var out []compact.Message
	for _, m := range s.msgs {
		if m.Role == role && len(m.Blocks) > 0 && m.Kind() == kind {
			out = append(out, m)
		}
	}
	return out
}

// digest is what ends up stored, as one comparable text.
func (s *stored) digest(t testing.TB) string {
	b, err := json.Marshal(struct {
		Msgs   []compact.Message
		Bounds []compact.Boundary
	}{s.msgs, s.bounds})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReadAgentFixtures checks what each reader takes from a real session
// of its agent: the prompts typed, each tool call with its input and its
// result, the model's texts, usage, model, working folder, and the
// compactions with their summaries and token counts.
func TestReadAgentFixtures(t *testing.T) {
	t.Parallel()
	type want struct {
		session, project, model   string
		prompts                   []string
		tool                      string
		texts                     int
		metaHook                  int // Meta messages from a SessionStart hook
		bounds                    []compact.Boundary
		messageUsage, sessionOnly bool
	}
	tests := []struct {
		fixture int
		want    want
	}{
		{0, want{session: "43a4cd49-8852-46d6-9a9b-e46d6b0404f9", project: "/tmp/ledger-fixtures/gemini/proj", model: "gemini-3.8-flash",
			prompts: []string{"Please WRITE /tmp/ledger-fixtures/gemini/proj/notes-1.txt with the word alpha.",
				"Now WRITE /tmp/ledger-fixtures/gemini/proj/notes-2.txt with the word beta. FILL=900000", "Which files did you write?"},
			tool: "write_file", texts: 3, metaHook: 3, messageUsage: true,
			bounds: []compact.Boundary{{UUID: "b69d5c7d-9460-4a3f-a8d2-e39b7680dd1d", Trigger: "auto", PreTokens: 900000}}}},
		{1, want{session: "2b788ca2-da3e-4837-8559-64db64b96aa9", project: "/tmp/ledger-fixtures/qwen/proj", model: "m",
			prompts: []string{"Please WRITE /tmp/ledger-fixtures/qwen/proj/notes-1.txt with the word alpha.",
				"Now WRITE /tmp/ledger-fixtures/qwen/proj/notes-2.txt with the word beta. FILL=180000", "Which files did you write?"},
			tool: "write_file", texts: 3, messageUsage: true,
			bounds: []compact.Boundary{{Trigger: "auto", PreTokens: 180058, PostTokens: 710}, {Trigger: "manual", PreTokens: 1026, PostTokens: 116}}}},
		{2, want{session: "66fcbb38-f834-48de-bcfa-712cc7192b3c", project: "/tmp/ledger-fixtures/copilot/proj", model: "m",
			prompts: []string{"Please WRITE /tmp/ledger-fixtures/copilot/proj/notes-1.txt with the word alpha.",
				"Now WRITE /tmp/ledger-fixtures/copilot/proj/notes-2.txt with the word beta. FILL=95000", "Which files did you write?"},
			tool: "create", texts: 3, sessionOnly: true,
			bounds: []compact.Boundary{{Trigger: "auto", PreTokens: 10620, PostTokens: 10556}, {Trigger: "manual", PreTokens: 10496, PostTokens: 10484}}}},
	}
	for _, tc := range tests {
		fx := agentFixtures[tc.fixture]
		t.Run(fx.name, func(t *testing.T) {
			t.Parallel()
			w := tc.want
			path := filepath.Join(agentsDir, fx.file)
			if f := detectFile(t, path); f != fx.format {
				t.Fatalf("detected %q, want %q", f, fx.format)
			}
			recs, res, st := readFile(t, path)
			if res.Skipped != 0 {
				t.Errorf("skipped %d lines: %+v", res.Skipped, res.Skips)
			}
			if st.SessionID != w.session {
				t.Errorf("session %q, want %q", st.SessionID, w.session)
			}
			s := storeOf(recs)
			if s.session.Project != w.project || s.session.Model != w.model {
				t.Errorf("session facts %+v, want project %s model %s", s.session, w.project, w.model)
			}
			var prompts []string
			meta := 0
			for _, m := range s.of(compact.RoleUser, compact.BlockText) {
				if m.SessionID != w.session {
					t.Errorf("message %s of session %q", m.UUID, m.SessionID)
				}
				if m.Meta {
					meta++
					if !strings.Contains(m.Text(), "LEDGER-MARKER") {
						t.Errorf("a Meta user message that is not the hook's context: %q", m.Text())
					}
					continue
				}
				prompts = append(prompts, m.Text())
			}
			if strings.Join(prompts, "|") != strings.Join(w.prompts, "|") || meta != w.metaHook {
				t.Errorf("prompts %q (%d meta), want %q (%d meta)", prompts, meta, w.prompts, w.metaHook)
			}
			calls, results := s.of(compact.RoleAssistant, compact.BlockToolUse), s.of(compact.RoleTool, compact.BlockToolResult)
			if len(calls) != 2 || len(results) != 2 {
				t.Fatalf("%d tool calls, %d results; want 2 and 2", len(calls), len(results))
			}
			for i, c := range calls {
				b, r := c.Blocks[0], results[i].Blocks[0]
				file := "notes-" + string(rune('1'+i)) + ".txt"
				if b.ToolName != w.tool || !strings.Contains(b.Input, file) || !json.Valid([]byte(b.Input)) {
					t.Errorf("call %d: %+v, want %s writing %s", i, b, w.tool, file)
				}
				if r.ToolID != b.ToolID || r.IsError || !strings.Contains(r.Text, file) {
					t.Errorf("result %d: %+v, want the result of %s", i, r, b.ToolID)
				}
			}
			if fx.format == FormatGemini && (calls[1].Usage == nil || calls[1].Usage.InputTokens != 900000) {
				// A response with tool calls and no text: its usage goes with
				// its first call, where the meter finds it.
				t.Errorf("the second call's usage: %+v, want the 900,000 prompt tokens of its response", calls[1].Usage)
			}
			texts := s.of(compact.RoleAssistant, compact.BlockText)
			if len(texts) != w.texts || texts[0].Text() != "Done: wrote the file." {
				t.Errorf("%d assistant texts, want %d starting with Done", len(texts), w.texts)
			}
			if w.messageUsage && (texts[0].Usage == nil || texts[0].Usage.InputTokens < 1000 || texts[0].Model != w.model) {
				t.Errorf("assistant text without its usage and model: %+v", texts[0])
			}
			if w.sessionOnly && s.usages < 3 {
				t.Errorf("%d usages, want one per model call", s.usages)
			}
			if len(s.bounds) != len(w.bounds) {
				t.Fatalf("%d compactions, want %d: %+v", len(s.bounds), len(w.bounds), s.bounds)
			}
			for i, b := range s.bounds {
				wb := w.bounds[i]
				if (wb.UUID != "" && b.UUID != wb.UUID) || b.Trigger != wb.Trigger || b.PreTokens != wb.PreTokens || b.PostTokens != wb.PostTokens ||
					b.SessionID != w.session || b.Time.IsZero() {
					t.Errorf("compaction %d: %+v, want %+v", i, b, wb)
				}
				if !strings.HasPrefix(b.Summary, "<state_snapshot>") || !strings.HasSuffix(b.Summary, "</state_snapshot>") ||
					!strings.Contains(b.Summary, "notes-1.txt holds the word alpha") {
					t.Errorf("compaction %d summary %q, want the snapshot the model wrote", i, b.Summary)
				}
				if b.LogicalParentUUID == "" {
					t.Errorf("compaction %d has no logical parent", i)
				}
			}
		})
	}
}

// TestReadAgentFixturesIncrementally reads each fixture as it grew: in two
// parts cut at every line, the reader's State carried between the reads
// through its JSON (as the ingest cursor stores it). What the store would
// keep is the same as from one read of the whole file.
func TestReadAgentFixturesIncrementally(t *testing.T) {
	t.Parallel()
	for _, fx := range agentFixtures {
		t.Run(fx.name, func(t *testing.T) {
			t.Parallel()
			data := agentFixture(t, fx.file)
			recs, _, _ := readBytes(t, fx.format, data)
			want := storeOf(recs).digest(t)
			for cut := 0; cut < len(data); {
				next := bytes.IndexByte(data[cut:], '\n')
				if next < 0 {
					break
				}
				cut += next + 1
				s := storeOf(nil)
				st := &State{Format: fx.format}
				res1 := readInto(t, data[:cut], st, 0, 1, s)
				b, err := json.Marshal(st)
				if err != nil {
					t.Fatal(err)
				}
				st2 := &State{}
				if err := json.Unmarshal(b, st2); err != nil {
					t.Fatal(err)
				}
				readInto(t, data[res1.End:], st2, res1.End, res1.NextLine, s)
				if got := s.digest(t); got != want {
					t.Fatalf("cut after byte %d: the two reads keep\n%s\nwant\n%s", cut, got, want)
				}
			}
		})
	}
}

func readInto(t *testing.T, data []byte, st *State, start int64, line int, s *stored) Result {
	t.Helper()
	var recs []Record
	res, err := Read(context.Background(), bytes.NewReader(data), st, start, line, func(r Record) error {
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s.add(recs)
	return res
}

// TestReadGeminiRewind: after {"$rewindTo": id} the next message is
// parented to the one before id (the rewound messages stay, a dead
// branch), even when the rewind comes in a later read.
func TestReadGeminiRewind(t *testing.T) {
	t.Parallel()
	data := agentFixture(t, agentFixtures[0].file)
	// Rewind to the last prompt ("Which files did you write?"), then a
	// new prompt.
	const last = "76db4e01-f4f0-42fd-9def-4e5f9b9c9b38"
	extra := `{"$rewindTo":"` + last + `"}` + "\n" +
		`{"id":"aaaaaaaa-0000-4000-8000-000000000001","timestamp":"2026-11-26T07:40:00.000Z","type":"user","content":[{"text":"Write notes-3.txt instead."}]}` + "\n"
	all := append(append([]byte{}, data...), extra...)
	for _, split := range []bool{false, true} {
		s := storeOf(nil)
		st := &State{Format: FormatGemini}
		if split {
			res := readInto(t, data, st, 0, 1, s)
			b, _ := json.Marshal(st)
			st = &State{}
			json.Unmarshal(b, st)
			readInto(t, all[res.End:], st, res.End, res.NextLine, s)
		} else {
			readInto(t, all, st, 0, 1, s)
		}
		var rewound, fresh *compact.Message
		for i, m := range s.msgs {
			switch m.UUID {
			case last + "#hook_context":
				rewound = &s.msgs[i]
			case "aaaaaaaa-0000-4000-8000-000000000001":
				fresh = &s.msgs[i]
			}
		}
		if rewound == nil || fresh == nil {
			t.Fatalf("split %v: rewound %v, new %v", split, rewound, fresh)
		}
		if fresh.ParentUUID != rewound.ParentUUID || fresh.ParentUUID == "" {
			t.Errorf("split %v: the prompt after the rewind has parent %q, want %q (the rewound prompt's)", split, fresh.ParentUUID, rewound.ParentUUID)
		}
		if !s.seen["m"+last] {
			t.Errorf("split %v: the rewound prompt is gone from what was read", split)
		}
	}
}

// TestReadGeminiUpserts: a message record written again with more (its
// tool calls, then their results) adds the new parts only, and reading
// the log again from its start adds nothing.
func TestReadGeminiUpserts(t *testing.T) {
	t.Parallel()
	header := `{"sessionId":"s1","projectHash":"h","startTime":"2026-11-26T07:00:00.000Z","lastUpdated":"2026-11-26T07:00:00.000Z","kind":"main"}`
	copies := []string{
		`{"id":"m1","timestamp":"2026-11-26T07:00:01.000Z","type":"gemini","content":"Let me look.","thoughts":[],"tokens":{"input":500,"output":10,"cached":100,"thoughts":5,"tool":0,"total":515},"model":"gemini-2.5-pro"}`,
		`{"id":"m1","timestamp":"2026-11-26T07:00:01.000Z","type":"gemini","content":"Let me look.","thoughts":[],"tokens":{"input":500,"output":10,"cached":100,"thoughts":5,"tool":0,"total":515},"model":"gemini-2.5-pro","toolCalls":[{"id":"c1","name":"run_shell_command","args":{"command":"ls"},"status":"executing"}]}`,
		`{"id":"m1","timestamp":"2026-11-26T07:00:01.000Z","type":"gemini","content":"Let me look.","thoughts":[],"tokens":{"input":500,"output":10,"cached":100,"thoughts":5,"tool":0,"total":515},"model":"gemini-2.5-pro","toolCalls":[{"id":"c1","name":"run_shell_command","args":{"command":"ls"},"status":"error","result":[{"functionResponse":{"id":"c1","name":"run_shell_command","response":{"error":"ls: permission denied"}}}]}]}`,
	}
	log := header + "\n" + strings.Join(copies, "\n") + "\n"
	recs, _, _ := readBytes(t, FormatGemini, []byte(log))
	s := storeOf(recs)
	if len(s.msgs) != 3 {
		t.Fatalf("%d messages, want the text, the call and its result: %+v", len(s.msgs), s.msgs)
	}
	text, call, result := s.msgs[0], s.msgs[1], s.msgs[2]
	if text.UUID != "m1" || text.Text() != "Let me look." || text.Usage == nil || *text.Usage != (compact.Usage{InputTokens: 400, CacheReadInputTokens: 100, OutputTokens: 15}) {
		t.Errorf("text: %+v", text)
	}
	if call.UUID != "c1#call" || call.ToolName() != "run_shell_command" || call.Blocks[0].Input != `{"command":"ls"}` || call.ParentUUID != "m1" {
		t.Errorf("call: %+v", call)
	}
	if r := result.Blocks[0]; result.UUID != "c1#result" || !r.IsError || r.Text != "ls: permission denied" || r.ToolID != "c1" {
		t.Errorf("result: %+v", result)
	}
	// A log Gemini CLI rewrote from the history it held after a compression
	// has the snapshot as a message: the compaction's summary, no request.
	snap := header + "\n" + `{"id":"s1m","timestamp":"2026-11-26T07:01:00.000Z","type":"user","content":[{"text":"<state_snapshot>\n<overall_goal>x</overall_goal>\n</state_snapshot>"}]}` + "\n"
	sr, _, _ := readBytes(t, FormatGemini, []byte(snap))
	if sm := storeOf(sr).msgs; len(sm) != 1 || !sm[0].Meta || !sm[0].CompactSummary {
		t.Errorf("a snapshot message: %+v, want a Meta compaction summary", sm)
	}
	// The same log read again (the file rewritten from its head): the same
	// uuids, which the store keeps once.
	again, _, _ := readBytes(t, FormatGemini, []byte(log))
	s.add(again)
	if len(s.msgs) != 3 {
		t.Errorf("reading again added messages: %d", len(s.msgs))
	}
}

// TestReadBOM: a UTF-8 byte order mark before a file's first record is
// not part of it, in every format.
func TestReadBOM(t *testing.T) {
	t.Parallel()
	for _, fx := range append(agentFixtures[:len(agentFixtures):len(agentFixtures)], struct {
		name, file string
		format     Format
	}{"claude", "../transcript/claude-session/transcript.jsonl", FormatClaude}) {
		data := agentFixture(t, fx.file)
		bom := append([]byte("\xef\xbb\xbf"), data...)
		f, err := Detect(bytes.NewReader(bom))
		if err != nil || f != fx.format {
			t.Fatalf("%s: Detect with a BOM = %q, %v", fx.name, f, err)
		}
		plain, _, _ := readBytes(t, fx.format, data)
		got, res, _ := readBytes(t, fx.format, bom)
		if res.Skipped != 0 || storeOf(got).digest(t) != storeOf(plain).digest(t) {
			t.Errorf("%s: with a BOM, %d lines skipped, or other records", fx.name, res.Skipped)
		}
	}
}

// TestDetectAgents: each agent's lines decide for it and no other.
func TestDetectAgents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line string
		want Format
	}{
		{`{"sessionId":"s","projectHash":"h","startTime":"t","kind":"main"}`, FormatGemini},
		{`{"$set":{"lastUpdated":"t"}}`, FormatGemini},
		{`{"$rewindTo":"m1"}`, FormatGemini},
		{`{"id":"m1","timestamp":"t","type":"user","content":[{"text":"hi"}]}`, FormatGemini},
		{`{"uuid":"u","parentUuid":null,"sessionId":"s","type":"user","message":{"role":"user","parts":[{"text":"hi"}]}}`, FormatQwen},
		{`{"uuid":"u","sessionId":"s","type":"system","subtype":"ui_telemetry","systemPayload":{}}`, FormatQwen},
		{`{"type":"session.start","data":{"sessionId":"s"},"id":"e1","timestamp":"t","parentId":null}`, FormatCopilot},
		// Not theirs:
		{`{"uuid":"u","sessionId":"s","type":"user","message":{"role":"user","content":"hi"}}`, FormatClaude},
		{`{"timestamp":"t","type":"session_meta","payload":{"id":"s"}}`, FormatCodex},
	}
	for _, tc := range tests {
		if got, err := Detect(strings.NewReader(tc.line + "\n")); got != tc.want || err != nil {
			t.Errorf("Detect(%s) = %q, %v; want %q", tc.line, got, err, tc.want)
		}
	}
}

// TestReadAgentsBadInput: lines that are not records, or records of the
// wrong shape, are skipped and counted, never fatal; hostile strings are
// kept as data.
func TestReadAgentsBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		format  Format
		lines   []string
		skipped int
		msgs    int
	}{
		{FormatGemini, []string{`{"id":"m0","type":"user","content":"before any header"}`, `not json`, `[1,2]`,
			`{"sessionId":"s","projectHash":"h"}`, `{"id":"m1","type":"user","content":{"text":"ok"}}`,
			`{"id":"m2","type":"gemini","content":42,"toolCalls":[{"id":"../../x","name":"write_file","args":{}}]}`,
			// A messages that is no list is ignored, as Gemini CLI does.
			`{"$set":"not an object"}`, `{"$set":{"messages":"nope"}}`}, 4, 2},
		// Parts as a plain string are a text part (the API's PartListUnion);
		// a negative token count is no usage.
		{FormatQwen, []string{`{"uuid":"u1","sessionId":"s","type":"user"}`, `{"type":"user"}`, `{"uuid":"u2","sessionId":"s","type":"user","message":{"parts":"x"}}`,
			`{"uuid":"u3","sessionId":"s","type":"assistant","message":{"role":"model","parts":[{"text":"fine"}]},"usageMetadata":{"promptTokenCount":-5}}`,
			`{"uuid":"u4","sessionId":"s","type":"user","message":{"parts":7}}`}, 3, 2},
		{FormatCopilot, []string{`{"type":"user.message","data":{"content":"no session yet"},"id":"e0"}`,
			`{"type":"session.start","data":{"sessionId":"s"},"id":"e1"}`, `{"type":"user.message","data":"x","id":"e2"}`,
			`{"type":"user.message","data":{},"id":"e3"}`, `{"type":"user.message","data":{"content":"hi"},"id":"e4"}`}, 3, 1},
	}
	for _, tc := range tests {
		recs, res, _ := readBytes(t, tc.format, []byte(strings.Join(tc.lines, "\n")+"\n"))
		if s := storeOf(recs); res.Skipped != tc.skipped || len(s.msgs) != tc.msgs {
			t.Errorf("%s: %d skipped (%+v), %d messages; want %d and %d", tc.format, res.Skipped, res.Skips, len(s.msgs), tc.skipped, tc.msgs)
		}
	}
}

// TestReadCopilotErrorShapes: an event's error is an object with a
// message or a bare string (a compaction that failed); neither makes the
// line malformed. Before, a failed compaction's string error skipped its
// line as "malformed copilot record (error)".
func TestReadCopilotErrorShapes(t *testing.T) {
	t.Parallel()
	lines := []string{
		`{"type":"session.start","data":{"sessionId":"s"},"id":"e1","timestamp":"2026-11-26T10:00:00Z"}`,
		`{"type":"user.message","data":{"content":"run it"},"id":"e2","timestamp":"2026-11-26T10:00:01Z"}`,
		`{"type":"tool.execution_complete","data":{"toolCallId":"t1","success":false,"error":{"message":"exit 1: boom","code":"failure"}},"id":"e3","timestamp":"2026-11-26T10:00:02Z"}`,
		`{"type":"tool.execution_complete","data":{"toolCallId":"t2","success":false,"error":"permission denied"},"id":"e4","timestamp":"2026-11-26T10:00:03Z"}`,
		`{"type":"session.compaction_complete","data":{"success":false,"error":"the model did not answer"},"id":"e5","timestamp":"2026-11-26T10:00:04Z"}`,
		`{"type":"session.compaction_complete","data":{"success":true,"trigger":"auto","preCompactionTokens":9000,"summaryContent":"the work so far"},"id":"e6","timestamp":"2026-11-26T10:00:05Z"}`,
	}
	recs, res, _ := readBytes(t, FormatCopilot, []byte(strings.Join(lines, "\n")+"\n"))
	if res.Skipped != 0 {
		t.Fatalf("%d lines skipped: %+v", res.Skipped, res.Skips)
	}
	var errs []string
	var bounds int
	for _, r := range recs {
		if r.Message != nil {
			for _, b := range r.Message.Blocks {
				if b.IsError {
					errs = append(errs, b.Text)
				}
			}
		}
		if r.Boundary != nil {
			bounds++
			if r.Boundary.Summary != "the work so far" {
				t.Errorf("compaction summary %q", r.Boundary.Summary)
			}
		}
	}
	if len(errs) != 2 || errs[0] != "exit 1: boom" || errs[1] != "permission denied" {
		t.Errorf("tool errors %q, want both messages", errs)
	}
	if bounds != 1 {
		t.Errorf("%d compactions, want 1 (the failed one is none)", bounds)
	}
}

// TestGeminiWorkspaceIsGeminiCLIs: the session's project is the workspace
// Gemini CLI's own <session_context> (the history's first message) names;
// a later prompt that starts the same way (text a user pasted) does not
// move the session to another project.
func TestGeminiWorkspaceIsGeminiCLIs(t *testing.T) {
	t.Parallel()
	header := `{"sessionId":"s1","projectHash":"h","startTime":"2026-11-26T07:00:00.000Z","lastUpdated":"2026-11-26T07:00:00.000Z","kind":"main"}`
	ctx := func(id, dir string) string {
		return `{"id":"` + id + `","timestamp":"2026-11-26T07:00:01.000Z","type":"user","content":[{"text":"<session_context>\nThis is the Gemini CLI.\n- **Workspace Directories:**\n  - ` + dir + `\n</session_context>"}]}`
	}
	project := func(msgs ...string) string {
		set := `{"$set":{"messages":[` + strings.Join(msgs, ",") + `]}}`
		recs, _, _ := readBytes(t, FormatGemini, []byte(header+"\n"+set+"\n"))
		p := ""
		for _, r := range recs {
			if r.Session != nil && r.Session.Project != "" {
				p = r.Session.Project
			}
		}
		return p
	}
	if p := project(ctx("u0", "/home/dev/src/app"), ctx("u1", "/home/dev/src/other")); p != "/home/dev/src/app" {
		t.Errorf("project %q, want the workspace of Gemini CLI's own session context, /home/dev/src/app", p)
	}
	if p := project(ctx("u0", "no folder"), ctx("u1", "/home/dev/src/other")); p != "" {
		t.Errorf("project %q from a later prompt, want none: Gemini CLI's own context names no folder", p)
	}
}
