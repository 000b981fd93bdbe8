package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentledger/ledger/store/storetest"
	"github.com/dustin/go-humanize"
)

// serveLedger runs `ledger serve` on db on a free loopback port and
// returns its address; it is stopped when the test ends.
func serveLedger(t *testing.T, home, db string) string {
	t.Helper()
	cmd := exec.Command(ledgerBin, "--db", db, "serve", "--addr", "127.0.0.1:0")
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	stdout, _ := cmd.StdoutPipe()
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("serve: no first line: %v (stderr %s)", err, stderr.String())
	}
	base := regexp.MustCompile(`http://[^/]+/`).FindString(line)
	if base == "" {
		t.Fatalf("serve: no address in %q", line)
	}
	return base
}

func getPage(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	return string(body)
}

// TestMessagesInTimeOrder: a Claude Code session of the corpus whose
// compaction summarizer's subagent file is read first (its own ingest,
// then the session's) is shown in time order, with the same message
// numbers in `ledger export --format md` and on every page of the web
// view: message n is the same message (its subagent mark, its minute) on
// both, the numbers run 0, 1, 2... and time never goes backwards.
func TestMessagesInTimeOrder(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	layOutCorpus(t, home)
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	const id = "258c7280-ae70-4798-800f-63464d01a85d"
	agents, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", id, "subagents"))
	if len(agents) != 1 {
		t.Fatalf("the corpus's compaction subagent of %s: %v", id, agents)
	}
	// The ingests are the starting point (what is checked is what export
	// and the web view show): the built binary runs them.
	for _, path := range []string{agents[0], filepath.Join(home, ".claude", "projects")} {
		if r := runBin(t, home, "", "--db", db, "ingest", path); r.code != 0 {
			t.Fatalf("ingest %s: %d %s", path, r.code, r.stderr)
		}
	}
	r := runCmd(t, home, "", "--db", db, "export", id[:8], "--format", "md")
	if r.code != 0 {
		t.Fatalf("export: %d %s", r.code, r.stderr)
	}
	type shown struct {
		side bool
		at   string // to the minute, as the web view shows it
	}
	var exported []shown
	heading := regexp.MustCompile(`(?m)^## #(\d+) · ([^·\n]*) · (.*)$`)
	var last string
	for i, m := range heading.FindAllStringSubmatch(r.stdout, -1) {
		if n, _ := strconv.Atoi(m[1]); n != i {
			t.Fatalf("export: message #%s is the %dth", m[1], i)
		}
		at := m[3]
		if at != "time unknown" {
			if at < last {
				t.Errorf("export: message #%d at %s after one at %s", i, at, last)
			}
			last = at
		}
		exported = append(exported, shown{side: strings.Contains(m[2], "subagent"), at: strings.Replace(at[:min(len(at), 16)], "T", " ", 1)})
	}
	sides := 0
	for _, s := range exported {
		if s.side {
			sides++
		}
	}
	if len(exported) < 400 || sides == 0 || exported[0].side || exported[len(exported)-1].side {
		t.Fatalf("export: %d messages, %d of the subagent, first %+v: want the session's start first, the summarizer's in it", len(exported), sides, exported[0])
	}

	base := serveLedger(t, home, db)
	item := regexp.MustCompile(`<li id="m(\d+)" class="msg ([^"]*)">\s*<div class="head">.*? · (\d{4}-\d\d-\d\d \d\d:\d\d) UTC`)
	n := 0
	for page := 0; n < len(exported); page++ {
		body := getPage(t, base+"sessions/"+id+"?page="+strconv.Itoa(page))
		items := item.FindAllStringSubmatch(body, -1)
		if len(items) == 0 {
			t.Fatalf("web page %d: no messages (%d of %d seen)", page, n, len(exported))
		}
		for _, m := range items {
			seq, _ := strconv.Atoi(m[1])
			web := shown{side: strings.Contains(m[2], "sidechain"), at: m[3]}
			if seq != n || web != exported[n] {
				t.Fatalf("web page %d shows #%d %+v where export shows #%d %+v", page, seq, web, n, exported[n])
			}
			n++
		}
	}
}

