package store

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/transcript"
)

// corpusMessages reads the messages of the shared corpus's transcripts and
// of a generated session.
func corpusMessages(t *testing.T) []compact.Message {
	t.Helper()
	ctx := context.Background()
	var msgs []compact.Message
	read := func(r *bytes.Reader, format transcript.Format) {
		st := transcript.State{Format: format}
		transcript.Read(ctx, r, &st, 0, 1, func(rec transcript.Record) error {
			if rec.Message != nil {
				msgs = append(msgs, *rec.Message)
			}
			return nil
		})
	}
	var buf bytes.Buffer
	if err := transcript.Generate(&buf, transcript.GenOptions{Seed: 9, Messages: 800, Shape: transcript.GenReal}); err != nil {
		t.Fatal(err)
	}
	read(bytes.NewReader(buf.Bytes()), transcript.FormatClaude)
	corpus := os.Getenv("LEDGER_CORPUS")
	if corpus == "" {
		corpus = filepath.Join("..", "..", "shared", "corpus")
	}
	for _, dir := range []string{"claude", "codex"} {
		files, _ := filepath.Glob(filepath.Join(corpus, dir, "*.jsonl"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			format := transcript.FormatClaude
			if dir == "codex" {
				format = transcript.FormatCodex
			}
			read(bytes.NewReader(b), format)
		}
	}
	return msgs
}

// TestBlocksRoundTrip checks that the blocks column, which leaves out what
// the text column holds, reads back as the message's blocks, and that rows
// written whole (before) read as they did.
func TestBlocksRoundTrip(t *testing.T) {
	t.Parallel()
	msgs := corpusMessages(t)
	deduped := 0
	for _, m := range msgs {
		if len(m.Blocks) == 0 {
			continue
		}
		text := m.SearchText()
		enc, err := encodeBlocks(m.Blocks, text)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeBlocks(text, string(enc))
		if err != nil {
			t.Fatalf("%s: %v", m.UUID, err)
		}
		if !reflect.DeepEqual(got, m.Blocks) {
			t.Fatalf("%s: blocks read back\n%+v\nwant\n%+v", m.UUID, got, m.Blocks)
		}
		if len(enc) < len(text) {
			deduped++
		}
		whole, _ := json.Marshal(m.Blocks)
		if got, err := decodeBlocks(text, string(whole)); err != nil || !reflect.DeepEqual(got, m.Blocks) {
			t.Fatalf("%s: a row written whole reads back as %+v, %v", m.UUID, got, err)
		}
		// A text that is not the blocks' (none is today): kept whole.
		enc, err = encodeBlocks(m.Blocks, text+"x")
		if err != nil {
			t.Fatal(err)
		}
		if got, err := decodeBlocks(text+"x", string(enc)); err != nil || !reflect.DeepEqual(got, m.Blocks) {
			t.Fatalf("%s: with another text, blocks read back as %+v, %v", m.UUID, got, err)
		}
	}
	if deduped < len(msgs)/4 {
		t.Errorf("only %d of %d messages stored their blocks shorter than their text", deduped, len(msgs))
	}
	t.Logf("%d messages, %d with blocks shorter than their text", len(msgs), deduped)
}

func TestDecodeBlocksRejectsBadLengths(t *testing.T) {
	t.Parallel()
	for _, data := range []string{
		`[{"kind":"text","len":10}]`,
		`[{"kind":"tool_use","tool_name":"Bash","len":2}]`,
	} {
		if _, err := decodeBlocks("short", data); err == nil {
			t.Errorf("decodeBlocks(%s) on a short text: no error", data)
		}
	}
}
