package engine

import (
	"net/url"
	"path/filepath"
	"strings"
	"testing"
)

func TestIDName(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", maxIDName+1)
	for _, tc := range []struct{ id, want string }{
		{"7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57", "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57"},
		{"ses_01ABC", "ses_01ABC"},
		{"", "%-"},
		{".", "%2E"},
		{"..", "%2E%2E"},
		{"../../etc/x", "%2E%2E%2F%2E%2E%2Fetc%2Fx"},
		{"a\nb", "a%0Ab"},
		{`a\b`, "a%5Cb"},
		{"a%2Eb", "a%252Eb"},
		{"é", "%C3%A9"},
		{"con", "%63on"},
		{"COM1", "%43OM1"},
		{"COM", "COM"},
		{long, strings.Repeat("a", maxIDName-34) + "%-"},
	} {
		got := IDName(tc.id)
		if tc.id == long {
			got = got[:len(tc.want)]
		}
		if got != tc.want {
			t.Errorf("IDName(%q) = %q, want %q", tc.id, got, tc.want)
		}
	}
}

// FuzzIDName: whatever two ids are, each name is one safe path part (a
// file name in the folder it joins, never "." or "..", of safe bytes only,
// within maxIDName), distinct ids get distinct names, and a name that is
// not cut decodes back to its id.
func FuzzIDName(f *testing.F) {
	for _, s := range []string{"7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57", "", ".", "..", "../x", "a\nb", "%-", "%2E", "nul",
		strings.Repeat("%", 60), strings.Repeat("é", 100)} {
		f.Add(s, s+"x")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		na, nb := IDName(a), IDName(b)
		for _, n := range []string{na, nb} {
			if n == "" || n == "." || n == ".." || len(n) > maxIDName || filepath.Base(n) != n ||
				filepath.Join("dir", n) != "dir/"+n || windowsDevice(n) {
				t.Fatalf("IDName gave %q", n)
			}
			for _, c := range []byte(n) {
				if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '%') {
					t.Fatalf("IDName gave %q: byte %q", n, c)
				}
			}
		}
		if (a == b) != (na == nb) {
			t.Fatalf("IDName(%q) = %q, IDName(%q) = %q", a, na, b, nb)
		}
		if !strings.Contains(na, "%-") {
			if back, err := url.PathUnescape(na); err != nil || back != a {
				t.Fatalf("IDName(%q) = %q decodes to %q, %v", a, na, back, err)
			}
		}
	})
}
