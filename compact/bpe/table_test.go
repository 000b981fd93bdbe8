package bpe

import (
	"bytes"
	"encoding/binary"
	"flag"
	"os"
	"testing"

	"github.com/tiktoken-go/tokenizer/codec"
)

var update = flag.Bool("update", false, "regenerate cl100k.bin from github.com/tiktoken-go/tokenizer")

// slotBits sizes the hash table: 2^18 slots for 100,256 tokens, a load of
// 0.38, so that a lookup that fails (most do, while merging) stops soon.
const genSlotBits = 18

// vocabulary reads cl100k_base's tokens, by rank, from the reference
// library.
func vocabulary(t *testing.T) []string {
	t.Helper()
	c := codec.NewCl100kBase()
	var toks []string
	for r := uint(0); ; r++ {
		s, err := c.Decode([]uint{r})
		if err != nil {
			break
		}
		toks = append(toks, s)
	}
	if len(toks) != 100256 {
		t.Fatalf("%d tokens of consecutive rank from 0, want 100256", len(toks))
	}
	return toks
}

// build lays the table out (see table in bpe.go).
func build(toks []string) []byte {
	var ends, slots, data bytes.Buffer
	slotv := make([]uint32, 1<<genSlotBits)
	mask := uint32(1)<<genSlotBits - 1
	for r, s := range toks {
		data.WriteString(s)
		binary.Write(&ends, binary.LittleEndian, uint32(data.Len()))
		h := hash(s) & mask
		for slotv[h] != 0 {
			h = (h + 1) & mask
		}
		slotv[h] = uint32(r) + 1
	}
	binary.Write(&slots, binary.LittleEndian, slotv)
	var out bytes.Buffer
	binary.Write(&out, binary.LittleEndian, [2]uint32{uint32(len(toks)), genSlotBits})
	out.Write(ends.Bytes())
	out.Write(slots.Bytes())
	out.Write(data.Bytes())
	return out.Bytes()
}

// TestTable checks that the embedded table is the reference library's
// vocabulary: every token at its rank. -update writes it anew.
func TestTable(t *testing.T) {
	toks := vocabulary(t)
	want := build(toks)
	if *update {
		if err := os.WriteFile("cl100k.bin", want, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Skip("cl100k.bin written; run again without -update")
	}
	if table != string(want) {
		t.Fatal("cl100k.bin is not what the reference vocabulary gives: go test ./compact/bpe -run TestTable -update")
	}
	for r, s := range toks {
		if got, ok := rank(s); !ok || got != uint32(r) {
			t.Fatalf("rank(%q) = %d, %v; want %d", s, got, ok, r)
		}
	}
}
