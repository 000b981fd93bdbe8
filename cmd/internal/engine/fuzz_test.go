package engine

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// hookSeeds are hook inputs as Claude Code writes them, one per event
// ledger handles, and the bad inputs a hook must shrug off.
var hookSeeds = []string{
	`{"session_id":"258c7280-ae70-4798-800f-63464d01a85d","transcript_path":"/home/dev/.claude/projects/-home-dev-src-payments/258c7280-ae70-4798-800f-63464d01a85d.jsonl","cwd":"/home/dev/src/payments","permission_mode":"default","hook_event_name":"PreCompact","trigger":"auto","custom_instructions":""}`,
	`{"session_id":"258c7280-ae70-4798-800f-63464d01a85d","transcript_path":"~/.claude/projects/-home-dev-src-payments/258c7280-ae70-4798-800f-63464d01a85d.jsonl","cwd":"/home/dev/src/payments","hook_event_name":"PreCompact","trigger":"manual","custom_instructions":"keep the retry decisions"}`,
	`{"session_id":"7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57","transcript_path":"/home/dev/.claude/projects/-home-dev-src-payments/7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57.jsonl","cwd":"/home/dev/src/payments","hook_event_name":"SessionStart","source":"compact","model":"claude-sonnet-4-5-20250929"}`,
	`{"session_id":"7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57","transcript_path":"/home/dev/.claude/projects/-home-dev-src-payments/7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57.jsonl","cwd":"/home/dev/src/payments","hook_event_name":"SessionStart","source":"clear"}`,
	`{"session_id":"7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57","transcript_path":"/home/dev/.claude/projects/-home-dev-src-payments/7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57.jsonl","cwd":"/home/dev/src/payments","permission_mode":"default","hook_event_name":"SessionEnd","reason":"prompt_input_exit"}`,
	`{"session_id":"7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57","transcript_path":"/home/dev/.claude/projects/-home-dev-src-payments/7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57.jsonl","cwd":"/home/dev/src/payments","permission_mode":"acceptEdits","hook_event_name":"Stop","stop_hook_active":false}`,
	`{"session_id":"7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57","transcript_path":"/home/dev/.claude/projects/-home-dev-src-payments/7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57.jsonl","cwd":"/home/dev/src/payments","permission_mode":"default","hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{"file_path":"/home/dev/src/payments/pkg/retry.go","old_string":"return err","new_string":"return fmt.Errorf(\"retry: %w\", err)"},"tool_response":{"filePath":"/home/dev/src/payments/pkg/retry.go","success":true},"tool_use_id":"toolu_01ABCDEFGH"}`,
	`{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test ./..."},"tool_response":{"stdout":"ok","stderr":"","interrupted":false}}`,
	`{"session_id":"s","hook_event_name":"Notification","message":"Claude needs your permission"}`,
	"", "{}", "null", "[]", `"Stop"`, "not json", `{"hook_event_name":5}`, `{"hook_event_name":"Stop"} {"x":1}`,
	`{"hook_event_name":"Stop","custom_instructions":null}`, "{\"hook_event_name\":\"St\xffop\"}", "\x00\x00",
	`{"hook_event_name":"Stop","session_id":"a\u0000b"}`, `{"hook_event_name":"Stop","hook_event_name":""}`,
}

func TestHookInputSeeds(t *testing.T) {
	t.Parallel()
	for _, s := range hookSeeds[:8] {
		in, err := DecodeHookInput(strings.NewReader(s))
		if err != nil || in.Event == "" || in.SessionID == "" || in.TranscriptPath == "" {
			t.Errorf("DecodeHookInput(%.60s...) = %+v, %v; want a decoded input", s, in, err)
		}
	}
	big := `{"hook_event_name":"Stop","cwd":"` + strings.Repeat("x", maxHookInput) + `"}`
	if _, err := DecodeHookInput(strings.NewReader(big)); err == nil {
		t.Error("an input over maxHookInput was decoded")
	}
}

// FuzzHookInput: whatever arrives on stdin, DecodeHookInput returns an error
// or an input that names its event, never panics, and reads the same
// however the bytes are split.
func FuzzHookInput(f *testing.F) {
	for _, s := range hookSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := DecodeHookInput(bytes.NewReader(data))
		if err == nil {
			if in.Event == "" {
				t.Fatalf("decoded %q without an event", data)
			}
			if len(data) > maxHookInput || !json.Valid(data) {
				t.Fatalf("decoded %q: not one JSON document within the limit", data)
			}
		}
		in2, err2 := DecodeHookInput(iotest.OneByteReader(bytes.NewReader(data)))
		if (err == nil) != (err2 == nil) || !reflect.DeepEqual(in, in2) {
			t.Fatalf("one byte at a time: %+v, %v; whole: %+v, %v", in2, err2, in, err)
		}
	})
}
