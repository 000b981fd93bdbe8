package store

import (
	"encoding/json"
	"fmt"

	"github.com/agentledger/ledger/compact"
)

// storedBlock is a content block as the messages table's blocks column
// holds it. The text column holds the message's search text: each block's
// part (its text, or its tool name and input; see compact.SearchText), one
// a line. A block whose part is there is not written twice: Len is the
// part's length in bytes, and its Text (or Input) is read back from the
// text column. Tool output is most of a ledger's bytes; it used to be stored
// in both columns. Rows written before have no Len and read as they are.
type storedBlock struct {
	Kind     compact.BlockKind `json:"kind"`
	Text     string            `json:"text,omitempty"`
	ToolName string            `json:"tool_name,omitempty"`
	ToolID   string            `json:"tool_id,omitempty"`
	Input    string            `json:"input,omitempty"`
	IsError  bool              `json:"is_error,omitempty"`
	Len      int               `json:"len,omitempty"`
}

// part is a block's part of the search text (compact.Message.SearchText).
func part(b compact.Block) string {
	switch b.Kind {
	case compact.BlockText, compact.BlockThinking, compact.BlockToolResult:
		return b.Text
	case compact.BlockToolUse:
		return b.ToolName + " " + b.Input
	case compact.BlockImage:
		return "[image]"
	}
	return ""
}

// encodeBlocks writes blocks as the blocks column holds them, given the
// message's search text. A text that is not the blocks' search text (there
// is none such today) keeps every block whole.
func encodeBlocks(blocks []compact.Block, text string) ([]byte, error) {
	out := make([]storedBlock, len(blocks))
	off, whole := 0, false
	for i, b := range blocks {
		out[i] = storedBlock{Kind: b.Kind, Text: b.Text, ToolName: b.ToolName, ToolID: b.ToolID, Input: b.Input, IsError: b.IsError}
		p := part(b)
		if p == "" {
			continue
		}
		if off > 0 {
			if off >= len(text) || text[off] != '\n' {
				whole = true
				break
			}
			off++
		}
		if len(text)-off < len(p) || text[off:off+len(p)] != p {
			whole = true
			break
		}
		off += len(p)
		switch b.Kind {
		case compact.BlockText, compact.BlockThinking, compact.BlockToolResult:
			out[i].Text, out[i].Len = "", len(p)
		case compact.BlockToolUse:
			out[i].Input, out[i].Len = "", len(p)
		}
	}
	if whole || off != len(text) {
		return json.Marshal(blocks)
	}
	return json.Marshal(out)
}

// decodeBlocks reads the blocks column back, given the text column.
func decodeBlocks(text, data string) ([]compact.Block, error) {
	var in []storedBlock
	if err := decodeJSON(data, &in); err != nil {
		return nil, err
	}
	out := make([]compact.Block, len(in))
	off := 0
	for i, sb := range in {
		b := compact.Block{Kind: sb.Kind, Text: sb.Text, ToolName: sb.ToolName, ToolID: sb.ToolID, Input: sb.Input, IsError: sb.IsError}
		n := sb.Len
		if n == 0 {
			n = len(part(b))
		}
		if n > 0 {
			if off > 0 {
				off++ // the line break between parts
			}
			if off+n > len(text) {
				return nil, fmt.Errorf("block %d: %d bytes at %d, past the text's %d", i, n, off, len(text))
			}
			if sb.Len > 0 {
				p := text[off : off+n]
				switch b.Kind {
				case compact.BlockToolUse:
					if len(p) < len(b.ToolName)+1 {
						return nil, fmt.Errorf("block %d: tool call shorter than its name", i)
					}
					b.Input = p[len(b.ToolName)+1:]
				default:
					b.Text = p
				}
			}
			off += n
		}
		out[i] = b
	}
	return out, nil
}
