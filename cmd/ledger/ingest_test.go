package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentledger/ledger/store/storetest"
)

type ingestJSON struct {
	Files        int `json:"files"`
	Sessions     int `json:"sessions"`
	Messages     int `json:"messages"`
	Compactions  int `json:"compactions"`
	SkippedLines int `json:"skipped_lines"`
	Redacted     int `json:"redacted"`
	Skips        []struct {
		File   string `json:"file"`
		Line   int    `json:"line"`
		Reason string `json:"reason"`
	} `json:"skips"`
	Unrecognized []string `json:"unrecognized"`
}

// ingest runs `ledger ingest --json` in-process.
func ingest(t *testing.T, home, db string, paths ...string) ingestJSON {
	t.Helper()
	return ingestWith(t, runCmd, home, db, paths...)
}

// ingestBin runs the real binary's ingest: the end-to-end tests' large
// corpora ingest several times faster outside the race detector's reach.
func ingestBin(t *testing.T, home, db string, paths ...string) ingestJSON {
	t.Helper()
	return ingestWith(t, runBin, home, db, paths...)
}

func ingestWith(t *testing.T, run func(*testing.T, string, string, ...string) result, home, db string, paths ...string) ingestJSON {
	t.Helper()
	r := run(t, home, "", append([]string{"--db", db, "ingest", "--json"}, paths...)...)
	if r.code != 0 {
		t.Fatalf("ingest exit %d: %s", r.code, r.stderr)
	}
	var got ingestJSON
	decodeJSON(t, r.stdout, &got)
	return got
}

func TestIngestCorpus(t *testing.T) {
	t.Parallel()
	corpus := corpusDir(t)
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	got := ingest(t, home, db, corpus)
	// 3406 user/assistant lines and Codex response items (distinct per
	// session+uuid) plus 4 local_command system lines kept as meta messages.
	// 3,410 message lines, and two prompts typed while the agent worked
	// whose queue-operation lines are their only record.
	want := ingestJSON{Files: 13, Sessions: 11, Messages: 3412, Compactions: 3}
	if got.Files != want.Files || got.Sessions != want.Sessions || got.Messages != want.Messages ||
		got.Compactions != want.Compactions || got.SkippedLines != 0 {
		t.Errorf("first ingest = %+v, want %+v and no skipped lines", got, want)
	}
	again := ingest(t, home, db, corpus)
	if again.Files != 0 || again.Messages != 0 || again.Compactions != 0 || again.Sessions != 0 {
		t.Errorf("second ingest added %+v, want nothing", again)
	}

	r := runCmd(t, home, "", "--db", db, "audit", "--json")
	if r.code != 0 {
		t.Fatalf("audit: %s", r.stderr)
	}
	var audit []struct {
		Session       string `json:"session"`
		At            string `json:"at"`
		Trigger       string `json:"trigger"`
		PreTokens     *int64 `json:"pre_tokens"`
		PostTokens    *int64 `json:"post_tokens"`
		Source        string `json:"source"`
		HandoffID     *int64 `json:"handoff_id"`
		SummaryTokens int    `json:"summary_tokens"`
		ToolCalls     int64  `json:"tool_calls"`
	}
	decodeJSON(t, r.stdout, &audit)
	if len(audit) != 3 {
		t.Fatalf("audit has %d compactions, want 3:\n%s", len(audit), r.stdout)
	}
	wantAudit := []struct {
		session, trigger string
		pre              int64
	}{
		{"258c7280-ae70-4798-800f-63464d01a85d", "auto", 167094},
		{"ae4a77f8-aedd-4bc1-888f-c94edc91af04", "manual", 142431},
		{"019c8a59-e9dd-71f0-9ae3-4079fe9726a9", "auto", 0},
	}
	for i, w := range wantAudit {
		a := audit[i]
		if a.Session != w.session || a.Trigger != w.trigger || a.Source != "transcript" {
			t.Errorf("audit[%d] = %+v, want session %s trigger %s source transcript", i, a, w.session, w.trigger)
		}
		if w.pre > 0 && (a.PreTokens == nil || *a.PreTokens != w.pre) {
			t.Errorf("audit[%d] pre_tokens = %v, want %d", i, a.PreTokens, w.pre)
		}
		if a.PostTokens == nil || *a.PostTokens <= 0 || a.ToolCalls <= 0 {
			t.Errorf("audit[%d]: post_tokens %v, tool_calls %d; want both known", i, a.PostTokens, a.ToolCalls)
		}
		if !strings.HasSuffix(a.At, "Z") {
			t.Errorf("audit[%d].at = %q, want RFC 3339 UTC", i, a.At)
		}
	}
	// The Claude summaries are the isCompactSummary lines: thousands of tokens.
	if audit[0].SummaryTokens < 2000 || audit[1].SummaryTokens < 2000 {
		t.Errorf("summary tokens %d, %d; want the linked compaction summaries (>2000)", audit[0].SummaryTokens, audit[1].SummaryTokens)
	}

	r = runCmd(t, home, "", "--db", db, "sessions", "--json")
	var sessions []map[string]any
	decodeJSON(t, r.stdout, &sessions)
	if len(sessions) != 11 {
		t.Fatalf("sessions: %d, want 11", len(sessions))
	}
	keys := []string{"id", "source", "project", "title", "started_at", "last_at", "messages", "compactions"}
	for _, k := range keys {
		if _, ok := sessions[0][k]; !ok {
			t.Errorf("sessions[0] lacks %q", k)
		}
	}
	bySource := map[string]int{}
	for _, s := range sessions {
		bySource[s["source"].(string)]++
	}
	if bySource["claude"] != 9 || bySource["codex"] != 2 {
		t.Errorf("sessions by source = %v, want 9 claude, 2 codex", bySource)
	}
	// newest activity first
	for i := 1; i < len(sessions); i++ {
		if sessions[i-1]["last_at"].(string) < sessions[i]["last_at"].(string) {
			t.Errorf("sessions not newest first at %d", i)
		}
	}
}

