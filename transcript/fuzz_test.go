package transcript

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// addSeeds gives a fuzz target the fixtures, whole and line by line.
func addSeeds(f *testing.F) {
	for _, fx := range fixtures {
		data := fixture(f, fx.file)
		f.Add(data)
		f.Add(append([]byte("\uFEFF"), data...)) // a byte order mark
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

func FuzzReadPi(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRead(t, FormatPi, data) })
}

func FuzzDetect(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		format, err := Detect(bytes.NewReader(data))
		switch {
		case err == nil:
			// A format Detect names is one Read reads.
			if _, err := Read(context.Background(), bytes.NewReader(nil), &State{Format: format}, 0, 1, func(Record) error { return nil }); err != nil {
				t.Fatalf("format %q without error: %v", format, err)
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

// FuzzCutter feeds a line to the long-line cutter in chunks, with limits
// small enough for the fuzzer to reach (a head of 8 bytes, a tail of 4):
// a line that is JSON stays JSON, each string keeping its start and end
// around a marker, with valid UTF-8 where the input had it.
func FuzzCutter(f *testing.F) {
	for _, s := range []string{
		`{"a":"0123456789abcdefghij","b":[1,"short",{"c":"\n\t\"\\\u00e9\ud83d\ude00xxxxxxxxxx"}]}`,
		`"éééééééééééééééé"`, `["😀😀😀😀😀😀😀😀"]`, `{"k":"\u0041\u0042\u0043\u0044\u0045\u0046\u0047"}`,
		`[1,2,3]`, `{"unterminated":"abc`, `not json "with a quote`, `""`,
	} {
		f.Add([]byte(s), uint8(7))
	}
	f.Fuzz(func(t *testing.T, line []byte, chunk uint8) {
		var c cutter
		c.reset(8, 4, 4096)
		n := int(chunk)%16 + 1
		for i := 0; i < len(line); i += n {
			c.write(line[i:min(len(line), i+n)])
		}
		out, ok := c.finish()
		if !ok || !json.Valid(line) {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("%q cut to %q: not JSON", line, out)
		}
		if utf8.Valid(line) && !utf8.Valid(out) {
			t.Fatalf("%q cut to %q: not UTF-8", line, out)
		}
		var in, got any
		json.Unmarshal(line, &in)
		json.Unmarshal(out, &got)
		if !cutOf(in, got) {
			t.Fatalf("%q cut to %q: a value is not its input's, cut", line, out)
		}
	})
}

// cutOf tells whether got is in, every string either the same or cut: a
// start of it, a marker, an end of it.
func cutOf(in, got any) bool {
	switch in := in.(type) {
	case string:
		g, ok := got.(string)
		if !ok {
			return false
		}
		if g == in {
			return true
		}
		head, rest, found := strings.Cut(g, "\n[ledger: ")
		_, tail, found2 := strings.Cut(rest, "]\n")
		return found && found2 && strings.HasPrefix(in, strings.TrimRight(head, "\uFFFD")) && strings.HasSuffix(in, strings.TrimLeft(tail, "\uFFFD"))
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(in) {
			return false
		}
		for i := range in {
			if !cutOf(in[i], g[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(in) {
			return false
		}
		// A key is a string too, cut alike: each of in's keys has one of
		// got's that is it or its cut, with its value or its cut.
		for k, v := range in {
			found := false
			for gk, gv := range g {
				if cutOf(k, gk) && cutOf(v, gv) {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(in, got)
}
