package transcript

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// Lines in Claude Code's own shapes (2.1.39 and 2.1.2xx) for the queue of
// prompts typed while the agent is busy.
const (
	qAsk      = `{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/p","sessionId":"S","version":"2.1.39","gitBranch":"main","type":"user","message":{"role":"user","content":"Add paging to the feed"},"uuid":"u1","timestamp":"2026-02-11T20:50:00.000Z","permissionMode":"default"}`
	qTool     = `{"parentUuid":"u1","isSidechain":false,"userType":"external","cwd":"/p","sessionId":"S","version":"2.1.39","gitBranch":"main","message":{"model":"claude-opus-4-6","id":"msg_A","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"go test ./...","description":"Run the tests"}}],"stop_reason":null,"usage":{"input_tokens":1,"cache_creation_input_tokens":10,"cache_read_input_tokens":100,"output_tokens":5}},"requestId":"req_A","type":"assistant","uuid":"a1","timestamp":"2026-02-11T20:50:05.000Z"}`
	qResult   = `{"parentUuid":"a1","isSidechain":false,"userType":"external","cwd":"/p","sessionId":"S","version":"2.1.39","gitBranch":"main","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"ok","is_error":false}]},"uuid":"r1","timestamp":"2026-02-11T20:50:20.000Z"}`
	qEnqueue  = `{"type":"queue-operation","operation":"enqueue","timestamp":"2026-02-11T20:50:10.000Z","sessionId":"S","content":"also keep the old endpoint"}`
	qRemove   = `{"type":"queue-operation","operation":"remove","timestamp":"2026-02-11T20:50:20.500Z","sessionId":"S"}`
	qNotify   = `{"type":"queue-operation","operation":"enqueue","timestamp":"2026-02-11T20:50:11.000Z","sessionId":"S","content":"<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n</task-notification>"}`
	qSlash    = `{"type":"queue-operation","operation":"enqueue","timestamp":"2026-02-11T20:50:12.000Z","sessionId":"S","content":"/mcp"}`
	qDequeue  = `{"type":"queue-operation","operation":"dequeue","timestamp":"2026-02-11T20:51:00.000Z","sessionId":"S"}`
	qTyped    = `{"parentUuid":"r1","isSidechain":false,"userType":"external","cwd":"/p","sessionId":"S","version":"2.1.39","gitBranch":"main","type":"user","message":{"role":"user","content":"also keep the old endpoint"},"uuid":"u2","timestamp":"2026-02-11T20:51:00.100Z"}`
	qPopAll   = `{"type":"queue-operation","operation":"popAll","timestamp":"2026-02-11T20:50:15.000Z","sessionId":"S","content":"also keep the old endpoint"}`
	qEnqueue2 = `{"type":"queue-operation","operation":"enqueue","timestamp":"2026-07-10T09:12:30.000Z","sessionId":"S","content":"run the linter too"}`
	qRemove2  = `{"type":"queue-operation","operation":"remove","timestamp":"2026-07-10T09:12:31.000Z","sessionId":"S","content":"run the linter too"}`
	qAttach   = `{"parentUuid":"r1","isSidechain":false,"attachment":{"type":"queued_command","prompt":[{"type":"text","text":"run the linter too"}],"commandMode":"prompt","timestamp":"2026-07-10T09:12:31.004Z"},"type":"attachment","uuid":"at1","timestamp":"2026-07-10T09:12:31.004Z","userType":"external","entrypoint":"cli","cwd":"/p","sessionId":"S","version":"2.1.204","gitBranch":"main"}`
	qAttachNo = `{"parentUuid":"r1","isSidechain":false,"attachment":{"type":"queued_command","prompt":"<task-notification>\n<task-id>b2</task-id>\n</task-notification>","commandMode":"task-notification"},"type":"attachment","uuid":"at2","timestamp":"2026-07-10T09:12:32.000Z","sessionId":"S"}`
	qAttachPl = `{"parentUuid":"r1","isSidechain":false,"attachment":{"type":"plan_mode","reminderType":"full"},"type":"attachment","uuid":"at3","timestamp":"2026-07-10T09:12:33.000Z","sessionId":"S"}`
)

// typedRequests are the texts of the user messages that are not tool
// results, in order.
func typedRequests(recs []Record) []string {
	var out []string
	for _, r := range recs {
		if m := r.Message; m != nil && m.Role == "user" && !m.Meta && len(m.Blocks) > 0 && m.Blocks[0].Kind == "text" {
			out = append(out, m.Text())
		}
	}
	return out
}

func TestQueuedPrompts(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"removed mid-turn (2.1.39): the queue holds its only record",
			[]string{qAsk, qTool, qEnqueue, qNotify, qSlash, qResult, qRemove},
			[]string{"Add paging to the feed", "also keep the old endpoint"}},
		{"dequeued between turns: it arrives as a user line, once",
			[]string{qAsk, qTool, qEnqueue, qResult, qDequeue, qTyped},
			[]string{"Add paging to the feed", "also keep the old endpoint"}},
		{"a user line with the queued text, no dequeue written: once",
			[]string{qAsk, qTool, qEnqueue, qResult, qTyped},
			[]string{"Add paging to the feed", "also keep the old endpoint"}},
		{"popped back into the input box: not delivered",
			[]string{qAsk, qTool, qEnqueue, qPopAll, qResult, qRemove},
			[]string{"Add paging to the feed"}},
		{"notifications and slash commands in the queue are not prompts",
			[]string{qAsk, qTool, qNotify, qSlash, qResult, qRemove},
			[]string{"Add paging to the feed"}},
		{"remove with content, then the attachment (2.1.2xx): once",
			[]string{qAsk, qTool, qEnqueue2, qRemove2, qAttach, qResult},
			[]string{"Add paging to the feed", "run the linter too"}},
		{"the attachment alone is the prompt",
			[]string{qAsk, qTool, qAttach, qResult},
			[]string{"Add paging to the feed", "run the linter too"}},
		{"other attachments are not prompts",
			[]string{qAsk, qTool, qAttachNo, qAttachPl, qResult},
			[]string{"Add paging to the feed"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs, res, _ := readBytes(t, FormatClaude, []byte(strings.Join(tc.lines, "\n")+"\n"))
			if res.Skipped != 0 {
				t.Errorf("skipped %v", res.Skips)
			}
			if got := typedRequests(recs); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("requests %q, want %q", got, tc.want)
			}
		})
	}
}