// splitLines returns the file's lines, each with its newline.
func splitLines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(b, []byte("\n"))
}

func sessionMessages(t *testing.T, home, db string) map[string]float64 {
	t.Helper()
	r := runCmd(t, home, "", "--db", db, "sessions", "--json")
	var list []map[string]any
	decodeJSON(t, r.stdout, &list)
	m := map[string]float64{}
	for _, s := range list {
		m[s["id"].(string)] = s["messages"].(float64)
	}
	return m
}

func TestIngestAppendAndPartialLine(t *testing.T) {
	t.Parallel()
	src := filepath.Join(sampleDir(t), "claude", "-home-dev-src-payments", "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57.jsonl")
	lines := splitLines(t, src)
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	dst := filepath.Join(home, "projects", "p", "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57.jsonl")
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		t.Fatal(err)
	}
	const session = "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57"
	full := ingest(t, home, filepath.Join(home, "full.db"), src)

	// The first 12 lines, then half of line 13.
	var head []byte
	for _, l := range lines[:12] {
		head = append(head, l...)
	}
	cut := lines[12][:len(lines[12])/2]
	if err := os.WriteFile(dst, append(head, cut...), 0o600); err != nil {
		t.Fatal(err)
	}
	first := ingest(t, home, db, dst)
	if first.SkippedLines != 0 {
		t.Errorf("a cut last line was counted as skipped: %+v", first)
	}
	// Nothing changed: nothing read.
	if again := ingest(t, home, db, dst); again.Files != 0 || again.Messages != 0 {
		t.Errorf("unchanged file re-read: %+v", again)
	}
	// Complete the cut line and append the rest.
	f, err := os.OpenFile(dst, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(lines[12][len(lines[12])/2:])
	for _, l := range lines[13:] {
		f.Write(l)
	}
	f.Close()
	second := ingest(t, home, db, dst)
	if first.Messages+second.Messages != full.Messages || second.Messages == 0 {
		t.Errorf("messages %d + %d, want %d in all", first.Messages, second.Messages, full.Messages)
	}
	if first.Compactions+second.Compactions != full.Compactions {
		t.Errorf("compactions %d + %d, want %d", first.Compactions, second.Compactions, full.Compactions)
	}
	if got := sessionMessages(t, home, db)[session]; got != float64(full.Messages) {
		t.Errorf("session holds %v messages, want %d", got, full.Messages)
	}

	// A rewrite (the file shrinks and changes) is read again from the start,
	// adding nothing it already has.
	if err := os.WriteFile(dst, head, 0o600); err != nil {
		t.Fatal(err)
	}
	rewritten := ingest(t, home, db, dst)
	if rewritten.Files != 1 || rewritten.Messages != 0 {
		t.Errorf("rewritten file: %+v, want 1 file read and 0 messages added", rewritten)
	}
}