// TestCodexContextPlot: a Codex rollout of the corpus, ingested as a user
// would, gets a context plot in the web view: its series has a point per
// model response, and the context the messages show is the rollout's own
// token_count figures (input tokens, cached ones included), in order, each
// response once (Codex repeats a response's token_count after the tool's
// output or the next request).
func TestCodexContextPlot(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	layOutCorpus(t, home)
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	// The ingest, as a user's, is the built binary's: the plot is what the
	// web view makes of what it stored.
	if r := runBin(t, home, "", "--db", db, "ingest"); r.code != 0 {
		t.Fatalf("ingest: %d %s", r.code, r.stderr)
	}
	const id = "019c8a4c-ed82-79a1-aa28-7738fc5ab61a"
	rollouts, _ := filepath.Glob(filepath.Join(corpusDir(t), "codex", "*"+id+".jsonl"))
	if len(rollouts) != 1 {
		t.Fatalf("corpus rollout %s: %v", id, rollouts)
	}
	data, err := os.ReadFile(rollouts[0])
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, line := range strings.Split(string(data), "\n") {
		var l struct {
			Type    string
			Payload struct {
				Type string
				Info *struct {
					LastTokenUsage struct {
						InputTokens int64 `json:"input_tokens"`
					} `json:"last_token_usage"`
				}
			}
		}
		if json.Unmarshal([]byte(line), &l) != nil || l.Type != "event_msg" || l.Payload.Type != "token_count" || l.Payload.Info == nil {
			continue
		}
		figure := humanize.Comma(l.Payload.Info.LastTokenUsage.InputTokens)
		if n := l.Payload.Info.LastTokenUsage.InputTokens; n > 0 && (len(want) == 0 || want[len(want)-1] != figure) {
			want = append(want, figure)
		}
	}
	if len(want) < 50 {
		t.Fatalf("the rollout has %d token_count figures", len(want))
	}

	base := serveLedger(t, home, db)
	first := getPage(t, base+"sessions/"+id)
	series := regexp.MustCompile(`<polyline class="series" points="([^"]*)"`).FindStringSubmatch(first)
	if series == nil || len(strings.Fields(series[1])) < 20 {
		t.Fatalf("no context series in the plot: %v", series)
	}
	var got []string
	figure := regexp.MustCompile(` · context ([\d,]+)`)
	for page := 0; ; page++ {
		body := first
		if page > 0 {
			resp, err := http.Get(base + "sessions/" + id + "?page=" + strconv.Itoa(page))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				break
			}
			body = string(b)
		}
		for _, m := range figure.FindAllStringSubmatch(body, -1) {
			got = append(got, m[1])
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("context shown per message:\n%v\nthe rollout's token_count figures:\n%v", got, want)
	}
}

// TestLossAfterSummarizer: with the compaction summarizer's messages in
// time order (between the cut and the summary), the corpus compaction's
// loss report still measures the work after the summary: what the agent
// used next, and what the summary lacked of it.
func TestLossAfterSummarizer(t *testing.T) {
	t.Parallel()
	home, db := corpusLedger(t)
	r := runCmd(t, home, "", "--db", db, "audit", "--loss", "258c7280", "--json")
	var reports []struct {
		UsedAfter *struct {
			Calls, Total, Summary int
		} `json:"used_after"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &reports); err != nil || r.code != 0 {
		t.Fatalf("audit --loss --json: %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if len(reports) != 1 || reports[0].UsedAfter == nil || reports[0].UsedAfter.Calls == 0 || reports[0].UsedAfter.Summary >= reports[0].UsedAfter.Total {
		t.Errorf("used after the compaction: %+v (want calls, and items the summary lacked)", reports)
	}
}
