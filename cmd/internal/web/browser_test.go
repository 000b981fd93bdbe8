package web

import (
	"context"
	"flag"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

var update = flag.Bool("update", false, "rewrite the README's screenshots under docs/")

// chromium finds a Chromium to drive. Without one the browser test skips,
// saying why, unless LEDGER_REQUIRE_CHROMIUM is set (CI), where it fails.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("LEDGER_REQUIRE_CHROMIUM") != "" {
		t.Fatal("no Chromium on the PATH (chromium, chromium-browser, google-chrome) and LEDGER_REQUIRE_CHROMIUM is set")
	}
	t.Skip("no Chromium on the PATH: install it (Debian: apt-get install chromium) to run the browser test; CI sets LEDGER_REQUIRE_CHROMIUM=1 and installs it")
	return ""
}

// corpus is the real transcript corpus: $LEDGER_CORPUS, else
// ../shared/corpus beside the repository; absent, the test skips unless
// LEDGER_REQUIRE_CORPUS is set.
func corpus(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("LEDGER_CORPUS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "..", "shared", "corpus")
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if os.Getenv("LEDGER_REQUIRE_CORPUS") != "" {
			t.Fatalf("corpus not found at %s (LEDGER_REQUIRE_CORPUS is set)", dir)
		}
		t.Skipf("corpus not found at %s: set LEDGER_CORPUS to run this test", dir)
	}
	return dir
}