func TestIngestBadInput(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	dir := filepath.Join(home, "in")
	os.MkdirAll(dir, 0o700)
	src := splitLines(t, filepath.Join(sampleDir(t), "claude", "-home-dev-src-payments", "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57.jsonl"))
	var b []byte
	for i, l := range src {
		b = append(b, l...)
		if i == 5 {
			b = append(b, "{not json\n"...)
			b = append(b, "[1,2,3]\n"...)
		}
	}
	os.WriteFile(filepath.Join(dir, "s.jsonl"), b, 0o600)
	os.WriteFile(filepath.Join(dir, "notes.jsonl"), []byte("{\"hello\":\"world\"}\n"), 0o600)

	r := runCmd(t, home, "", "--db", db, "ingest", "--json", dir)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var got ingestJSON
	decodeJSON(t, r.stdout, &got)
	if got.SkippedLines != 2 || len(got.Skips) != 2 || got.Skips[0].Line != 7 || got.Skips[1].Line != 8 {
		t.Errorf("skips = %d %+v, want lines 7 and 8", got.SkippedLines, got.Skips)
	}
	if len(got.Unrecognized) != 1 || !strings.HasSuffix(got.Unrecognized[0], "notes.jsonl") {
		t.Errorf("unrecognized = %v, want notes.jsonl", got.Unrecognized)
	}
	if !strings.Contains(r.stderr, "notes.jsonl: not a transcript of an agent ledger reads") {
		t.Errorf("stderr does not report the unrecognized file: %q", r.stderr)
	}

	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"missing path", []string{"ingest", filepath.Join(home, "nope")}, 1, "no such file"},
		{"explicit non-transcript", []string{"ingest", filepath.Join(dir, "notes.jsonl")}, 1, "not a transcript of an agent ledger reads"},
		{"no path, no agent folder", []string{"ingest"}, 3, "no agent sessions folder here"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(t, home, "", append([]string{"--db", db}, tc.args...)...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want exit %d and one line with %q", r.code, r.stderr, tc.code, tc.msg)
			}
		})
	}
}

func TestAuditSinceAndUnknownSession(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	ingest(t, home, db, sampleDir(t))
	tests := []struct {
		args []string
		code int
		rows int
	}{
		{[]string{"audit", "--json"}, 0, 2},
		{[]string{"audit", "7c1d", "--json"}, 0, 1},
		{[]string{"audit", "--since", "2026-03-02T12:00:00Z", "--json"}, 0, 1},
		{[]string{"audit", "--since", "2099-01-01", "--json"}, 0, 0},
		{[]string{"audit", "ffff"}, 3, -1},
		{[]string{"audit", "--since", "yesterday-ish"}, 2, -1},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := runCmd(t, home, "", append([]string{"--db", db}, tc.args...)...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d (%s)", r.code, tc.code, r.stderr)
			}
			if tc.rows >= 0 {
				var rows []any
				decodeJSON(t, r.stdout, &rows)
				if len(rows) != tc.rows {
					t.Errorf("%d rows, want %d", len(rows), tc.rows)
				}
			}
		})
	}
	r := runCmd(t, home, "", "--db", db, "audit")
	if !strings.Contains(r.stdout, "2 compactions · median pre_tokens 191000 · median tool calls between compactions 4") {
		t.Errorf("audit totals line missing:\n%s", r.stdout)
	}
}

// TestIngestSkipsSaysHowManyMore: a file with more bad lines than are
// listed says how many more there are, in the text ("and N more") and in
// the JSON, whose skipped_lines is the listed skips plus skips_not_listed.
func TestIngestSkipsSaysHowManyMore(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	dir := filepath.Join(home, "in")
	os.MkdirAll(dir, 0o700)
	src := splitLines(t, filepath.Join(sampleDir(t), "claude", "-home-dev-src-payments", "7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57.jsonl"))
	var a, b []byte
	for i, l := range src {
		a, b = append(a, l...), append(b, l...)
		if i == 3 {
			a = append(a, bytes.Repeat([]byte("{not json\n"), 8)...)
			b = append(b, "[1]\n"...)
		}
	}
	os.WriteFile(filepath.Join(dir, "a.jsonl"), a, 0o600)
	b = bytes.ReplaceAll(b, []byte("7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e57"), []byte("7c1d9e42-5b8a-4f61-9d3e-2a6b8c0f1e58"))
	os.WriteFile(filepath.Join(dir, "b.jsonl"), b, 0o600)

	r := runCmd(t, home, "", "--db", db, "ingest", "--json", dir)
	var got struct {
		SkippedLines   int `json:"skipped_lines"`
		SkipsNotListed int `json:"skips_not_listed"`
		Skips          []struct {
			File string `json:"file"`
			Line int    `json:"line"`
		} `json:"skips"`
	}
	decodeJSON(t, r.stdout, &got)
	if got.SkippedLines != 9 || len(got.Skips) != 6 || got.SkipsNotListed != 3 || got.SkippedLines != len(got.Skips)+got.SkipsNotListed {
		t.Errorf("skipped_lines %d, %d listed, skips_not_listed %d; want 9 = 6 listed (5 of a, 1 of b) + 3", got.SkippedLines, len(got.Skips), got.SkipsNotListed)
	}
	home2 := t.TempDir()
	r = runCmd(t, home2, "", "--db", filepath.Join(home2, "l.db"), "ingest", dir)
	if !strings.Contains(r.stdout, "9 malformed lines skipped") || !strings.Contains(r.stdout, "  and 3 more in a.jsonl\n") ||
		strings.Count(r.stdout, "  skipped a.jsonl:") != 5 || strings.Count(r.stdout, "  skipped b.jsonl:") != 1 {
		t.Errorf("text output:\n%s", r.stdout)
	}
}
