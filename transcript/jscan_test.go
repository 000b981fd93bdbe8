package transcript

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestScanner(t *testing.T) {
	tests := []struct {
		in   string
		want scanKind
	}{
		{`{}`, scanObject},
		{` {"a" : [1, -2.5e+3, true, false, null, "x\u00e9\n"], "b": {"c": {}}} `, scanObject},
		{`[]`, scanNotObject},
		{`"s"`, scanNotObject},
		{`-0`, scanNotObject},
		{``, scanInvalid},
		{`{`, scanInvalid},
		{`{"a":1,}`, scanInvalid},
		{`{"a" 1}`, scanInvalid},
		{`{"a":01}`, scanInvalid},
		{`{"a":1.}`, scanInvalid},
		{`{"a":.5}`, scanInvalid},
		{`{"a":1e}`, scanInvalid},
		{`{"a":"\x"}`, scanInvalid},
		{`{"a":"\u12"}`, scanInvalid},
		{"{\"a\":\"tab\there\"}", scanInvalid},
		{`{"a":tru}`, scanInvalid},
		{`{} {}`, scanInvalid},
		{`{"a":[1 2]}`, scanInvalid},
	}
	for _, tt := range tests {
		if got := eachField([]byte(tt.in), func(k, v []byte) {}); got != tt.want {
			t.Errorf("eachField(%q) = %v, want %v", tt.in, got, tt.want)
		}
		if got, want := tt.want != scanInvalid, json.Valid([]byte(tt.in)); got != want {
			t.Errorf("%q: valid %v, encoding/json says %v", tt.in, got, want)
		}
	}
	deep := bytes.Repeat([]byte("["), maxDepth+1)
	if got := eachField(deep, nil); got != scanInvalid {
		t.Errorf("too deep: %v", got)
	}
}

func TestUnquote(t *testing.T) {
	for _, s := range []string{
		`""`, `"plain"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u4e2d"`, `"\ud83d\ude00"`,
		`"\ud83d"`, `"\ud83dx"`, `"\ude00\ud83d"`, `"\ud83d\u0041"`, `"\u0000"`, `"é and \n"`,
	} {
		var want string
		if err := json.Unmarshal([]byte(s), &want); err != nil {
			t.Fatal(err)
		}
		if got := unquote([]byte(s)); got != want {
			t.Errorf("unquote(%s) = %q, want %q", s, got, want)
		}
	}
}

// FuzzScanner checks the scanner against encoding/json: the same inputs
// are valid, the same top-level fields found, strings decoded alike.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{`{"a":"b\u00e9\ud83d\ude00","n":[1,{"x":null}]}`, `[1,2]`, `"\ud800"`, `{"a":1e5}`, `{`} {
		f.Add([]byte(s))
	}
	for _, fx := range fixtures {
		for _, line := range bytes.Split(fixture(f, fx.file), []byte("\n")) {
			f.Add(line)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		data, _ = repair(data) // the reader scans repaired lines only
		fields := map[string]json.RawMessage{}
		kind := eachField(data, func(k, v []byte) { fields[key(k)] = v })
		valid := json.Valid(data)
		if (kind != scanInvalid) != valid {
			t.Fatalf("%q: scanner %v, encoding/json valid %v", data, kind, valid)
		}
		if kind != scanObject {
			return
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		for k, v := range want {
			got, ok := fields[k]
			if !ok || !bytes.Equal(got, v) {
				t.Fatalf("%q: field %q = %q, want %q", data, k, got, v)
			}
			if len(v) > 0 && v[0] == '"' {
				var s string
				if err := json.Unmarshal(v, &s); err != nil {
					t.Fatal(err)
				}
				if u := unquote(got); u != s {
					t.Fatalf("unquote(%s) = %q, want %q", got, u, s)
				}
			}
		}
	})
}
