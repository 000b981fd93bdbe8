package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentledger/ledger/store/storetest"
)

type meterOut struct {
	Session       string         `json:"session"`
	Model         string         `json:"model"`
	UsedTokens    int64          `json:"used_tokens"`
	LimitTokens   int64          `json:"limit_tokens"`
	Ratio         float64        `json:"ratio"`
	Exact         bool           `json:"exact"`
	ShouldCompact bool           `json:"should_compact"`
	MustCompact   bool           `json:"must_compact"`
	Categories    map[string]any `json:"categories"`
	Summary       string         `json:"summary"`
}

// TestMeterExactFromUsage: the context in use is input + cache creation +
// cache read of the last API response, whether the meter reads the file or
// the ledger. The figures were computed from the usage fields with python3.
func TestMeterExactFromUsage(t *testing.T) {
	t.Parallel()
	corpus := corpusDir(t)
	sample := sampleDir(t)
	tests := []struct {
		file  string
		id    string
		used  int64
		limit int64
	}{
		{filepath.Join(corpus, "claude", "spotter-258c7280-ae70-4798-800f-63464d01a85d.jsonl"), "258c7280", 77334, 200000},
		{filepath.Join(corpus, "claude", "spotter-ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"), "ae4a77f8", 102168, 200000},
		{filepath.Join(corpus, "claude", "ccviewer-fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"), "fe5e1c67", 21552, 200000},
		{filepath.Join(corpus, "codex", "localpush-rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"), "019c8a59", 162073, 258400},
		{filepath.Join(sample, "claude", "-home-dev-src-payments", "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57.jsonl"), "7c1d9e42", 28500, 200000},
		{filepath.Join(sample, "codex", "2026", "03", "02", "rollout-2026-03-02T14-00-00-0199f3a2-7d4e-7c10-b2a9-5e8f1d3c6a20.jsonl"), "0199f3a2", 33000, 258400},
	}
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	for _, tc := range tests {
		ingestBin(t, home, db, tc.file) // setup: the meter runs in-process below
	}
	for _, tc := range tests {
		for _, target := range []string{tc.file, tc.id} {
			t.Run(filepath.Base(target), func(t *testing.T) {
				r := runCmd(t, home, "", "--db", db, "meter", target, "--json")
				if r.code != 0 {
					t.Fatalf("exit %d: %s", r.code, r.stderr)
				}
				var got meterOut
				decodeJSON(t, r.stdout, &got)
				if !got.Exact || got.UsedTokens != tc.used || got.LimitTokens != tc.limit {
					t.Errorf("meter = used %d of %d exact %v, want exactly %d of %d", got.UsedTokens, got.LimitTokens, got.Exact, tc.used, tc.limit)
				}
				if want := float64(tc.used) / float64(tc.limit); got.Ratio < want-1e-9 || got.Ratio > want+1e-9 {
					t.Errorf("ratio %v, want %v", got.Ratio, want)
				}
				if got.ShouldCompact || got.MustCompact {
					t.Errorf("should/must compact at %.0f%%", 100*got.Ratio)
				}
				// Only what is known: the usage split (the ledger keeps a
				// Codex response's token_count on its message, as a Claude
				// response's usage), and what the transcript shows; never
				// the system prompt, memory or tool definitions, which no
				// transcript holds.
				want := []string{"cached", "new", "output", "transcript", "tool_results"}
				for _, k := range want {
					if _, ok := got.Categories[k]; !ok {
						t.Errorf("categories lack %q: %v", k, got.Categories)
					}
				}
				for _, k := range []string{"prompt", "memory", "tools", "attachments"} {
					if _, ok := got.Categories[k]; ok || strings.Contains(got.Summary, k+" ") {
						t.Errorf("the meter shows %q, which it cannot know: %s", k, got.Summary)
					}
				}
				if !strings.HasPrefix(got.Summary, "ctx ") || strings.Contains(got.Summary, "(estimated)") || !strings.Contains(got.Summary, "tool results ~") {
					t.Errorf("summary %q", got.Summary)
				}
			})
		}
	}
}

func TestMeterWindowAndThresholds(t *testing.T) {
	t.Parallel()
	corpus := corpusDir(t)
	file := filepath.Join(corpus, "claude", "spotter-ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl")
	home := t.TempDir()
	tests := []struct {
		args         []string
		limit        int64
		should, must bool
	}{
		// 102168 of the 1M window: far from compacting.
		{[]string{"--model", "claude-sonnet-4-5", "--beta", "context-1m-2025-08-07"}, 1_000_000, false, false},
		// a GPT-5 model without a stated window gets Codex's 258,400
		{[]string{"--model", "gpt-5-small"}, 258_400, false, false},
	}
	for _, tc := range tests {
		r := runCmd(t, home, "", append([]string{"--db", filepath.Join(home, "l.db"), "meter", file, "--json"}, tc.args...)...)
		var got meterOut
		decodeJSON(t, r.stdout, &got)
		if got.LimitTokens != tc.limit || got.ShouldCompact != tc.should || got.MustCompact != tc.must {
			t.Errorf("%v: limit %d should %v must %v; want %d %v %v", tc.args, got.LimitTokens, got.ShouldCompact, got.MustCompact, tc.limit, tc.should, tc.must)
		}
	}
	r := runCmd(t, home, "", "--db", filepath.Join(home, "l.db"), "meter", file, "--accuracy", "--json")
	var acc struct {
		Messages int     `json:"messages"`
		Median   float64 `json:"median_abs_error"`
		P90      float64 `json:"p90_abs_error"`
		Baseline float64 `json:"baseline_median_abs_error"`
	}
	decodeJSON(t, r.stdout, &acc)
	if acc.Messages < 100 || acc.Median > 0.15 || acc.Baseline < 0.3 || acc.P90 < acc.Median {
		t.Errorf("accuracy %+v: want the estimator within 15%% median and chars/4 far worse", acc)
	}
	// Metering files made no ledger; in one, an unknown session is not found.
	if r := runCmd(t, home, "", "--db", filepath.Join(home, "l.db"), "meter", "no-such-session"); r.code != 1 || !strings.Contains(r.stderr, "no ledger at") {
		t.Errorf("no ledger: exit %d, %q; want 1", r.code, r.stderr)
	}
	runCmd(t, home, "", "--db", filepath.Join(home, "l.db"), "init")
	if r := runCmd(t, home, "", "--db", filepath.Join(home, "l.db"), "meter", "no-such-session"); r.code != 3 {
		t.Errorf("unknown session: exit %d, want 3", r.code)
	}
}
