package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/handoff"
)

// backend is a way to open a fresh ledger: a SQLite file, or a database on
// the test PostgreSQL server.
type backend struct {
	name string
	open func(t testing.TB, opts ...Option) *Store
}

func openPG(t testing.TB, opts ...Option) *Store {
	t.Helper()
	opts = append([]Option{WithLocalPath(t.TempDir() + "/ledger.db"), WithHost("test-host")}, opts...)
	s, err := Open(context.Background(), migratedPG(t), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openSQLite(t testing.TB, opts ...Option) *Store {
	return openTemp(t, append([]Option{WithHost("test-host")}, opts...)...)
}

var backends = []backend{{"sqlite", openSQLite}, {"postgres", openPG}}

// known reports whether n is known and v.
func known(n *int64, v int64) bool { return n != nil && *n == v }

// contractCase is one case of the store's contract: the same calls must
// give the same results on every backend.
type contractCase struct {
	name string
	run  func(t *testing.T, s *Store)
}

// TestBackendContract runs every contract case against SQLite and
// PostgreSQL.
func TestBackendContract(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range contractCases {
				// Each case has a new ledger of its own: on PostgreSQL,
				// most of a case's time is the server's, making it.
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					c.run(t, b.open(t))
				})
			}
		})
	}
}

var contractCases = []contractCase{
	{"agent records: cost and preserved segment", func(t *testing.T, s *Store) {
		// Claude Code 2.1.3x's cost-state (the latest holds) and a partial
		// compaction's preserved segment, read back alike on both backends;
		// a session of an agent that reports no cost has none.
		ctx := context.Background()
		at := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
		w, err := s.NewWriter(ctx, "claude")
		if err != nil {
			t.Fatal(err)
		}
		defer w.Rollback()
		for i, c := range []compact.Cost{{USD: 0.0112, LinesAdded: 4}, {USD: 0.2332, LinesAdded: 8, LinesRemoved: 1}} {
			if err := w.PatchSession(ctx, SessionPatch{ID: "c1", Cost: &c, Time: at.Add(time.Duration(i) * time.Second)}); err != nil {
				t.Fatal(err)
			}
		}
		for i, id := range []string{"m1", "m2", "m3"} {
			m := compact.Message{UUID: id, SessionID: "c1", Role: compact.RoleUser, Time: at.Add(time.Duration(i) * time.Minute),
				Blocks: []compact.Block{{Kind: compact.BlockText, Text: "text of " + id}}}
			if _, err := w.AddMessage(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		b := compact.NewBoundary("c1", "b1", "manual", at.Add(5*time.Minute), 5175, 3152)
		b.LogicalParentUUID = "m3"
		b.Preserved = &compact.Preserved{HeadUUID: "m2", TailUUID: "m3", Messages: 2}
		if _, err := w.AddBoundary(ctx, b); err != nil {
			t.Fatal(err)
		}
		if err := w.PatchSession(ctx, SessionPatch{ID: "x1", Time: at}); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(ctx, nil); err != nil {
			t.Fatal(err)
		}
		sess, err := s.Session(ctx, "c1")
		if c := sess.Cost; err != nil || c == nil || *c != (compact.Cost{USD: 0.2332, LinesAdded: 8, LinesRemoved: 1}) {
			t.Errorf("cost of c1 = %+v (%v), want the latest", c, err)
		}
		if x, err := s.Session(ctx, "x1"); err != nil || x.Cost != nil {
			t.Errorf("cost of x1 = %+v (%v), want none", x.Cost, err)
		}
		comps, err := s.Compactions(ctx, CompactionFilter{SessionID: "c1"})
		if err != nil || len(comps) != 1 || comps[0].PreservedHead != "m2" || comps[0].PreservedTail != "m3" || comps[0].PreservedMessages != 2 {
			t.Fatalf("compactions %+v, %v", comps, err)
		}
		if text, err := s.PreservedText(ctx, comps[0]); err != nil || text != "text of m2\ntext of m3" {
			t.Errorf("PreservedText = %q, %v", text, err)
		}
	}},
	{"conversation", func(t *testing.T, s *Store) {
		ctx := context.Background()
		at := fillConversation(t, s)
		sess, err := s.Session(ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		if sess.Messages != 6 || sess.Compactions != 1 || sess.Host != "test-host" || sess.Source != "claude" ||
			!sess.StartedAt.Equal(at.Add(time.Minute)) || !sess.LastAt.Equal(at.Add(6*time.Minute)) {
			t.Errorf("session s1 = %+v", sess)
		}
		if sess.ContextTokens != 500 {
			t.Errorf("context tokens %d, want 500 (the last main-line response)", sess.ContextTokens)
		}
		msgs, err := s.Messages(ctx, "s1", 0)
		if err != nil {
			t.Fatal(err)
		}
		var uuids []string
		for _, m := range msgs {
			uuids = append(uuids, m.UUID)
		}
		// In time order: the subagent's a1, added last, is of m2's time.
		if want := []string{"m1", "m2", "a1", "m3", "m4", "m5"}; !slices.Equal(uuids, want) {
			t.Errorf("messages %v, want %v", uuids, want)
		}
		if !msgs[4].CompactSummary || msgs[4].Meta || !msgs[2].Sidechain || msgs[1].Usage == nil || msgs[1].Usage.CacheReadInputTokens != 1000 {
			t.Errorf("flags and usage not kept: %+v / %+v", msgs[4], msgs[1])
		}
		comps, err := s.Compactions(ctx, CompactionFilter{SessionID: "s1"})
		if err != nil || len(comps) != 1 || comps[0].Summary != "text of m4" || !known(comps[0].PreTokens, 3020) ||
			!known(comps[0].PostTokens, 500) || !comps[0].At.Equal(at.Add(4*time.Minute)) {
			t.Errorf("compactions %+v, %v", comps, err)
		}
		page, seqs, err := s.MessageRange(ctx, "s1", 1, 3)
		if err != nil || len(page) != 2 || page[0].UUID != "m2" || !slices.Equal(seqs, []int64{1, 2}) {
			t.Errorf("MessageRange = %v %v %v", page, seqs, err)
		}
		if _, err := s.Session(ctx, "s"); err == nil {
			t.Errorf("prefix s matched one session of two")
		}
		if _, err := s.Session(ctx, "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown session: %v", err)
		}
	}},
	{"ingest twice adds nothing", func(t *testing.T, s *Store) {
		ctx := context.Background()
		fillConversation(t, s)
		before := rowCounts(t, s)
		w, err := s.NewWriter(ctx, "claude")
		if err != nil {
			t.Fatal(err)
		}
		added, err := w.AddMessage(ctx, compact.Message{UUID: "m1", SessionID: "s1", Role: compact.RoleUser,
			Blocks: []compact.Block{{Kind: compact.BlockText, Text: "again"}}})
		if err != nil || added {
			t.Errorf("AddMessage of a stored uuid = %v, %v", added, err)
		}
		b := compact.NewBoundary("s1", "b1", "auto", time.Now(), 1, 0)
		if added, err := w.AddBoundary(ctx, b); err != nil || added {
			t.Errorf("AddBoundary of a stored boundary = %v, %v", added, err)
		}
		if err := w.Commit(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if after := rowCounts(t, s); !reflect.DeepEqual(before, after) {
			t.Errorf("rows %v, then %v", before, after)
		}
	}},
	{"a new session written in one go", func(t *testing.T, s *Store) {
		// PostgreSQL copies a new session's messages in (COPY, more than
		// one batch of them here): the same rows as one insert each.
		ctx := context.Background()
		at := time.Date(2026, 6, 2, 9, 0, 0, 0, time.UTC)
		msg := func(i int) compact.Message {
			return compact.Message{UUID: fmt.Sprintf("m%d", i), SessionID: "c1", Role: compact.RoleAssistant, Time: at.Add(time.Duration(i) * time.Second),
				ResponseID: fmt.Sprintf("r%d", i/3), Usage: &compact.Usage{InputTokens: 1, OutputTokens: int64(i/3 + 1)},
				Blocks: []compact.Block{{Kind: compact.BlockText, Text: fmt.Sprintf("line %d of wombat%d", i, i)}}}
		}
		const n = copyBatch + 100
		w, err := s.NewWriter(ctx, "claude")
		if err != nil {
			t.Fatal(err)
		}
		defer w.Rollback()
		for i := range n {
			if added, err := w.AddMessage(ctx, msg(i)); err != nil || !added {
				t.Fatalf("AddMessage(m%d) = %v, %v", i, added, err)
			}
			if i%700 == 0 { // a line read twice
				if added, err := w.AddMessage(ctx, msg(i)); err != nil || added {
					t.Fatalf("AddMessage(m%d) again = %v, %v", i, added, err)
				}
			}
		}
		if err := w.Commit(ctx, nil); err != nil {
			t.Fatal(err)
		}
		// The last response goes on in a later write.
		w, err = s.NewWriter(ctx, "claude")
		if err != nil {
			t.Fatal(err)
		}
		last := msg(n - 1)
		last.UUID, last.Blocks = "m-more", []compact.Block{{Kind: compact.BlockText, Text: "more"}}
		if added, err := w.AddMessage(ctx, last); err != nil || !added {
			t.Fatalf("AddMessage(m-more) = %v, %v", added, err)
		}
		if err := w.Commit(ctx, nil); err != nil {
			t.Fatal(err)
		}
		msgs, err := s.Messages(ctx, "c1", 0)
		if err != nil || len(msgs) != n+1 {
			t.Fatalf("Messages = %d, %v; want %d", len(msgs), err, n+1)
		}
		var withUsage int
		for i, m := range msgs {
			if i < n && m.UUID != fmt.Sprintf("m%d", i) {
				t.Fatalf("message %d: uuid %s", i, m.UUID)
			}
			// An API response's usage is kept on its latest line only.
			lastOfResponse := i == n || (i%3 == 2 && i < n-1)
			if (m.Usage != nil) != lastOfResponse {
				t.Errorf("message %d (%s): usage %+v", i, m.UUID, m.Usage)
			}
			if m.Usage != nil {
				withUsage++
			}
		}
		if want := (n-1)/3 + 1; withUsage != want {
			t.Errorf("%d messages hold usage, want %d (one per response)", withUsage, want)
		}
		for _, i := range []int{0, copyBatch, n - 1} {
			res, err := s.Search(ctx, SearchOptions{Query: ParseQuery(fmt.Sprintf("wombat%d", i)), Limit: 5})
			if err != nil || len(res.Hits) != 1 || res.Hits[0].SessionID != "c1" {
				t.Errorf("search wombat%d = %+v, %v", i, res, err)
			}
		}
	}},
	{"session filters", func(t *testing.T, s *Store) {
		ctx := context.Background()
		at := fillConversation(t, s)
		for _, tc := range []struct {
			f    SessionFilter
			want []string
		}{
			{SessionFilter{}, []string{"s2", "s1"}},
			{SessionFilter{Source: "codex"}, nil},
			{SessionFilter{Host: "test-host"}, []string{"s2", "s1"}},
			{SessionFilter{Host: "elsewhere"}, nil},
			{SessionFilter{Since: at.Add(8 * time.Minute)}, []string{"s2"}},
			{SessionFilter{Until: at.Add(8 * time.Minute)}, []string{"s1"}},
			{SessionFilter{Limit: 1, Offset: 1}, []string{"s1"}},
			{SessionFilter{Offset: 1}, []string{"s1"}},
			{SessionFilter{Limit: 1}, []string{"s2"}},
		} {
			list, err := s.Sessions(ctx, tc.f)
			var got []string
			for _, x := range list {
				got = append(got, x.ID)
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("Sessions(%+v) = %v, %v; want %v", tc.f, got, err, tc.want)
			}
		}
	}},
	{"project below a folder", func(t *testing.T, s *Store) {
		ctx := context.Background()
		w, err := s.NewWriter(ctx, "codex")
		if err != nil {
			t.Fatal(err)
		}
		for id, p := range map[string]string{"a": "/src/app", "b": "/src/app/sub", "c": "/src/app-two", "d": "/src/ap"} {
			if err := w.PatchSession(ctx, SessionPatch{ID: id, Project: p, Time: time.Now()}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Commit(ctx, nil); err != nil {
			t.Fatal(err)
		}
		list, err := s.Sessions(ctx, SessionFilter{Project: "/src/app"})
		var got []string
		for _, x := range list {
			got = append(got, x.ID)
		}
		slices.Sort(got)
		if err != nil || !slices.Equal(got, []string{"a", "b"}) {
			t.Errorf("sessions below /src/app: %v, %v", got, err)
		}
	}},
	// Rows of one second are listed in their sessions' order, then their
	// own: every ledger that holds them lists them alike, whatever order
	// they reached it in (a team ledger's ids are its own).
	{"ties listed by session", func(t *testing.T, s *Store) {
		ctx := context.Background()
		at := fillConversation(t, s)
		for _, id := range []string{"s2", "s1"} {
			rec := CompactionRecord{Source: "cli", Trigger: "manual", At: at, PreTokens: 100}
			if _, _, err := s.AddHandoff(ctx, NewHandoff{Doc: handoffDoc(id, at), Record: &rec}); err != nil {
				t.Fatal(err)
			}
		}
		hs, err := s.Handoffs(ctx, "", 0)
		if err != nil || len(hs) != 2 || hs[0].SessionID != "s2" || hs[1].SessionID != "s1" {
			t.Errorf("Handoffs (newest first) = %+v, %v; want s2's then s1's", hs, err)
		}
		all, err := s.Compactions(ctx, CompactionFilter{})
		var cs []Compaction // the two records (fillConversation's own compaction aside)
		for _, c := range all {
			if c.Source == "cli" {
				cs = append(cs, c)
			}
		}
		if err != nil || len(cs) != 2 || cs[0].SessionID != "s1" || cs[1].SessionID != "s2" {
			t.Errorf("Compactions (oldest first) = %+v, %v; want s1's then s2's", cs, err)
		}
	}},
	{"handoffs and notes", func(t *testing.T, s *Store) {
		ctx := context.Background()
		at := fillConversation(t, s)
		id, written, err := s.AddHandoff(ctx, NewHandoff{Doc: handoffDoc("s1", at)})
		if err != nil || !written || id == 0 {
			t.Fatalf("AddHandoff = %d %v %v", id, written, err)
		}
		later := handoffDoc("s1", at.Add(time.Hour))
		later.Task = "the later one"
		if _, _, err := s.AddHandoff(ctx, NewHandoff{Doc: later}); err != nil {
			t.Fatal(err)
		}
		h, err := s.LatestHandoff(ctx, "s1")
		if err != nil || h.Task != "the later one" || !h.CreatedAt.Equal(at.Add(time.Hour)) {
			t.Errorf("LatestHandoff = %+v, %v", h, err)
		}
		hs, err := s.LatestHandoffs(ctx, []string{"s1", "s2"})
		if err != nil || len(hs) != 1 || hs["s1"].Task != "the later one" {
			t.Errorf("LatestHandoffs = %+v, %v", hs, err)
		}
		n, err := s.AddNote(ctx, Note{SessionID: "s1", Kind: handoff.NoteDecision, Text: "keep retries at 3", CreatedAt: at})
		if err != nil || n.ID == 0 {
			t.Fatalf("AddNote = %+v, %v", n, err)
		}
		notes, err := s.Notes(ctx, "s1")
		if err != nil || len(notes) != 1 || notes[0].Text != "keep retries at 3" {
			t.Errorf("Notes = %+v, %v", notes, err)
		}
	}},
	{"search", func(t *testing.T, s *Store) {
		ctx := context.Background()
		at := fillSearch(t, s)
		for _, tc := range []struct {
			q    string
			o    SearchOptions
			want []string // session ids found, sorted
			any  bool
		}{
			{q: "timeout", want: []string{"q1", "q2"}},
			{q: "session_store.go", want: []string{"q1"}},
			{q: "pkg/auth/session_store.go", want: []string{"q1"}},
			{q: `"connection refused"`, want: []string{"q2"}},
			{q: `"refused connection"`, want: nil},
			{q: "migrat*", want: []string{"q3"}},
			{q: "timeout -flaky", want: []string{"q1", "q2"}}, // q1's note has no "flaky"
			{q: "timeout -flaky", o: SearchOptions{Kind: KindMessage}, want: []string{"q2"}},
			{q: "goose OR redis", want: []string{"q2", "q3"}},
			{q: "timeout nosuchword", want: []string{"q1", "q2"}, any: true},
			{q: "timeout", o: SearchOptions{Kind: KindNote}, want: []string{"q1"}},
			{q: "timeout", o: SearchOptions{Role: "assistant"}, want: []string{"q2"}},
			{q: "timeout", o: SearchOptions{SessionID: "q2"}, want: []string{"q2"}},
			{q: "timeout", o: SearchOptions{Project: "/work/api"}, want: []string{"q1"}},
			{q: "timeout", o: SearchOptions{Host: "test-host"}, want: []string{"q1", "q2"}},
			{q: "timeout", o: SearchOptions{Host: "other"}, want: nil},
			{q: "timeout", o: SearchOptions{Since: at.Add(90 * time.Minute)}, want: []string{"q2"}},
			{q: "timeout", o: SearchOptions{ExcludeTrees: []string{"/work/web"}}, want: []string{"q1"}},
			{q: "timeout", o: SearchOptions{ExcludeTrees: []string{"/work"}}, want: nil},
			{q: "timeout", o: SearchOptions{ExcludeTrees: []string{"/wor"}}, want: []string{"q1", "q2"}},
			{q: "timeout", o: SearchOptions{ExcludeProjects: []string{"/work/api"}, Limit: 1}, want: []string{"q2"}},
			{q: "timeout", o: SearchOptions{ExcludeProjects: []string{"/work"}}, want: []string{"q1", "q2"}},
			{q: "AND NEAR( ^ :", want: nil},
		} {
			o := tc.o
			o.Query = ParseQuery(tc.q)
			res, err := s.Search(ctx, o)
			if err != nil {
				t.Errorf("search %q: %v", tc.q, err)
				continue
			}
			if got := hitSessions(res.Hits); !slices.Equal(got, tc.want) || res.Any != tc.any {
				t.Errorf("search %q %+v: sessions %v any %v; want %v any %v", tc.q, tc.o, got, res.Any, tc.want, tc.any)
			}
			for _, h := range res.Hits {
				if !strings.Contains(h.Snippet, MarkStart) && tc.q != "AND NEAR( ^ :" {
					t.Errorf("search %q: snippet without a highlight: %q", tc.q, h.Snippet)
				}
			}
		}
	}},
	{"search by role", func(t *testing.T, s *Store) {
		// A tool result is the tool's, in the line of whichever role its
		// agent puts it (Claude Code: user; Codex: tool).
		ctx := context.Background()
		at := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
		w, err := s.NewWriter(ctx, "claude")
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range []struct {
			role compact.Role
			kind compact.BlockKind
			text string
		}{
			{compact.RoleUser, compact.BlockText, "please run the widget tests"},
			{compact.RoleUser, compact.BlockToolResult, "widget tests: ok"},
			{compact.RoleTool, compact.BlockToolResult, "widget build: ok"},
		} {
			if _, err := w.AddMessage(ctx, compact.Message{UUID: fmt.Sprint("r", i), SessionID: "r1", Role: m.role,
				Time: at.Add(time.Duration(i) * time.Minute), Blocks: []compact.Block{{Kind: m.kind, Text: m.text, ToolID: "t1"}}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Commit(ctx, nil); err != nil {
			t.Fatal(err)
		}
		for role, want := range map[string]int{"tool": 2, "user": 1, "": 3} {
			res, err := s.Search(ctx, SearchOptions{Query: ParseQuery("widget"), Role: role})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) != want {
				t.Errorf("role %q: %d hits, want %d", role, len(res.Hits), want)
			}
			for _, h := range res.Hits {
				if isTool := strings.Contains(h.Snippet, "ok"); isTool != (h.Role == "tool") {
					t.Errorf("role %q: hit %q says role %s", role, h.Snippet, h.Role)
				}
			}
		}
	}},
	{"a message without a time", func(t *testing.T, s *Store) {
		// A transcript line with no timestamp, or one that does not
		// parse: its message is stored with its time unknown, and every
		// search that finds it reads it back so (zero), beside one with a
		// time, whichever order they come in.
		ctx := context.Background()
		w, err := s.NewWriter(ctx, "claude")
		if err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		for i, tm := range []time.Time{{}, at, {}} {
			m := compact.Message{UUID: fmt.Sprint("u", i), SessionID: "t1", Role: compact.RoleUser, Time: tm,
				Blocks: []compact.Block{{Kind: compact.BlockText, Text: fmt.Sprint("wombat number ", i, " 4x4")}}}
			if _, err := w.AddMessage(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Commit(ctx, nil); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"wombat", "wombat number", "wombat 4x4", "wombat nosuchword"} {
			for _, o := range []SearchOptions{{}, {SessionID: "t1"}, {Kind: KindMessage}} {
				o.Query = ParseQuery(q)
				res, err := s.Search(ctx, o)
				if err != nil {
					t.Errorf("search %q %+v: %v", q, o, err)
					continue
				}
				timed := 0
				for _, h := range res.Hits {
					switch {
					case h.At.Equal(at):
						timed++
					case !h.At.IsZero():
						t.Errorf("search %q: hit at %v, want %v or unknown", q, h.At, at)
					}
				}
				if len(res.Hits) != 3 || timed != 1 {
					t.Errorf("search %q %+v: %d hits, %d with the time; want 3, 1", q, o, len(res.Hits), timed)
				}
			}
		}
	}},
	{"what the ledger does not know", func(t *testing.T, s *Store) {
		// One rule on both backends: an unknown time is the zero time, an
		// unknown count or cost nil; a known time is in UTC (pgx reads
		// TIMESTAMPTZ in the local zone) and a known count is there, zero
		// included where zero is a count.
		ctx := context.Background()
		at := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
		w, err := s.NewWriter(ctx, "claude")
		if err != nil {
			t.Fatal(err)
		}
		defer w.Rollback()
		for _, m := range []compact.Message{
			{UUID: "k1", SessionID: "known", Role: compact.RoleUser, Time: at, Blocks: []compact.Block{{Kind: compact.BlockText, Text: "echidna"}}},
			{UUID: "k2", ParentUUID: "k1", SessionID: "known", Role: compact.RoleAssistant, Time: at.Add(time.Minute),
				Usage: &compact.Usage{InputTokens: 7, OutputTokens: 2}, Blocks: []compact.Block{{Kind: compact.BlockText, Text: "echidna"}}},
			{UUID: "n1", SessionID: "unknown", Role: compact.RoleUser, Blocks: []compact.Block{{Kind: compact.BlockText, Text: "echidna"}}},
			{UUID: "n2", ParentUUID: "n1", SessionID: "unknown", Role: compact.RoleAssistant,
				Usage: &compact.Usage{InputTokens: 9, OutputTokens: 3}, Blocks: []compact.Block{{Kind: compact.BlockText, Text: "echidna"}}},
		} {
			if _, err := w.AddMessage(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		b := compact.NewBoundary("known", "kb", "manual", at.Add(2*time.Minute), 0, 0) // no tokens stated
		b.LogicalParentUUID = "k2"
		if _, err := w.AddBoundary(ctx, b); err != nil {
			t.Fatal(err)
		}
		if err := w.PatchSession(ctx, SessionPatch{ID: "known", Cost: &compact.Cost{USD: 0, LinesAdded: 0}}); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(ctx, nil); err != nil {
			t.Fatal(err)
		}
		rec := CompactionRecord{Source: "cli", Trigger: "manual", At: at.Add(3 * time.Minute), PreTokens: 4321}
		doc := handoff.Doc{Session: "known", CreatedAt: rec.At, Trigger: "manual", Markdown: "# Handoff", Tokens: 3}
		hid, _, err := s.AddHandoff(ctx, NewHandoff{Doc: doc, Record: &rec})
		if err != nil {
			t.Fatal(err)
		}
		utc := func(what string, tm time.Time, want time.Time) {
			t.Helper()
			if !tm.Equal(want) || tm.Location() != time.UTC {
				t.Errorf("%s = %v (%v), want %v in UTC", what, tm, tm.Location(), want)
			}
		}

		ks, err := s.Session(ctx, "known")
		if err != nil {
			t.Fatal(err)
		}
		utc("known started", ks.StartedAt, at)
		utc("known last", ks.LastAt, at.Add(2*time.Minute))
		if ks.Cost == nil || *ks.Cost != (compact.Cost{}) {
			t.Errorf("known cost = %+v, want a cost of zero (stated), not none", ks.Cost)
		}
		unknown, err := s.Session(ctx, "unknown")
		if err != nil || !unknown.StartedAt.IsZero() || !unknown.LastAt.IsZero() || unknown.Cost != nil {
			t.Errorf("unknown session = %+v, %v; want zero times and no cost", unknown, err)
		}
		list, err := s.Sessions(ctx, SessionFilter{})
		if err != nil || len(list) != 2 || list[0].ID != "known" || !list[1].LastAt.IsZero() {
			t.Errorf("sessions = %+v, %v; want the known one, then the one of no time", list, err)
		}

		cs, err := s.Compactions(ctx, CompactionFilter{SessionID: "known"})
		if err != nil || len(cs) != 2 {
			t.Fatalf("compactions = %+v, %v", cs, err)
		}
		tr, cli := cs[0], cs[1]
		utc("boundary at", tr.At, at.Add(2*time.Minute))
		if tr.PreTokens != nil || tr.PostTokens != nil || tr.HandoffID != nil || tr.BoundaryUUID != "kb" {
			t.Errorf("transcript compaction = %+v, want no tokens, no handoff, boundary kb", tr)
		}
		if !known(cli.PreTokens, 4321) || cli.PostTokens != nil || !known(cli.HandoffID, hid) || cli.BoundaryUUID != "" {
			t.Errorf("cli record = %+v, want 4321 tokens before, none after, handoff %d, no boundary", cli, hid)
		}
		if byID, err := s.CompactionByID(ctx, cli.ID); err != nil || !reflect.DeepEqual(byID, cli) {
			t.Errorf("CompactionByID = %+v, %v; want %+v", byID, err, cli)
		}
		if last, n, err := s.LastCompaction(ctx, "known"); err != nil || n != 1 || !reflect.DeepEqual(last, tr) {
			t.Errorf("LastCompaction = %+v, %d, %v; want the transcript's", last, n, err)
		}

		h, err := s.Handoff(ctx, hid)
		if err != nil {
			t.Fatal(err)
		}
		utc("handoff created", h.CreatedAt, rec.At)
		if hs, err := s.Handoffs(ctx, "known", 0); err != nil || len(hs) != 1 {
			t.Errorf("handoffs = %+v, %v", hs, err)
		} else {
			utc("listed handoff created", hs[0].CreatedAt, rec.At)
		}

		res, err := s.Search(ctx, SearchOptions{Query: ParseQuery("echidna"), Kind: KindMessage})
		if err != nil || len(res.Hits) != 4 {
			t.Fatalf("search = %+v, %v", res.Hits, err)
		}
		for _, hit := range res.Hits {
			if hit.SessionID == "known" {
				if !hit.At.Equal(at) && !hit.At.Equal(at.Add(time.Minute)) || hit.At.Location() != time.UTC {
					t.Errorf("hit of the known session at %v", hit.At)
				}
			} else if !hit.At.IsZero() {
				t.Errorf("hit of the unknown session at %v, want zero", hit.At)
			}
		}
		for id, want := range map[string]time.Time{"known": at.Add(time.Minute), "unknown": {}} {
			ps, err := s.ContextSeries(ctx, id)
			if err != nil || len(ps) != 1 || !ps[0].At.Equal(want) || (!want.IsZero() && ps[0].At.Location() != time.UTC) {
				t.Errorf("context series of %s = %+v, %v; want one point at %v", id, ps, err, want)
			}
			when, err := s.MessageAt(ctx, id, 1)
			if err != nil || !when.Equal(want) {
				t.Errorf("MessageAt(%s, 1) = %v, %v; want %v", id, when, err, want)
			}
		}
	}},
	{"times the ledger cannot keep", func(t *testing.T, s *Store) {
		// A compaction whose line has no time takes the time of the
		// message before it, never year 1; a time of year 10000 (a valid
		// RFC 3339 time with an offset past the year's end) is unknown,
		// not written where no read gets it back; in a session with no
		// time at all, the compaction gets the time it was read.
		ctx := context.Background()
		w, err := s.NewWriter(ctx, "claude")
		if err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		far := time.Date(9999, 12, 31, 23, 59, 0, 0, time.FixedZone("", -23*3600))
		for i, tm := range []time.Time{at, far} {
			m := compact.Message{UUID: fmt.Sprint("v", i), SessionID: "v1", Role: compact.RoleUser, Time: tm,
				Blocks: []compact.Block{{Kind: compact.BlockText, Text: "platypus"}}}
			if _, err := w.AddMessage(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		for _, b := range []compact.Boundary{compact.NewBoundary("v1", "vb", "auto", time.Time{}, 10, 0),
			compact.NewBoundary("v2", "wb", "auto", far, 10, 0)} {
			if _, err := w.AddBoundary(ctx, b); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Commit(ctx, nil); err != nil {
			t.Fatal(err)
		}
		res, err := s.Search(ctx, SearchOptions{Query: ParseQuery("platypus")})
		if err != nil || len(res.Hits) != 2 {
			t.Fatalf("search: %+v, %v", res.Hits, err)
		}
		sess, err := s.Session(ctx, "v1")
		if err != nil || !sess.LastAt.Equal(at) {
			t.Errorf("session v1 last at %v, %v; want %v", sess.LastAt, err, at)
		}
		if _, err := s.Sessions(ctx, SessionFilter{}); err != nil {
			t.Errorf("sessions: %v", err)
		}
		cs, err := s.Compactions(ctx, CompactionFilter{SessionID: "v1"})
		if err != nil || len(cs) != 1 || !cs[0].At.Equal(at) {
			t.Errorf("compactions of v1: %+v, %v; want one at %v", cs, err, at)
		}
		cs, err = s.Compactions(ctx, CompactionFilter{SessionID: "v2"})
		if err != nil || len(cs) != 1 || time.Since(cs[0].At) > time.Hour {
			t.Errorf("compactions of v2: %+v, %v; want one at about now", cs, err)
		}
	}},
	{"newest matches of many", func(t *testing.T, s *Store) {
		ctx := context.Background()
		w, err := s.NewWriter(ctx, "codex")
		if err != nil {
			t.Fatal(err)
		}
		const n = 5000 // more than the first window of the PostgreSQL search
		for i := range n {
			text := fmt.Sprintf("line %d", i)
			if i%10 == 0 {
				text += " needle"
			}
			if i == 3 {
				text += " haystack"
			}
			if _, err := w.AddMessage(ctx, compact.Message{UUID: fmt.Sprint("n", i), SessionID: fmt.Sprint("w", i/1000), Role: compact.RoleUser,
				Time: time.Date(2026, 5, 1, 0, 0, i, 0, time.UTC), Blocks: []compact.Block{{Kind: compact.BlockText, Text: text}}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Commit(ctx, nil); err != nil {
			t.Fatal(err)
		}
		res, err := s.Search(ctx, SearchOptions{Query: ParseQuery("needle"), Limit: 20})
		if err != nil || len(res.Hits) != 20 {
			t.Fatalf("needle: %d hits, %v", len(res.Hits), err)
		}
		for i, h := range res.Hits {
			if want := fmt.Sprintf("line %d", n-10-10*i); !strings.Contains(h.Snippet, want) {
				t.Errorf("hit %d: %q, want %q (the newest first)", i, h.Snippet, want)
			}
		}
		res, err = s.Search(ctx, SearchOptions{Query: ParseQuery("haystack"), Limit: 20})
		if err != nil || len(res.Hits) != 1 || res.Hits[0].SessionID != "w0" {
			t.Errorf("haystack (the oldest rows only): %+v, %v", res.Hits, err)
		}
		res, err = s.Search(ctx, SearchOptions{Query: ParseQuery("needle"), SessionID: "w0", Limit: 5})
		if err != nil || len(res.Hits) != 5 || !strings.Contains(res.Hits[0].Snippet, "line 990 ") {
			t.Errorf("needle in w0: %+v, %v", res.Hits, err)
		}
	}},
	{"newest matches in every window", func(t *testing.T, s *Store) {
		// Three groups of messages whose ids lie, on PostgreSQL, in the
		// search's three windows of the newest rows (the sequence jumps
		// between them): the oldest group only in the last, the whole
		// table but the newest 65,536 ids.
		ctx := context.Background()
		at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
		add := func(group string, n int, needle func(int) bool) {
			t.Helper()
			w, err := s.NewWriter(ctx, "codex")
			if err != nil {
				t.Fatal(err)
			}
			defer w.Rollback()
			for i := range n {
				text := fmt.Sprintf("row %s%d", group, i)
				if needle(i) {
					text += " needle"
				}
				if group == "a" && i == 1 {
					text += " haystack"
				}
				at = at.Add(time.Second)
				if _, err := w.AddMessage(ctx, compact.Message{UUID: group + fmt.Sprint(i), SessionID: "win", Role: compact.RoleUser,
					Time: at, Blocks: []compact.Block{{Kind: compact.BlockText, Text: text}}}); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Commit(ctx, nil); err != nil {
				t.Fatal(err)
			}
		}
		jump := func(to int64) {
			t.Helper()
			if !s.Shared() {
				return // SQLite searches without windows
			}
			if _, err := s.db.Exec(`SELECT setval(pg_get_serial_sequence('messages', 'id'), $1)`, to); err != nil {
				t.Fatal(err)
			}
		}
		add("a", 30, func(i int) bool { return i%3 == 0 }) // 10 needles, in the last window
		jump(100_000)
		add("b", 2, func(int) bool { return true }) // in the second
		jump(150_000)
		add("c", 4, func(i int) bool { return i != 1 }) // 3 in the first
		wantNeedles := []string{"c3", "c2", "c0", "b1", "b0", "a27", "a24", "a21", "a18", "a15", "a12", "a9", "a6", "a3", "a0"}
		for _, limit := range []int{2, 3, 4, 5, 7, 20} {
			res, err := s.Search(ctx, SearchOptions{Query: ParseQuery("needle"), Limit: limit})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range res.Hits {
				row, _, _ := strings.Cut(strings.TrimPrefix(h.Snippet, "row "), " ")
				got = append(got, row)
			}
			if want := wantNeedles[:min(limit, len(wantNeedles))]; !slices.Equal(got, want) {
				t.Errorf("needle, limit %d: %v, want the newest %v", limit, got, want)
			}
		}
		res, err := s.Search(ctx, SearchOptions{Query: ParseQuery("haystack"), Limit: 20})
		if err != nil || len(res.Hits) != 1 || !strings.HasPrefix(res.Hits[0].Snippet, "row a1 ") {
			t.Errorf("haystack (in the last window only): %+v, %v", res.Hits, err)
		}
		// Scored (some terms may be missing): a term in the first window
		// and one in the last weigh alike, the newer first; a hit with
		// both terms before the newer hits with one.
		res, err = s.Search(ctx, SearchOptions{Query: ParseQuery("haystack OR c2"), Limit: 3})
		if err != nil || len(res.Hits) != 2 || res.Hits[0].Snippet != "row "+MarkStart+"c2"+MarkEnd+" needle" || !strings.HasPrefix(res.Hits[1].Snippet, "row a1 ") {
			t.Errorf("haystack OR c2: %+v, %v; want c2, a1", res.Hits, err)
		}
		res, err = s.Search(ctx, SearchOptions{Query: ParseQuery("needle OR haystack"), Limit: 3})
		if err != nil || len(res.Hits) != 3 || !strings.HasPrefix(res.Hits[0].Snippet, "row a1 ") {
			t.Errorf("needle OR haystack: %+v, %v; want a1 (both terms) first", res.Hits, err)
		}
	}},
	{"forget removes every row", func(t *testing.T, s *Store) {
		ctx := context.Background()
		at := fillConversation(t, s)
		if _, _, err := s.AddHandoff(ctx, NewHandoff{Doc: handoffDoc("s1", at)}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddNote(ctx, Note{SessionID: "s1", Kind: handoff.NoteNext, Text: "next", CreatedAt: at}); err != nil {
			t.Fatal(err)
		}
		if err := s.AddHookReceipt(ctx, HookReceipt{SessionID: "s1", Event: "Stop", At: at, Outcome: OutcomeOK}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Mark(ctx, "s1", "warned"); err != nil {
			t.Fatal(err)
		}
		f, err := s.Forget(ctx, "s1", false)
		if err != nil || f.Messages != 6 || f.Handoffs != 1 || f.Compactions != 1 {
			t.Fatalf("Forget = %+v, %v", f, err)
		}
		for _, table := range []string{"sessions WHERE id", "messages WHERE session_id", "handoffs WHERE session_id",
			"compactions WHERE session_id", "notes WHERE session_id", "cursors WHERE session_id", "session_marks WHERE session_id",
			"hook_receipts WHERE session_id", "resume_states WHERE session_id"} {
			var n int
			if err := s.db.Get(&n, `SELECT count(*) FROM `+table+` = 's1'`); err != nil || n != 0 {
				t.Errorf("%s = s1: %d rows left (%v)", table, n, err)
			}
		}
		res, err := s.Search(ctx, SearchOptions{Query: ParseQuery("text")})
		if err != nil || slices.Contains(hitSessions(res.Hits), "s1") {
			t.Errorf("search still finds s1: %v %v", hitSessions(res.Hits), err)
		}
		fillConversation(t, s) // the transcript is read again: s1 stays forgotten
		if _, err := s.Session(ctx, "s1"); !errors.Is(err, ErrNotFound) {
			t.Errorf("forgotten s1 came back: %v", err)
		}
	}},
	{"redaction", func(t *testing.T, s *Store) {
		ctx := context.Background()
		const secret = "sk_live_51HxZq8vLw2pXr0Tm2Kc5Wn8Yp1Gd4F"
		w, err := s.NewWriter(ctx, "claude")
		if err != nil {
			t.Fatal(err)
		}
		defer w.Rollback()
		if err := w.PatchSession(ctx, SessionPatch{ID: "s1", Title: "rotate " + secret}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.AddMessage(ctx, compact.Message{UUID: "m1", SessionID: "s1", Role: compact.RoleUser,
			Blocks: []compact.Block{{Kind: compact.BlockToolResult, Text: "STRIPE_KEY=" + secret}}}); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(ctx, nil); err != nil {
			t.Fatal(err)
		}
		var stored []string
		if err := s.db.Select(&stored, `SELECT text || coalesce(blocks, '') FROM messages UNION ALL SELECT title FROM sessions`); err != nil {
			t.Fatal(err)
		}
		if all := strings.Join(stored, "\n"); strings.Contains(all, secret) || !strings.Contains(all, "[REDACTED") {
			t.Errorf("stored: %s", all)
		}
	}},
	{"forget several sessions at once", func(t *testing.T, s *Store) {
		ctx := context.Background()
		fillConversation(t, s) // s1 (6 messages) and s2 (1)
		if fs, err := s.ForgetSessions(ctx, []string{"s1", "s2"}, true); err != nil || len(fs) != 2 || fs[0].Messages != 6 || fs[1].Messages != 1 {
			t.Fatalf("ForgetSessions dry run = %+v, %v", fs, err)
		}
		if _, err := s.Session(ctx, "s2"); err != nil {
			t.Fatalf("a dry run forgot s2: %v", err)
		}
		fs, err := s.ForgetSessions(ctx, []string{"s1", "s2"}, false)
		// The tables are rewritten on both; only SQLite's WAL is ledger's
		// to empty (PostgreSQL's pg_wal is the server's).
		if err != nil || len(fs) != 2 || fs[0].SessionID != "s1" || fs[1].SessionID != "s2" || !fs[0].HeapRewritten || fs[0].WALTruncated == s.Shared() {
			t.Fatalf("ForgetSessions = %+v, %v", fs, err)
		}
		var n int
		if err := s.db.Get(&n, `SELECT count(*) FROM messages`); err != nil || n != 0 {
			t.Errorf("%d messages left (%v)", n, err)
		}
		fillConversation(t, s) // read again: both stay forgotten
		for _, id := range []string{"s1", "s2"} {
			if _, err := s.Session(ctx, id); !errors.Is(err, ErrNotFound) {
				t.Errorf("forgotten %s came back: %v", id, err)
			}
		}
	}},
	{"paused projects", func(t *testing.T, s *Store) {
		ctx := context.Background()
		at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
		for i, want := range []bool{true, false} { // a second pause keeps the first
			if paused, err := s.PauseProject(ctx, "/home/u/src/client/", at.Add(time.Duration(i)*time.Hour)); err != nil || paused != want {
				t.Fatalf("PauseProject #%d = %v, %v; want %v", i+1, paused, err, want)
			}
		}
		got, err := s.PausedProjects(ctx)
		if err != nil || len(got) != 1 || got[0].Project != "/home/u/src/client" || !got[0].At.Equal(at) {
			t.Fatalf("PausedProjects = %+v, %v", got, err)
		}
		// A search reads both lists in one statement.
		w, err := s.NewWriter(ctx, "claude")
		if err != nil {
			t.Fatal(err)
		}
		for id, p := range map[string]string{"p1": "/home/u/src/b", "p2": "/home/u/src/a", "p3": "/home/u/src/b", "p4": ""} {
			if err := w.PatchSession(ctx, SessionPatch{ID: id, Project: p, Time: at}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Commit(ctx, nil); err != nil {
			t.Fatal(err)
		}
		paused, stored, err := s.PausedAndStored(ctx)
		if err != nil || !reflect.DeepEqual(paused, got) || !slices.Equal(stored, []string{"/home/u/src/a", "/home/u/src/b"}) {
			t.Fatalf("PausedAndStored = %+v, %q, %v; want %+v and the two stored projects", paused, stored, err, got)
		}
		for i, want := range []bool{true, false} {
			if resumed, err := s.ResumeProject(ctx, "/home/u/src/client"); err != nil || resumed != want {
				t.Fatalf("ResumeProject #%d = %v, %v; want %v", i+1, resumed, err, want)
			}
		}
		if got, err := s.PausedProjects(ctx); err != nil || len(got) != 0 {
			t.Fatalf("PausedProjects after resume = %+v, %v", got, err)
		}
	}},
	{"cursors, marks, receipts, resume states", func(t *testing.T, s *Store) {
		ctx := context.Background()
		at := fillConversation(t, s)
		w, err := s.NewWriter(ctx, "claude")
		if err != nil {
			t.Fatal(err)
		}
		c := &Cursor{Path: "/home/u/.claude/projects/x/s1.jsonl", SessionID: "s1", Format: "claude", Size: 10, ModTime: 5, Offset: 10, Line: 2, HeadLen: 10, HeadHash: "h"}
		if err := w.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
		got, err := s.Cursor(ctx, c.Path)
		if err != nil || got.Path != c.Path || got.Offset != 10 || got.Line != 2 || got.State != "{}" {
			t.Errorf("Cursor = %+v, %v", got, err)
		}
		all, err := s.Cursors(ctx)
		if err != nil || len(all) != 1 || all[c.Path].Offset != 10 {
			t.Errorf("Cursors = %+v, %v", all, err)
		}
		files, err := s.SessionFiles(ctx, "s1")
		if err != nil || !slices.Equal(files, []string{c.Path}) {
			t.Errorf("SessionFiles = %v, %v", files, err)
		}
		if first, err := s.Mark(ctx, "s1", "warned"); err != nil || !first {
			t.Errorf("first Mark = %v, %v", first, err)
		}
		if again, err := s.Mark(ctx, "s1", "warned"); err != nil || again {
			t.Errorf("second Mark = %v, %v", again, err)
		}
		if err := s.AddHookReceipt(ctx, HookReceipt{SessionID: "s1", Event: "Stop", At: at, MS: 12, Outcome: OutcomeOK, Detail: "ok"}); err != nil {
			t.Fatal(err)
		}
		rs, err := s.HookReceipts(ctx, ReceiptFilter{SessionID: "s1"})
		if err != nil || len(rs) != 1 || rs[0].MS != 12 || !rs[0].At.Equal(at) {
			t.Errorf("HookReceipts = %+v, %v", rs, err)
		}
		sess, _ := s.Session(ctx, "s1")
		key, err := s.ResumeKey(ctx, sess)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SaveResumeStates(ctx, []ResumeState{{SessionID: "s1", Key: key, Doc: handoffDoc("s1", at)}}); err != nil {
			t.Fatal(err)
		}
		state, err := s.LoadResumeState(ctx, "s1")
		if err != nil || state.Key != key || state.Doc.Session != "s1" {
			t.Errorf("LoadResumeState = %+v, %v", state, err)
		}
		h, err := s.Check(ctx)
		if err != nil || h.Integrity != "ok" || h.FTS != "ok" || h.Sessions != 2 || h.Messages != 7 {
			t.Errorf("Check = %+v, %v", h, err)
		}
	}},
}

// rowCounts counts the rows of the ledger's tables.
func rowCounts(t *testing.T, s *Store) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, table := range []string{"sessions", "messages", "compactions", "handoffs", "notes"} {
		var n int
		if err := s.db.Get(&n, `SELECT count(*) FROM `+table); err != nil {
			t.Fatal(err)
		}
		out[table] = n
	}
	return out
}

// fillSearch writes three sessions to search: q1 in /work/api (a flaky
// timeout in session_store.go, a note), q2 elsewhere (a connection refused,
// a timeout, redis), q3 (goose migrations).
func fillSearch(t *testing.T, s *Store) time.Time {
	t.Helper()
	ctx := context.Background()
	at := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	w, err := s.NewWriter(ctx, "claude")
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range []struct {
		session, project string
		role             compact.Role
		text             string
	}{
		{"q1", "/work/api", compact.RoleUser, "the test in pkg/auth/session_store.go fails with a flaky timeout"},
		{"q1", "/work/api", compact.RoleUser, "look at the deadline first"},
		{"q2", "/work/web", compact.RoleAssistant, "dial tcp: connection refused, then a timeout from redis"},
		{"q3", "/work/db", compact.RoleAssistant, "the goose migrations ran: 00005_resume_state.sql applied"},
	} {
		if err := w.PatchSession(ctx, SessionPatch{ID: m.session, Project: m.project}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.AddMessage(ctx, compact.Message{UUID: fmt.Sprint("u", i), SessionID: m.session, Role: m.role,
			Time: at.Add(time.Duration(i) * time.Hour), Blocks: []compact.Block{{Kind: compact.BlockText, Text: m.text}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddNote(ctx, Note{SessionID: "q1", Kind: handoff.NoteDecision, Text: "raise the timeout to 5s", CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	return at
}

// hitSessions is the sessions hits belong to, each once, sorted.
func hitSessions(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		if !slices.Contains(out, h.SessionID) {
			out = append(out, h.SessionID)
		}
	}
	slices.Sort(out)
	return out
}