// TestBrowser opens every page in headless Chromium on a ledger of the
// real corpus and the web fixture, and checks what a user sees: one plot
// marker per compaction, the loss report's dropped file, the transcript's
// <script> payloads shown and never run, links and the back button. It
// saves a screenshot of each page in a temporary folder (kept with -v, named
// in the log); -update writes the README's two under docs/.
func TestBrowser(t *testing.T) {
	exe := chromium(t)
	path := buildLedger(t, corpus(t), testdata("web"))
	srv := httptest.NewServer(newTestServer(t, path, Options{}))
	defer srv.Close()

	shots := t.TempDir()
	if os.Getenv("LEDGER_KEEP_SCREENSHOTS") != "" {
		shots = os.Getenv("LEDGER_KEEP_SCREENSHOTS")
	}
	browserHome := t.TempDir()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.UserDataDir(t.TempDir()),
		// A home of its own: Chromium writes crash-report settings and a
		// dconf cache under HOME, never the developer's.
		chromedp.Env("HOME="+browserHome, "XDG_CONFIG_HOME="+filepath.Join(browserHome, ".config"), "XDG_CACHE_HOME="+filepath.Join(browserHome, ".cache")),
		chromedp.WindowSize(1280, 1000),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTime := context.WithTimeout(ctx, 60*time.Second)
	defer cancelTime()

	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	value := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	shot := func(name string, readme string) {
		t.Helper()
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		value("screenshot "+name, err)
		if err := os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
		if *update && readme != "" {
			out := filepath.Join("..", "..", "..", "docs", readme)
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(out, png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	count := func(what, selector string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+jsString(selector)+`).length`))
		value(what, err)
		return n
	}
	notRun := func(page string) {
		t.Helper()
		pwned, err := chromedp.Run(ctx, chromedp.Evaluate[string](`typeof window.__pwned`))
		value("check "+page, err)
		if pwned != "undefined" {
			t.Errorf("%s: a transcript's script ran (window.__pwned is %s)", page, pwned)
		}
	}

	// Sessions: every session of the corpus and the fixture.
	run("sessions", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("table.sessions")))
	if n := count("sessions", "table.sessions tbody tr"); n != 12 {
		t.Errorf("sessions page: %d rows, want 12 (11 corpus sessions and the fixture)", n)
	}
	shot("sessions", "")

	// Session pages: one marker per compaction, as many as the page lists.
	for _, id := range []string{"258c7280-ae70-4798-800f-63464d01a85d", "ae4a77f8-aedd-4bc1-888f-c94edc91af04",
		"019c8a59-e9dd-71f0-9ae3-4079fe9726a9", "fa812bfe-b295-4cca-9c2f-fdf01028cb46", webSession} {
		run("session "+id, chromedp.Navigate(srv.URL+"/sessions/"+id), chromedp.WaitVisible(chromedp.CSS("svg.plot")))
		markers, listed := count("markers", "svg.plot .compaction-marker"), count("list", "ul.compactions li")
		want := 1
		if id == "fa812bfe-b295-4cca-9c2f-fdf01028cb46" {
			want = 0
		}
		if markers != want || listed != want {
			t.Errorf("session %s: %d markers, %d compactions listed; want %d", id[:8], markers, listed, want)
		}
		notRun("session " + id[:8])
	}
	run("session 258c7280", chromedp.Navigate(srv.URL+"/sessions/258c7280-ae70-4798-800f-63464d01a85d"), chromedp.WaitVisible(chromedp.CSS("svg.plot")))
	shot("session", "web-session.png")

	// The fixture's payloads are text on the page and never run.
	run("fixture", chromedp.Navigate(srv.URL+"/sessions/"+webSession), chromedp.WaitVisible(chromedp.CSS(".conversation")))
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".conversation")))
	value("fixture text", err)
	if !strings.Contains(text, "<script>window.__pwned = 'user text'</script>") {
		t.Errorf("the request's <script> is not shown as text")
	}
	run("unfold", chromedp.Click(chromedp.CSS(`button[data-fold="open"]`)))
	notRun("the fixture unfolded")

	// Clicking the compaction marker opens its loss report; back returns.
	run("marker", chromedp.Click(chromedp.CSS("svg.plot .compaction-marker circle")), chromedp.WaitVisible(chromedp.CSS("table.loss")))
	dropped, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("tr.item.dropped")).map(r => r.textContent.trim())`))
	value("dropped items", err)
	if !containsAny(dropped, "auth/session.go") {
		t.Errorf("the fixture's loss report does not list auth/session.go as dropped: %q", dropped)
	}
	notRun("the fixture's loss report")
	// The back button, as a user presses it. The page may come back from
	// the back-forward cache, which fires no load event and leaves
	// chromedp's node queries on the old document: ask the page itself.
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`history.back(), true`))
	value("back", err)
	var loc string
	for range 100 {
		loc, err = chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname + (document.querySelector("svg.plot") ? " plot" : "")`))
		value("back", err)
		if loc == "/sessions/"+webSession+" plot" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if loc != "/sessions/"+webSession+" plot" {
		t.Errorf("back from the loss report: at %q, want the session page with its plot", loc)
	}

	// The corpus compaction's loss report, for the README.
	run("corpus loss report", chromedp.Navigate(srv.URL+"/sessions/258c7280-ae70-4798-800f-63464d01a85d"),
		chromedp.WaitVisible(chromedp.CSS("svg.plot")), chromedp.Click(chromedp.CSS("ul.compactions a")), chromedp.WaitVisible(chromedp.CSS("table.loss")))
	if n := count("corpus dropped", "tr.item.dropped"); n != 1 {
		t.Errorf("spotter-258c7280's loss report: %d dropped items, want 1", n)
	}
	// What the agent used after the compaction, and what the summary lacked of it.
	if n := count("corpus used, the summary lacked", "tr.used.missing"); n == 0 {
		t.Error("spotter-258c7280's loss report shows nothing the agent used next that the summary lacked")
	}
	shot("loss-report", "web-loss-report.png")

	// Search: marked snippets whose links lead to the message.
	run("search", chromedp.Navigate(srv.URL+"/search?q=project_review_live.ex"), chromedp.WaitVisible(chromedp.CSS("ol.hits")))
	if n := count("marks", "ol.hits mark"); n == 0 {
		t.Error("search: no highlighted words")
	}
	shot("search", "")
	run("search hit", chromedp.Click(chromedp.CSS(`ol.hits a[href^="/messages/"]`)), chromedp.WaitVisible(chromedp.CSS(".conversation")))
	loc, err = chromedp.Run(ctx, chromedp.Location())
	value("location", err)
	if !strings.Contains(loc, "/sessions/") || !strings.Contains(loc, "#m") {
		t.Errorf("a message hit led to %s, want its session page at its anchor", loc)
	}
	run("search payload", chromedp.Navigate(srv.URL+"/search?q=pwned"), chromedp.WaitVisible(chromedp.CSS("ol.hits")))
	notRun("search for the payload")

	// Audit: one point per compaction with pre-compaction tokens.
	run("audit", chromedp.Navigate(srv.URL+"/audit"), chromedp.WaitVisible(chromedp.CSS("svg.plot")))
	if n := count("audit points", "svg.plot .pre-marker"); n != 4 {
		t.Errorf("audit chart: %d points, want 4 (3 corpus compactions and the fixture's)", n)
	}
	shot("audit", "")

	// Errors are pages too.
	run("404", chromedp.Navigate(srv.URL+"/sessions/nosuch"))
	text, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS("h1")))
	value("404 heading", err)
	if !strings.HasPrefix(text, "404") {
		t.Errorf("unknown session: h1 %q, want 404", text)
	}
	t.Logf("screenshots in %s", shots)
}

func containsAny(xs []string, sub string) bool {
	for _, x := range xs {
		if strings.Contains(x, sub) {
			return true
		}
	}
	return false
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
