// Package transcripttest reads what a Claude Code transcript's tool calls
// did as plain JSON, apart from ledger's readers, so that tests can hold
// what the readers, the handoff and `ledger compact` make of a real
// session against the transcript itself.
package transcripttest

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// block is a content block of a transcript line's message, as much of it
// as these readings need.
type block struct {
	Type  string         `json:"type"`
	Name  string         `json:"name"`
	Input map[string]any `json:"input"`
}

// eachBlock calls f with every content block of the transcript at path.
// Lines that are not JSON, and messages whose content is a string, have
// none.
func eachBlock(t testing.TB, path string, f func(block)) {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	r := bufio.NewReaderSize(file, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		var l struct {
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &l) == nil {
			var blocks []block
			_ = json.Unmarshal(l.Message.Content, &blocks) // string contents fail: no blocks
			for _, b := range blocks {
				f(b)
			}
		}
		if err != nil {
			return
		}
	}
}

// EditedFiles lists every path an Edit, Write, MultiEdit or NotebookEdit
// call of the transcript at path names (whether or not the call
// succeeded), in the order first named, each once.
func EditedFiles(t testing.TB, path string) []string {
	t.Helper()
	var files []string
	seen := map[string]bool{}
	eachBlock(t, path, func(b block) {
		if b.Type != "tool_use" {
			return
		}
		var p string
		switch b.Name {
		case "Edit", "Write", "MultiEdit":
			p, _ = b.Input["file_path"].(string)
		case "NotebookEdit":
			p, _ = b.Input["notebook_path"].(string)
		}
		if p != "" && !seen[p] {
			seen[p] = true
			files = append(files, p)
		}
	})
	return files
}

// NotRemoved is files less those a Bash call of the transcript at path
// removes (a command that starts with rm and names the file): a file the
// session created and later removed changed nothing.
func NotRemoved(t testing.TB, path string, files []string) []string {
	t.Helper()
	var rms []string
	eachBlock(t, path, func(b block) {
		if c, _ := b.Input["command"].(string); b.Name == "Bash" && strings.HasPrefix(c, "rm ") {
			rms = append(rms, c)
		}
	})
	var kept []string
	for _, f := range files {
		removed := false
		for _, c := range rms {
			removed = removed || strings.Contains(c, f)
		}
		if !removed {
			kept = append(kept, f)
		}
	}
	return kept
}
