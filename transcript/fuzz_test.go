package transcript

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// addSeeds gives a fuzz target the fixtures, whole and line by line.
func addSeeds(f *testing.F) {
	for _, fx := range fixtures {
		data := fixture(f, fx.file)
		f.Add(data)
		for _, line := range bytes.SplitAfter(data, []byte("\n")) {
			f.Add(line)
		}
	}
	f.Add([]byte("{\"type\":\"summary\",\"summary\":\"t\"}\r\n\x00\xff\n{"))
}

func FuzzReadClaude(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, FormatClaude, data) })
}

func FuzzReadCodex(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, FormatCodex, data) })
}

func FuzzDetect(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		format, err := Detect(bytes.NewReader(data))
		switch {
		case err == nil:
			if format != FormatClaude && format != FormatCodex {
				t.Fatalf("format %q without error", format)
			}
		case errors.Is(err, ErrEmpty):
			if len(bytes.TrimSpace(data)) != 0 {
				t.Fatalf("ErrEmpty for %q", data)
			}
		case !errors.Is(err, ErrUnknownFormat):
			t.Fatalf("unexpected error %v", err)
		}
	})
}

// fuzzRead reads data whole, then in two parts cut at its middle line,
// and checks what must hold for any input: no error, End at a line
// boundary within the input, Lines matching End, and the two reads giving
// the messages and boundaries of the whole read.
func fuzzRead(t *testing.T, f Format, data []byte) {
	st := &State{Format: f}
	var recs []Record
	res, err := Read(context.Background(), bytes.NewReader(data), st, 0, 1, func(r Record) error {
		if r.Message == nil && r.Boundary == nil && r.Session == nil {
			t.Fatalf("empty record at line %d", r.Line)
		}
		if r.Message != nil && r.Boundary != nil {
			t.Fatalf("line %d: message and boundary", r.Line)
		}
		if r.Offset < 0 || r.Offset >= int64(len(data)) || (r.Offset > 0 && data[r.Offset-1] != '\n') {
			t.Fatalf("record offset %d not at a line start", r.Offset)
		}
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if res.End < 0 || res.End > int64(len(data)) || (res.End > 0 && data[res.End-1] != '\n') {
		t.Fatalf("End %d not at a line boundary of %d bytes", res.End, len(data))
	}
	if lines := bytes.Count(data[:res.End], []byte("\n")); lines != res.Lines || res.NextLine != lines+1 {
		t.Fatalf("Lines %d NextLine %d, want %d", res.Lines, res.NextLine, lines)
	}
	if res.End != int64(bytes.LastIndexByte(data, '\n')+1) {
		t.Fatalf("End %d before the last complete line", res.End)
	}
	if res.Skipped > res.Lines || len(res.Skips) > MaxSkipsListed || len(res.Skips) > res.Skipped {
		t.Fatalf("skips %d of %d lines, %d listed", res.Skipped, res.Lines, len(res.Skips))
	}

	cut := bytes.IndexByte(data[len(data)/2:], '\n')
	if cut < 0 {
		return
	}
	cut += len(data)/2 + 1
	st2 := &State{Format: f}
	var parts []Record
	collect := func(r Record) error { parts = append(parts, r); return nil }
	res1, err := Read(context.Background(), bytes.NewReader(data[:cut]), st2, 0, 1, collect)
	if err != nil {
		t.Fatal(err)
	}
	res2, err := Read(context.Background(), bytes.NewReader(data[res1.End:]), st2, res1.End, res1.NextLine, collect)
	if err != nil {
		t.Fatal(err)
	}
	if res2.End != res.End || res1.Skipped+res2.Skipped != res.Skipped || res1.Repaired+res2.Repaired != res.Repaired {
		t.Fatalf("split reads: %+v then %+v; whole %+v", res1, res2, res)
	}
	if g, w := contentOf(t, parts), contentOf(t, recs); g != w {
		t.Fatalf("split reads differ:\n got %s\nwant %s", g, w)
	}
}
