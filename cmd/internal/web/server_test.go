package web

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/store/storetest"
)

// The sessions of testdata/sample and testdata/web.
const (
	sampleClaude = "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57"
	sampleCodex  = "0199f3a2"
	webSession   = "5c417a11-7e57-4e0b-9a11-0000c0ffee00"
)

func testdata(parts ...string) string {
	return filepath.Join(append([]string{"..", "..", "..", "testdata"}, parts...)...)
}

// buildLedger ingests paths into a new ledger and returns its file.
func buildLedger(t testing.TB, paths ...string) string {
	t.Helper()
	ctx := context.Background()
	// A copy of the migrated template: the migration is store's to test.
	path := storetest.MigratedFile(t, filepath.Join(t.TempDir(), "ledger.db"))
	e := openEngine(t, path, engine.Write)
	if _, err := e.Ingest(ctx, paths, engine.IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// openEngine opens the engine of the ledger at path in mode m, closed
// when the test ends.
func openEngine(t testing.TB, path string, m engine.Mode) *engine.Engine {
	t.Helper()
	e, err := engine.Open(engine.Config{DB: path, Mode: m})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// newTestServer serves a ledger file read-only, as `ledger serve` does.
func newTestServer(t testing.TB, path string, o Options) *Server {
	t.Helper()
	ctx := context.Background()
	e := openEngine(t, path, engine.Read)
	o.Log = log.New(io.Discard, "", 0)
	s, err := New(ctx, e, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type response struct {
	code     int
	body     string
	location string
	header   http.Header
}

func get(t testing.TB, h http.Handler, method, target string) response {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	req.Host = "127.0.0.1:7788"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return response{rec.Code, rec.Body.String(), rec.Header().Get("Location"), rec.Header()}
}

// TestPages: every page, and every bad parameter: an unknown row is a 404
// page, a parameter that cannot be read a 400 page with the message.
func TestPages(t *testing.T) {
	path := buildLedger(t, testdata("sample"), testdata("web"))
	s := newTestServer(t, path, Options{})
	// ids that only the ledger knows
	st, err := store.Open(context.Background(), path, store.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cs, err := st.Compactions(context.Background(), store.CompactionFilter{SessionID: webSession})
	if err != nil || len(cs) != 1 {
		t.Fatalf("compactions of the web session: %v %v", cs, err)
	}
	webCompaction := "/compactions/" + itoa(cs[0].ID)
	res, err := st.Search(context.Background(), store.SearchOptions{Query: store.ParseQuery("ratelimit.go"), SessionID: webSession, Kind: "message"})
	if err != nil || len(res.Hits) == 0 {
		t.Fatalf("search: %v %v", res, err)
	}
	message := "/messages/" + itoa(res.Hits[0].ID)

	for _, tc := range []struct {
		method, target string
		code           int
		want           []string // in the body (or the Location of a redirect)
		not            []string
	}{
		{"GET", "/", 200, []string{"Sessions", sampleClaude[:8], sampleCodex, webSession[:8], "145,000"}, nil},
		{"GET", "/sessions?agent=codex", 200, []string{sampleCodex}, []string{sampleClaude[:8]}},
		{"GET", "/sessions?project=/home/dev/src/webapp", 200, []string{webSession[:8]}, []string{sampleCodex}},
		{"GET", "/sessions?since=2026-03-04&until=2026-03-06", 200, []string{webSession[:8]}, []string{sampleClaude[:8]}},
		{"GET", "/sessions?page=1", 400, []string{"page 1: past the last page of sessions"}, nil},
		{"GET", "/sessions?agent=cursor", 400, []string{`agent &#34;cursor&#34;: want one of claude, codex, gemini`}, nil},
		{"GET", "/sessions?agent=gemini", 200, []string{"No sessions", `<option value="gemini" selected>Gemini CLI</option>`, `<option value="copilot">Copilot CLI</option>`}, []string{sampleCodex}},
		{"GET", "/sessions?agent=pi", 200, []string{"No sessions", `<option value="pi" selected>Pi</option>`, `<option value="kilo">Kilo CLI</option>`}, []string{sampleCodex}},
		{"GET", "/sessions?since=last+tuesday", 400, []string{"since &#34;last tuesday&#34;: want a date"}, nil},
		{"GET", "/sessions?page=-1", 400, []string{"page &#34;-1&#34;: want a whole number"}, nil},
		{"GET", "/sessions/" + webSession, 200, []string{"compaction-marker", "Context per message", `id="m0"`,
			"tool call <b>Edit</b>", "/compactions/"}, nil},
		{"GET", "/sessions/" + webSession[:6], 302, []string{"/sessions/" + webSession}, nil},
		{"GET", "/sessions/" + webSession + "?page=1", 400, []string{"page 1: the session has 1 page(s)"}, nil},
		{"GET", "/sessions/" + webSession + "?page=two", 400, []string{"page &#34;two&#34;"}, nil},
		{"GET", "/sessions/nosuch", 404, []string{"404", "no session &#34;nosuch&#34;"}, nil},
		{"GET", "/sessions/" + sampleClaude, 200, []string{"Compaction"}, nil},
		{"GET", webCompaction, 200, []string{"what it lost", "auth/session.go", "dropped-label", "Native summary", "Ledger handoff", "What the agent used next",
			"2 / 3 kept"}, nil},
		{"GET", "/compactions/999", 404, []string{"no compaction 999"}, nil},
		{"GET", "/compactions/abc", 400, []string{"&#34;abc&#34; is not an id"}, nil},
		{"GET", "/handoffs/999", 404, []string{"no handoff 999"}, nil},
		{"GET", message, 302, []string{"/sessions/" + webSession + "?page=0#m"}, nil},
		{"GET", "/messages/999999", 404, []string{"no message 999999"}, nil},
		{"GET", "/search", 200, []string{"query language"}, nil},
		{"GET", "/search?q=session.go", 200, []string{"<mark>", "/messages/"}, nil},
		{"GET", "/search?q=%22empty+password%22&kind=compaction", 200, []string{"/compactions/", "<mark>empty"}, nil},
		{"GET", "/search?q=zzzznothing", 200, []string{"No matches."}, nil},
		{"GET", "/search?q=login&kind=commit", 400, []string{"kind &#34;commit&#34;: want message, handoff, compaction or note"}, nil},
		{"GET", "/search?q=login&role=robot", 400, []string{"role &#34;robot&#34;"}, nil},
		{"GET", "/search?q=login&limit=0", 400, []string{"limit must be at least 1, not 0"}, nil},
		{"GET", "/search?q=login&since=soon", 400, []string{"since &#34;soon&#34;"}, nil},
		{"GET", "/search?q=login&session=nosuch", 404, []string{"no session &#34;nosuch&#34;"}, nil},
		{"GET", "/audit", 200, []string{"3</b> compactions", "pre-marker", "loss report"}, nil},
		{"GET", "/audit?session=5c41", 200, []string{"1</b> compactions", "145,000"}, nil},
		{"GET", "/audit?page=9", 400, []string{"page 9: 3 compactions make 1 page(s)"}, nil},
		{"GET", "/audit?since=whenever", 400, []string{"since &#34;whenever&#34;"}, nil},
		{"GET", "/audit?session=nosuch", 404, []string{"no session"}, nil},
		{"GET", "/static/style.css", 200, []string{".compaction-marker"}, nil},
		{"GET", "/static/app.js", 200, []string{"data-fold"}, nil},
		{"GET", "/nowhere", 404, []string{"no page at /nowhere"}, nil},
		{"POST", "/sessions", 405, nil, nil},
	} {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			r := get(t, s, tc.method, tc.target)
			if r.code != tc.code {
				t.Fatalf("status %d, want %d\n%s", r.code, tc.code, excerpt(r.body))
			}
			text := r.body + r.location
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("lacks %q\n%s", w, excerpt(text))
				}
			}
			for _, w := range tc.not {
				if strings.Contains(text, w) {
					t.Errorf("has %q", w)
				}
			}
			if r.code != 302 && tc.method == "GET" && r.header.Get("Content-Security-Policy") == "" {
				t.Error("no Content-Security-Policy")
			}
		})
	}
}

// TestPlotMarkers: the session plot has one marker per compaction and per
// handoff, and one line of points.
func TestPlotMarkers(t *testing.T) {
	path := buildLedger(t, testdata("sample"), testdata("web"))
	s := newTestServer(t, path, Options{})
	for _, tc := range []struct {
		session     string
		compactions int
	}{{webSession, 1}, {sampleClaude, 1}} {
		r := get(t, s, "GET", "/sessions/"+tc.session)
		if got := strings.Count(r.body, `class="marker compaction-marker"`); got != tc.compactions {
			t.Errorf("%s: %d compaction markers, want %d", tc.session, got, tc.compactions)
		}
		if got := strings.Count(r.body, `<polyline class="series"`); got != 1 {
			t.Errorf("%s: %d series, want 1", tc.session, got)
		}
		for _, class := range []string{`class="window"`, `class="th80"`, `class="th95"`} {
			if !strings.Contains(r.body, class) {
				t.Errorf("%s: no %s line", tc.session, class)
			}
		}
	}
}

// TestTranscriptTextIsEscaped: the web fixture carries <script> and
// onerror payloads in a request, a tool's output and the compaction
// summary; every page shows them as text.
func TestTranscriptTextIsEscaped(t *testing.T) {
	path := buildLedger(t, testdata("web"))
	s := newTestServer(t, path, Options{})
	r := get(t, s, "GET", "/audit")
	id := regexp.MustCompile(`/compactions/(\d+)`).FindStringSubmatch(r.body)
	if id == nil {
		t.Fatal("no compaction on the audit page")
	}
	for _, target := range []string{"/sessions/" + webSession, "/compactions/" + id[1], "/search?q=pwned",
		"/search?q=" + "%3Cscript%3E"} {
		r := get(t, s, "GET", target)
		if r.code != 200 {
			t.Fatalf("%s: %d", target, r.code)
		}
		low := strings.ToLower(r.body)
		if strings.Contains(low, "<script>window") || strings.Contains(low, "<img src=x") {
			t.Errorf("%s: a payload is markup:\n%s", target, excerpt(r.body))
		}
		if strings.Count(low, "<script") != 1 { // the page's own app.js
			t.Errorf("%s: %d script elements, want app.js alone", target, strings.Count(low, "<script"))
		}
	}
	r = get(t, s, "GET", "/sessions/"+webSession)
	if !strings.Contains(r.body, "&lt;script&gt;window.__pwned = &#39;user text&#39;&lt;/script&gt;") {
		t.Errorf("the request's payload is not shown as text")
	}
}

// TestHostCheck: only loopback names are served unless AllowRemote.
func TestHostCheck(t *testing.T) {
	path := buildLedger(t, testdata("sample"))
	for _, tc := range []struct {
		host   string
		remote bool
		code   int
	}{
		{"127.0.0.1:7788", false, 200}, {"localhost:7788", false, 200}, {"[::1]:7788", false, 200},
		{"evil.example:7788", false, 403}, {"192.168.1.9:7788", false, 403}, {"evil.example:7788", true, 200},
	} {
		s := newTestServer(t, path, Options{AllowRemote: tc.remote})
		req := httptest.NewRequest("GET", "/", nil)
		req.Host = tc.host
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != tc.code {
			t.Errorf("Host %s (allow remote %v): %d, want %d", tc.host, tc.remote, rec.Code, tc.code)
		}
	}
}

// TestServeNeverWrites: serving every page leaves the database file as it
// was.
func TestServeNeverWrites(t *testing.T) {
	path := buildLedger(t, testdata("sample"), testdata("web"))
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := newTestServer(t, path, Options{})
	for _, target := range []string{"/", "/sessions/" + webSession, "/audit", "/search?q=login", "/compactions/1"} {
		get(t, s, "GET", target)
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Error("the database file changed while serving")
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func excerpt(s string) string {
	if len(s) > 1500 {
		return s[:1500] + "…"
	}
	return s
}

// TestAgentRecordsPages: a Claude Code 2.1.328 session (testdata/agents)
// shows the cost its agent reports on the sessions list and its own page,
// and each partial compaction's page says how many messages the agent
// kept verbatim besides its summary.
func TestAgentRecordsPages(t *testing.T) {
	t.Parallel()
	path := buildLedger(t, testdata("agents", "claude-2.1.328", "session.jsonl"))
	s := newTestServer(t, path, Options{})
	st, err := store.Open(context.Background(), path, store.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	list, err := st.Sessions(context.Background(), store.SessionFilter{})
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions: %v %v", list, err)
	}
	id := list[0].ID
	cs, err := st.Compactions(context.Background(), store.CompactionFilter{SessionID: id})
	if err != nil || len(cs) != 2 {
		t.Fatalf("compactions: %v %v", cs, err)
	}
	for target, want := range map[string][]string{
		"/sessions":                      {"Cost", "$0.23 &#43;8/-0"}, // html/template writes + as &#43;
		"/sessions/" + id:                {"<dt>Cost</dt>", "$0.23 at list prices", "8 lines added, 0 removed"},
		"/compactions/" + itoa(cs[0].ID): {"Kept verbatim", "its last 4 messages"},
		"/audit?session=" + id[:8]:       {"Kept"},
	} {
		r := get(t, s, "GET", target)
		if r.code != 200 {
			t.Errorf("%s: status %d", target, r.code)
			continue
		}
		for _, w := range want {
			if !strings.Contains(r.body, w) {
				t.Errorf("%s lacks %q\n%s", target, w, excerpt(r.body))
			}
		}
	}
}

// TestPluginAgentsPages: sessions of Pi, OpenCode and Kilo CLI (real ones,
// from testdata/agents) are listed and filtered under their agent, and
// each one's page shows its messages and its compaction with the summary
// the agent wrote.
func TestPluginAgentsPages(t *testing.T) {
	t.Parallel()
	path := buildLedger(t,
		testdata("agents", "pi-0.73.1", "2026-11-26T07-29-37-590Z_01a216c2-8921-7397-bbc1-38fa2acd5419.jsonl"),
		testdata("agents", "opencode-1.18.33", "opencode.db"),
		testdata("agents", "kilo-7.7.7", "kilo.db"))
	s := newTestServer(t, path, Options{})
	st, err := store.Open(context.Background(), path, store.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	list, err := st.Sessions(context.Background(), store.SessionFilter{})
	if err != nil || len(list) != 3 {
		t.Fatalf("sessions: %v %v", list, err)
	}
	for _, sess := range list {
		cs, err := st.Compactions(context.Background(), store.CompactionFilter{SessionID: sess.ID})
		if err != nil || len(cs) != 1 || cs[0].Summary == "" {
			t.Fatalf("%s: compactions %+v %v", sess.Source, cs, err)
		}
		for target, want := range map[string][]string{
			"/sessions?agent=" + sess.Source: {`<option value="` + sess.Source + `" selected>`, sess.ID[:8]},
			"/sessions/" + sess.ID:           {"<dt>Agent</dt><dd>" + sess.Source, "compaction-marker", "notes-1.txt"},
			"/compactions/" + itoa(cs[0].ID): {"Native summary", `<pre class="summary">`},
		} {
			r := get(t, s, "GET", target)
			if r.code != 200 {
				t.Errorf("%s: status %d", target, r.code)
				continue
			}
			for _, w := range want {
				if !strings.Contains(r.body, w) {
					t.Errorf("%s lacks %q\n%s", target, w, excerpt(r.body))
				}
			}
		}
	}
}

// TestClearsApartFromCompactions: a handoff `ledger compact` wrote is a
// clear, shown apart from the agent's compactions in the sessions list,
// the session page and its plot (it was one more compaction everywhere).
func TestClearsApartFromCompactions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := buildLedger(t, testdata("sample"))
	e := openEngine(t, path, engine.Write)
	if _, err := e.Compact(ctx, sampleClaude, engine.HandoffRequest{Trigger: "manual", Source: "cli",
		Out: filepath.Join(t.TempDir(), "handoff.md")}); err != nil {
		t.Fatal(err)
	}
	e.Close()
	s := newTestServer(t, path, Options{})
	r := get(t, s, "GET", "/sessions/"+sampleClaude)
	if got := strings.Count(r.body, `class="marker compaction-marker"`); got != 1 {
		t.Errorf("%d compaction markers, want the agent's 1", got)
	}
	if got := strings.Count(r.body, `class="marker compaction-marker clear-marker"`); got != 1 {
		t.Errorf("%d clear markers, want 1", got)
	}
	if !strings.Contains(r.body, "1 compactions · 1 clears (ledger compact)") || !strings.Contains(r.body, ">Clear ") {
		t.Errorf("the session page does not tell the clear from the compaction:\n%s", excerpt(r.body))
	}
	r = get(t, s, "GET", "/")
	if !strings.Contains(r.body, "<th class=\"num\" title=\"handoffs ledger compact wrote, for a /clear\">Clears</th>") {
		t.Errorf("the sessions list has no Clears column")
	}
}

// TestUnknownsShownAsUnknown: a session whose transcript has no time at
// all, and a compaction that stated no tokens, render (as "-"), beside
// what is known: the cost, and the times of the other session.
func TestUnknownsShownAsUnknown(t *testing.T) {
	t.Parallel()
	const noTimes, noTokens = "3f0a9b17-0c2d-4e5f-8a6b-7c8d9e0f1a2b", "8b2c4d6e-1f3a-4b5c-9d7e-0a1b2c3d4e5f"
	s := newTestServer(t, buildLedger(t, testdata("json", "input")), Options{})
	for target, want := range map[string][]string{
		"/sessions/" + noTimes:  {"<dt>Active</dt><dd>- → -</dd>", "$0.04 at list prices · 12 lines added, 3 removed"},
		"/sessions/" + noTokens: {"<dt>Active</dt><dd>2026-03-03 10:00 UTC → 2026-03-03 10:02 UTC</dd>"},
		"/sessions":             {"<code>" + engine.ShortID(noTimes) + "</code>"},
		"/audit": {`<td>manual</td>
<td class="num">-</td><td class="num">-</td><td>transcript</td>
<td>-</td>`},
		"/search?q=certificates": {"<code>" + engine.ShortID(noTimes) + "</code> · message · user · -</a>"},
	} {
		r := get(t, s, "GET", target)
		if r.code != 200 {
			t.Errorf("%s: status %d\n%s", target, r.code, r.body)
			continue
		}
		for _, w := range want {
			if !strings.Contains(r.body, w) {
				t.Errorf("%s does not show %q", target, w)
			}
		}
	}
}
