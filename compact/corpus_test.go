package compact

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// This file is a test-only reader of Claude Code transcripts: just enough to
// calibrate and check the package against the real corpus in
// ../shared/corpus. The real readers live in package transcript, which
// imports compact (never the other way round).

// corpusDir returns the shared corpus folder, or skips the test when it is
// absent. $LEDGER_CORPUS wins; otherwise the folder is looked for beside the
// repository (../shared/corpus from the repository root).
func corpusDir(t testing.TB) string {
	t.Helper()
	candidates := []string{os.Getenv("LEDGER_CORPUS"), "../../shared/corpus", "../shared/corpus"}
	for _, dir := range candidates {
		if dir == "" {
			continue
		}
		if fi, err := os.Stat(filepath.Join(dir, "claude")); err == nil && fi.IsDir() {
			return dir
		}
	}
	if os.Getenv("LEDGER_REQUIRE_CORPUS") != "" {
		t.Fatal("corpus required (LEDGER_REQUIRE_CORPUS) but not found")
	}
	t.Skip("corpus not found: set LEDGER_CORPUS or put it at ../shared/corpus beside the repository")
	return ""
}

// corpusFile returns the path of the one Claude corpus file whose name
// starts with prefix.
func corpusFile(t testing.TB, prefix string) string {
	t.Helper()
	dir := filepath.Join(corpusDir(t), "claude")
	matches, err := filepath.Glob(filepath.Join(dir, prefix+"*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var main []string
	for _, m := range matches {
		if !strings.Contains(filepath.Base(m), ".subagents.") {
			main = append(main, m)
		}
	}
	if len(main) != 1 {
		t.Fatalf("corpus file %s*.jsonl not found in %s (found %d)", prefix, dir, len(main))
	}
	return main[0]
}

// claudeLine is the part of a Claude Code transcript line the tests read.
type claudeLine struct {
	Type        string    `json:"type"`
	UUID        string    `json:"uuid"`
	ParentUUID  string    `json:"parentUuid"`
	SessionID   string    `json:"sessionId"`
	RequestID   string    `json:"requestId"`
	IsSidechain bool      `json:"isSidechain"`
	IsMeta      bool      `json:"isMeta"`
	IsSummary   bool      `json:"isCompactSummary"`
	Timestamp   time.Time `json:"timestamp"`
	Message     struct {
		ID      string          `json:"id"`
		Model   string          `json:"model"`
		Content json.RawMessage `json:"content"`
		Usage   *Usage          `json:"usage"`
	} `json:"message"`
}

type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// readClaude decodes the user and assistant lines of a Claude Code
// transcript into messages. Other lines (progress, snapshots, system) are
// left out. Files are read once per test binary; callers get a copy of the
// slice and must not modify the messages' blocks.
func readClaude(t testing.TB, path string) []Message {
	t.Helper()
	if msgs, ok := corpusCache.Load(path); ok {
		return slices.Clone(msgs.([]Message))
	}
	msgs := decodeClaudeFile(t, path)
	corpusCache.Store(path, msgs)
	return slices.Clone(msgs)
}

var corpusCache sync.Map // path -> []Message

func decodeClaudeFile(t testing.TB, path string) []Message {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var msgs []Message
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			if m, ok := decodeClaudeLine(line); ok {
				msgs = append(msgs, m)
			}
		}
		if err != nil {
			break
		}
	}
	return msgs
}

func decodeClaudeLine(line []byte) (Message, bool) {
	var l claudeLine
	if err := json.Unmarshal(line, &l); err != nil {
		return Message{}, false
	}
	if l.Type != "user" && l.Type != "assistant" {
		return Message{}, false
	}
	m := Message{UUID: l.UUID, ParentUUID: l.ParentUUID, SessionID: l.SessionID,
		Role: Role(l.Type), Time: l.Timestamp, Model: l.Message.Model, Usage: l.Message.Usage,
		Meta: l.IsMeta, CompactSummary: l.IsSummary, Sidechain: l.IsSidechain}
	if l.Type == "assistant" && l.Message.ID != "" {
		m.ResponseID = l.Message.ID + ":" + l.RequestID
	}
	var s string
	if json.Unmarshal(l.Message.Content, &s) == nil {
		m.Blocks = []Block{{Kind: BlockText, Text: s}}
		return m, true
	}
	var blocks []claudeBlock
	if err := json.Unmarshal(l.Message.Content, &blocks); err != nil {
		return Message{}, false
	}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			m.Blocks = append(m.Blocks, Block{Kind: BlockText, Text: b.Text})
		case "thinking", "redacted_thinking":
			m.Blocks = append(m.Blocks, Block{Kind: BlockThinking, Text: b.Thinking})
		case "tool_use":
			m.Blocks = append(m.Blocks, Block{Kind: BlockToolUse, ToolID: b.ID, ToolName: b.Name, Input: string(b.Input)})
		case "tool_result":
			m.Blocks = append(m.Blocks, Block{Kind: BlockToolResult, ToolID: b.ToolUseID, Text: flattenResult(b.Content), IsError: b.IsError})
		case "image":
			m.Blocks = append(m.Blocks, Block{Kind: BlockImage})
		}
	}
	return m, true
}

// flattenResult turns a tool_result's content (a string or a list of text
// blocks) into text.
func flattenResult(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