// TestQueuedPromptAcrossReads: a prompt enqueued at the end of one read
// (a hook ingesting mid-turn) and removed in the next is still delivered:
// the queue travels in the State's JSON.
func TestQueuedPromptAcrossReads(t *testing.T) {
	first := strings.Join([]string{qAsk, qTool, qEnqueue}, "\n") + "\n"
	second := strings.Join([]string{qResult, qRemove}, "\n") + "\n"
	st := &State{Format: FormatClaude}
	var recs []Record
	collect := func(r Record) error { recs = append(recs, r); return nil }
	res, err := Read(context.Background(), strings.NewReader(first), st, 0, 1, collect)
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
	if _, err := Read(context.Background(), bytes.NewReader([]byte(second)), &again, res.End, res.NextLine, collect); err != nil {
		t.Fatal(err)
	}
	if got, want := typedRequests(recs), []string{"Add paging to the feed", "also keep the old endpoint"}; !reflect.DeepEqual(got, want) {
		t.Errorf("requests %q, want %q", got, want)
	}
}

// TestQueuedPromptRedactedBetweenReads: a store keeps a State's JSON with
// its secrets replaced ([REDACTED:<kind>]), the queued prompts' too. The
// next read still matches them with the text as the transcript has it: a
// prompt delivered by another way is not delivered again, a prompt
// delivered before is not doubled by its attachment.
func TestQueuedPromptRedactedBetweenReads(t *testing.T) {
	const secret = "Zq8vLw2pXr0Tm2Kc5Wn8"
	typed := "also use the token " + secret + " for the old endpoint"
	enqueue := strings.Replace(qEnqueue, "also keep the old endpoint", typed, 1)
	userLine := strings.Replace(qTyped, "also keep the old endpoint", typed, 1)
	removeWith := strings.Replace(qRemove2, "run the linter too", typed, 1)
	attach := strings.Replace(qAttach, "run the linter too", typed, 1)
	// redacted is what a store keeps of the State: the secret replaced.
	redacted := func(st *State) *State {
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(secret)) {
			t.Fatalf("the State does not carry the queued prompt: %s", b)
		}
		b = bytes.ReplaceAll(b, []byte(secret), []byte("[REDACTED:generic-api-key]"))
		var again State
		if err := json.Unmarshal(b, &again); err != nil {
			t.Fatal(err)
		}
		return &again
	}
	tests := []struct {
		name          string
		first, second []string
		want          []string
	}{
		{"typed between turns, then a remove without text",
			[]string{qAsk, qTool, enqueue}, []string{qResult, qDequeue, userLine, qRemove},
			[]string{"Add paging to the feed", typed}},
		{"removed with its text, then its attachment",
			[]string{qAsk, qTool, enqueue, removeWith}, []string{attach, qResult},
			[]string{"Add paging to the feed", typed}},
		{"removed without text in the next read",
			[]string{qAsk, qTool, enqueue}, []string{qResult, qRemove},
			[]string{"Add paging to the feed", "also use the token [REDACTED:generic-api-key] for the old endpoint"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := &State{Format: FormatClaude}
			var recs []Record
			collect := func(r Record) error { recs = append(recs, r); return nil }
			res, err := Read(context.Background(), strings.NewReader(strings.Join(tc.first, "\n")+"\n"), st, 0, 1, collect)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Read(context.Background(), strings.NewReader(strings.Join(tc.second, "\n")+"\n"), redacted(st), res.End, res.NextLine, collect); err != nil {
				t.Fatal(err)
			}
			if got := typedRequests(recs); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("requests %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSameText(t *testing.T) {
	tests := []struct {
		kept, text string
		want       bool
	}{
		{"a b", "a b", true},
		{"a b", "a c", false},
		{"key [REDACTED:x] ok", "key s3cr3t ok", true},
		{"key [REDACTED:x] ok", "key  ok", false},
		{"key [REDACTED:x] ok", "key s3cr3t ok!", false},
		{"[REDACTED:x]", "anything", true},
		{"[REDACTED:x]", "", false},
		{"a [REDACTED:x] b [REDACTED:y] c", "a 1 b 2 c", true},
		{"a [REDACTED:x] b [REDACTED:y] c", "a 1 c", false},
		{"a[REDACTED:x][REDACTED:y]c", "a12c", true},
		{"a[REDACTED:x][REDACTED:y]c", "a1c", false},
		{"[REDACTED:x", "[REDACTED:x", true},
		{"[REDACTED:x", "anything", false},
	}
	for _, tc := range tests {
		if got := sameText(tc.kept, tc.text); got != tc.want {
			t.Errorf("sameText(%q, %q) = %v, want %v", tc.kept, tc.text, got, tc.want)
		}
	}
}
