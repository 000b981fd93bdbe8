package transcript

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchClaude builds an in-memory Claude Code transcript of about size
// bytes shaped like real ones: per turn a prompt, thinking with its
// signature, a tool call with streamed progress, a tool result that Claude
// Code also copies into toolUseResult, and an answer.
func benchClaude(size int) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	words := strings.Repeat("the quick brown fox jumps over the lazy dog; ", 40)
	envelope := func(typ, uuid, parent string, extra map[string]any) map[string]any {
		m := map[string]any{
			"parentUuid": parent, "isSidechain": false, "userType": "external",
			"cwd": "/home/user/projects/app", "sessionId": "258c7280-ae70-4798-800f-63464d01a85d",
			"version": "2.1.39", "gitBranch": "main", "type": typ, "uuid": uuid,
			"timestamp": "2026-02-11T21:18:41.543Z",
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	usage := map[string]any{"input_tokens": 3, "cache_creation_input_tokens": 1200,
		"cache_read_input_tokens": 90000, "output_tokens": 400, "service_tier": "standard"}
	parent := ""
	for turn := 0; buf.Len() < size; turn++ {
		id := func(k int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", turn, k) }
		msgID := fmt.Sprintf("msg_%024d", turn)
		lines := []map[string]any{
			envelope("user", id(1), parent, map[string]any{"message": map[string]any{"role": "user", "content": words[:300]}}),
			envelope("assistant", id(2), id(1), map[string]any{"requestId": "req_" + msgID, "message": map[string]any{
				"id": msgID, "model": "claude-opus-4-6", "role": "assistant", "usage": usage,
				"content": []any{map[string]any{"type": "thinking", "thinking": words[:1200], "signature": strings.Repeat("Ab9+", 150)}}}}),
			envelope("assistant", id(3), id(2), map[string]any{"requestId": "req_" + msgID, "message": map[string]any{
				"id": msgID, "model": "claude-opus-4-6", "role": "assistant", "usage": usage,
				"content": []any{map[string]any{"type": "tool_use", "id": "toolu_" + msgID, "name": "Bash",
					"input": map[string]any{"command": "go test ./...", "description": words[:200]}}}}}),
		}
		for k := 0; k < 3; k++ {
			lines = append(lines, envelope("progress", id(10+k), id(3), map[string]any{
				"data":      map[string]any{"type": "bash_progress", "output": words[:500], "elapsedTimeSeconds": k},
				"toolUseID": "toolu_" + msgID, "parentToolUseID": "toolu_" + msgID}))
		}
		lines = append(lines,
			envelope("user", id(4), id(12), map[string]any{"message": map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": "toolu_" + msgID, "content": words[:1800] + words[:1800], "is_error": false}}},
				"toolUseResult": map[string]any{"stdout": words[:1800] + words[:1800], "stderr": "", "interrupted": false}}),
			envelope("assistant", id(5), id(4), map[string]any{"requestId": "req2_" + msgID, "message": map[string]any{
				"id": msgID + "b", "model": "claude-opus-4-6", "role": "assistant", "usage": usage,
				"content": []any{map[string]any{"type": "text", "text": words[:1000]}}}}),
		)
		for _, l := range lines {
			if err := enc.Encode(l); err != nil {
				panic(err)
			}
		}
		parent = id(5)
	}
	return buf.Bytes()
}

func BenchmarkReadClaude(b *testing.B) {
	data := benchClaude(16 << 20)
	benchRead(b, FormatClaude, data)
}

// BenchmarkReadClaudeCorpus reads the largest real Claude transcript.
func BenchmarkReadClaudeCorpus(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(corpusDir(b), "claude", "spotter-258c7280-ae70-4798-800f-63464d01a85d.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	benchRead(b, FormatClaude, data)
}

// BenchmarkReadCodexCorpus reads the largest real Codex rollout.
func BenchmarkReadCodexCorpus(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(corpusDir(b), "codex", "localpush-rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	benchRead(b, FormatCodex, data)
}

func benchRead(b *testing.B, f Format, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		st := &State{Format: f}
		n := 0
		res, err := Read(context.Background(), bytes.NewReader(data), st, 0, 1, func(r Record) error {
			n++
			return nil
		})
		if err != nil || res.Skipped != 0 || n == 0 {
			b.Fatalf("Read: %v, %d skipped, %d records", err, res.Skipped, n)
		}
	}
}
