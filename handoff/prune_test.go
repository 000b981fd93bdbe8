package handoff

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agentledger/ledger/compact"
)

// longDoc is the handoff of a very long session: thousands of requests and
// hundreds of every other list, items of every length from a word to a
// paragraph.
func longDoc(seed uint64, requests, others int) Doc {
	rng := rand.New(rand.NewPCG(seed, 7))
	words := strings.Fields("fix the flaky test in pkg/auth/session_store.go then rerun go test ./... — «ünïcødé» 🚀 " +
		"and keep the 結帳 flow working; the deadline is Friday")
	text := func() string {
		n := 1 + rng.IntN(60)
		if rng.IntN(10) == 0 {
			n = 100 + rng.IntN(400)
		}
		w := make([]string, n)
		for i := range w {
			w[i] = words[rng.IntN(len(words))]
		}
		return strings.Join(w, " ")
	}
	d := bigDoc()
	d.Requests = []string{d.Task}
	for range requests {
		d.Requests = append(d.Requests, text())
	}
	d.FilesModified, d.Decisions, d.TestsRun, d.Errors, d.Blockers, d.NextSteps = nil, nil, nil, nil, nil, nil
	for i := range others {
		d.FilesModified = append(d.FilesModified, fmt.Sprintf("/home/dev/src/shop/src/%s-%d.go", strings.Join(strings.Fields(text()), "/"), i))
		d.Decisions = append(d.Decisions, text())
		d.TestsRun = append(d.TestsRun, TestRun{Command: "go test -run " + text(), Status: TestFailed})
		d.Errors = append(d.Errors, text())
		d.Blockers = append(d.Blockers, text())
		d.NextSteps = append(d.NextSteps, text())
		d.Tasks = append(d.Tasks, Task{ID: fmt.Sprint(i), Subject: text(), Status: TaskCompleted})
	}
	return d
}

// TestRenderPruningKeepsTheMarkdown checks that skipping the layouts that
// show more of a list than fits (listCap) changes nothing: the Markdown is
// the one every layout written whole gives, for long and short lists,
// budgets from the least to generous, and every kind of counter.
func TestRenderPruningKeepsTheMarkdown(t *testing.T) {
	// cl100k through the memo the handoff is rendered with: the counter
	// without its memo counts the same, at many times the cost (40 s of
	// CPU under -race for both), and so proves nothing more here.
	cs := map[string]func(string) int{"cl100k memo": compact.DefaultMemo()}
	for name, c := range counters {
		cs[name] = c
	}
	// Lists from under pruneFrom to several times what the largest budget
	// holds (about 140 items of 200 runes at 5000 tokens): longer ones
	// take the same trials, each written at more cost.
	docs := map[string]Doc{"big": bigDoc(), "long": longDoc(1, 400, 200), "longer": longDoc(2, 800, 40), "requests only": longDoc(3, 600, 0)}
	// The least budget, and the two where lists hold tens to a hundred
	// items of their cap: an unsound cap (one item short, a cap measured
	// at the wrong item length, a >= for a >) shows at 2000 and 5000 only;
	// budgets between the least and 2000 caught none of those, each
	// written whole at the cost of one of these.
	for dn, d := range docs {
		for cn, count := range cs {
			for _, budget := range []int{MinBudget, 2000, 5000} {
				pruned := newRenderer(d).fit(budget, count, true)
				whole := newRenderer(d).fit(budget, count, false)
				if pruned != whole {
					t.Errorf("%s, %s, budget %d: the pruned trials give another Markdown (%d against %d bytes)",
						dn, cn, budget, len(pruned), len(whole))
				}
			}
		}
	}
}

// TestResumeOfALongHandoff checks the resume of a long
// handoff at several budgets: within budget, the latest requests shown.
func TestResumeOfALongHandoff(t *testing.T) {
	d := longDoc(4, 5000, 3)
	count := compact.DefaultMemo()
	for _, budget := range []int{MinBudget, 800, 2000, 6000} {
		md := Resume(ResumeInput{Session: d.Session, Project: d.Project, Handoff: d, Compactions: 2}, budget, count)
		if n := count(md); n > budget {
			t.Errorf("budget %d: %d tokens", budget, n)
		}
		if budget >= 2000 && !strings.Contains(md, fmt.Sprintf("%d. ", len(d.Requests))) {
			t.Errorf("budget %d: the latest request (%d) is not shown", budget, len(d.Requests))
		}
	}
}
