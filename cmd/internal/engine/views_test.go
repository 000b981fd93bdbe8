package engine

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agentledger/ledger/handoff"
	"github.com/agentledger/ledger/store"
)

// TestViewsOfTheSample: what the web view and the MCP server list, over the
// sample's Claude Code session and Codex rollout: sessions (all, a
// project's, a page at a time), a session's timeline, and the audit a
// page at a time.
func TestViewsOfTheSample(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _, _ := hookEngine(t)
	e.now = func() time.Time { return time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC) } // after the sample's sessions
	if _, err := e.Ingest(ctx, []string{sampleDir(t)}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	all, err := e.Sessions(ctx, "", 0)
	if err != nil || len(all) != 2 {
		t.Fatalf("sessions: %d, %v; want the sample's 2", len(all), err)
	}
	if mine, err := e.Sessions(ctx, "/home/dev/src/payments", 0); err != nil || len(mine) != 1 || mine[0].ID != sampleID {
		t.Errorf("sessions of /home/dev/src/payments: %+v, %v", mine, err)
	}

	page, err := e.ListSessions(ctx, store.SessionFilter{Limit: 1})
	if err != nil || len(page.Sessions) != 1 || !page.More || page.Sessions[0].ID != all[0].ID {
		t.Fatalf("first page of 1: %+v, %v; want the newest session and more to come", page, err)
	}
	if _, ok := page.Peaks[page.Sessions[0].ID]; !ok || len(page.Handoffs) != 0 {
		t.Errorf("first page: peaks %v, handoffs %v; want the session's peak, no handoff", page.Peaks, page.Handoffs)
	}
	h, err := e.WriteHandoff(ctx, sampleID, HandoffRequest{Trigger: "manual", Budget: handoff.DefaultBudget, Source: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	page, err = e.ListSessions(ctx, store.SessionFilter{Project: "/home/dev/src/payments", Limit: 5})
	if err != nil || len(page.Sessions) != 1 || page.More || page.Handoffs[sampleID].ID != h.ID {
		t.Errorf("the project's page: %+v, %v; want its session with handoff %d, no more", page, err, h.ID)
	}

	tl, err := e.Timeline(ctx, sampleID[:8])
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Points) == 0 || tl.Window <= 0 || !(0 < tl.Should && tl.Should < tl.Must && tl.Must < tl.Window) || tl.LastSeq != tl.Session.Messages-1 {
		t.Errorf("timeline: %d points, window %d, should %d, must %d, last seq %d of %d messages", len(tl.Points), tl.Window, tl.Should, tl.Must, tl.LastSeq, tl.Session.Messages)
	}
	for _, p := range tl.Points {
		if p.Tokens > tl.Peak {
			t.Errorf("a point of %d tokens above the peak %d", p.Tokens, tl.Peak)
		}
	}
	// The transcript's compaction mid-session; the handoff, and its
	// record, after the last message.
	if len(tl.Compactions) != 2 || len(tl.Handoffs) != 1 || tl.Handoffs[0].ID != h.ID || tl.Handoffs[0].Seq != tl.LastSeq {
		t.Fatalf("timeline marks: compactions %+v, handoffs %+v; want the transcript's and the handoff's, the handoff after the last message", tl.Compactions, tl.Handoffs)
	}
	for _, m := range tl.Compactions {
		if m.Source == "transcript" && (m.Seq <= 0 || m.Seq >= tl.LastSeq) || m.Source == "cli" && m.Seq != tl.LastSeq {
			t.Errorf("compaction mark %+v (last seq %d)", m, tl.LastSeq)
		}
	}
	if _, err := e.Timeline(ctx, "ffffffff"); !notFound(err) {
		t.Errorf("timeline of no session: %v", err)
	}

	// The audit a page at a time: every row, the summaries counted on the
	// page's only (page 0 the newest).
	rows, err := e.Audit(ctx, "", time.Time{})
	if err != nil || len(rows) < 2 {
		t.Fatalf("audit: %d rows, %v; want the sample's compactions and the handoff's record", len(rows), err)
	}
	for p := range len(rows) {
		paged, err := e.AuditPage(ctx, "", time.Time{}, p, 1)
		if err != nil || len(paged) != len(rows) {
			t.Fatalf("page %d: %d rows, %v", p, len(paged), err)
		}
		for i, r := range paged {
			want := 0
			if i == len(rows)-1-p {
				want = rows[i].SummaryTokens
			}
			if r.SummaryTokens != want || r.Compaction != rows[i].Compaction {
				t.Errorf("page %d, row %d: summary %d tokens, want %d", p, i, r.SummaryTokens, want)
			}
		}
	}
}

// TestTimeJSON: a time is RFC 3339 UTC or null, and reads back the same.
func TestTimeJSON(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 2, 10, 0, 0, 0, time.FixedZone("CET", 3600))
	for _, tc := range []struct {
		in   Time
		json string
	}{{Time(at), `"2026-03-02T09:00:00Z"`}, {Time{}, `null`}} {
		b, err := json.Marshal(tc.in)
		if err != nil || string(b) != tc.json {
			t.Errorf("marshal %v: %s, %v; want %s", time.Time(tc.in), b, err, tc.json)
		}
		var back Time
		if err := json.Unmarshal(b, &back); err != nil || !time.Time(back).Equal(time.Time(tc.in)) {
			t.Errorf("unmarshal %s: %v, %v", b, time.Time(back), err)
		}
	}
	var bad Time
	if err := json.Unmarshal([]byte(`"yesterday"`), &bad); err == nil {
		t.Error("unmarshal of a word: no error")
	}
}
