package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestCrossSiteRefused: a request another site makes the browser send
// (Sec-Fetch-Site cross-site or same-site, an Origin not the server's) is
// refused with 403 before it costs anything, whatever its Host header;
// what the user opens (Sec-Fetch-Site none), the pages' own links and
// scripts (same-origin) and tools that send neither header are served.
// Before, a no-cors GET from any page, Host 127.0.0.1, ran its search.
func TestCrossSiteRefused(t *testing.T) {
	t.Parallel()
	path := buildLedger(t, testdata("sample"), testdata("web"))
	srv := httptest.NewServer(newTestServer(t, path, Options{}))
	defer srv.Close()
	own := srv.URL // http://127.0.0.1:port
	for _, tc := range []struct {
		name    string
		headers map[string]string
		code    int
	}{
		{"no fetch metadata (curl)", nil, 200},
		{"typed in the address bar", map[string]string{"Sec-Fetch-Site": "none"}, 200},
		{"the page's own link", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": own}, 200},
		{"another site", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}, 403},
		{"another port of localhost", map[string]string{"Sec-Fetch-Site": "same-site"}, 403},
		{"another origin", map[string]string{"Origin": "http://evil.example"}, 403},
		{"an opaque origin", map[string]string{"Origin": "null"}, 403},
		{"another port, by its origin", map[string]string{"Origin": "http://127.0.0.1:1"}, 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, target := range []string{"/search?q=login", "/", "/static/app.js"} {
				req, err := http.NewRequest("GET", srv.URL+target, nil)
				if err != nil {
					t.Fatal(err)
				}
				for k, v := range tc.headers {
					req.Header.Set(k, v)
				}
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != tc.code {
					t.Errorf("%s: %d, want %d\n%s", target, res.StatusCode, tc.code, excerpt(string(body)))
				}
				if tc.code == 403 && !strings.Contains(string(body), "another site") {
					t.Errorf("%s: the refusal does not say why:\n%s", target, excerpt(string(body)))
				}
			}
		})
	}
}

// TestSearchQueryCapped: the web view takes a query of at most the MCP
// search tool's 1,000 characters; a longer one is a 400 at once. Before, a
// 20,000-word query cost seconds of CPU.
func TestSearchQueryCapped(t *testing.T) {
	t.Parallel()
	path := buildLedger(t, testdata("sample"), testdata("web"))
	s := newTestServer(t, path, Options{})
	long := strings.TrimSpace(strings.Repeat("login ", 20000))
	start := time.Now()
	r := get(t, s, "GET", "/search?q="+url.QueryEscape(long))
	if r.code != 400 || !strings.Contains(r.body, "at most 1000 characters") {
		t.Errorf("a 20,000-word query: %d after %v\n%s", r.code, time.Since(start), excerpt(r.body))
	}
	r = get(t, s, "GET", "/search?q="+url.QueryEscape(strings.Repeat("é", 1000)))
	if r.code != 200 {
		t.Errorf("a query of 1000 characters: %d\n%s", r.code, excerpt(r.body))
	}
}

// TestPageNumbers: a page number past the last is a 400 that says how
// many pages there are, on every paged view, however large; before,
// /audit?page=<huge> panicked the handler and /sessions?page=<huge>
// showed the first page.
func TestPageNumbers(t *testing.T) {
	t.Parallel()
	path := buildLedger(t, testdata("sample"), testdata("web"))
	s := newTestServer(t, path, Options{})
	huge := "9223372036854775807"
	for _, tc := range []struct {
		target string
		code   int
		want   string
	}{
		{"/sessions?page=0", 200, webSession[:8]},
		{"/sessions?page=1", 400, "page 1: past the last page of sessions"},
		{"/sessions?page=" + huge, 400, "past the last page of sessions"},
		{"/sessions?page=4611686018427387904", 400, "past the last page of sessions"},
		{"/sessions?page=99999999999999999999", 400, "want a whole number"},
		{"/audit?page=0", 200, "compactions"},
		{"/audit?page=1", 400, "page 1: 3 compactions make 1 page(s)"},
		{"/audit?page=" + huge, 400, "3 compactions make 1 page(s)"},
		{"/audit?page=92233720368547758", 400, "3 compactions make 1 page(s)"},
		{"/sessions/" + webSession + "?page=" + huge, 400, "the session has 1 page(s)"},
	} {
		r := get(t, s, "GET", tc.target)
		if r.code != tc.code || !strings.Contains(r.body, tc.want) {
			t.Errorf("%s: %d, want %d and %q\n%s", tc.target, r.code, tc.code, tc.want, excerpt(r.body))
		}
	}
}
