package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentledger/ledger/store/storetest"
)

// TestSyncSameAnswers: after `ledger sync`, every read command's --json
// answer about the synced sessions is the same on the server as on the
// local ledger: the corpus with its agents' compactions, a PreCompact
// hook's handoff and record, and a clear (`ledger compact`) of a session
// its agent compacted too. Only what is by design the server's own
// differs: the ids of handoffs and compactions (the server numbers the
// rows of every machine that syncs to it; handoff_id and the handoffs' ids
// are compared through the handoffs matched by session and time) and a
// handoff's Markdown file path (the file stays on its machine). A second
// sync sends nothing, and one after new clears and hook records carries
// them too.
func TestSyncSameAnswers(t *testing.T) {
	t.Parallel()
	corpus := corpusDir(t)
	url := storetest.MigratedPG(t)
	home := t.TempDir()
	local := corpusFile(t, filepath.Join(home, "local.db"))
	const (
		spotter  = "258c7280-ae70-4798-800f-63464d01a85d" // an agent compaction
		viewer   = "ae4a77f8-aedd-4bc1-888f-c94edc91af04" // an agent compaction
		codex    = "019c8a59-e9dd-71f0-9ae3-4079fe9726a9" // an agent compaction
		plain    = "1af7fc5e-8455-4414-9ccd-011d40f70b2a" // none
		precomp  = "PreCompact"
		transDir = "claude"
	)
	preCompact := func(session string) {
		t.Helper()
		path := filepath.Join(corpus, transDir, "spotter-"+session+".jsonl")
		if session == plain {
			path = filepath.Join(corpus, transDir, "ccviewer-"+session+".jsonl")
		}
		in := hookJSON(t, map[string]any{"session_id": session, "transcript_path": path, "cwd": home,
			"hook_event_name": precomp, "trigger": "auto", "custom_instructions": nil})
		if r := newCmd(home, in).run("--db", local, "hook"); r.code != 0 || r.stderr != "" {
			t.Fatalf("PreCompact %s: exit %d, stderr %q", session, r.code, r.stderr)
		}
	}
	// The clears are made by the built binary (what is checked is what
	// sync sends of them); the hooks run in-process, within the budgets
	// the in-process runs are given.
	clear := func(session string) {
		t.Helper()
		if r := execLedger(t, home, "", "", nil, "--db", local, "compact", session, "--json"); r.code != 0 {
			t.Fatalf("compact %s: %s", session, r.stderr)
		}
	}
	type pushed struct{ Sessions, Messages, Compactions, Handoffs, Notes int64 }
	sync := func() pushed {
		t.Helper()
		r := ledgerEnv(t, home, nil, "--db", local, "sync", "--to", url, "--json")
		if r.code != 0 {
			t.Fatalf("sync: %s", r.stderr)
		}
		var p pushed
		decodeJSON(t, r.stdout, &p)
		return p
	}

	preCompact(viewer)
	clear(spotter)
	if p := sync(); p.Handoffs != 2 || p.Compactions == 0 {
		t.Errorf("first sync pushed %+v, want 2 handoffs and the compactions", p)
	}
	sameAnswers(t, home, local, url)
	// A sync with nothing new touches nothing.
	if p := sync(); p != (pushed{}) {
		t.Errorf("second sync pushed %+v, want nothing", p)
	}

	// New clears and hook records after a sync, of a session synced
	// already (one its agent compacted, one it did not) and again of one
	// with a clear: the next sync carries them.
	clear(codex)
	preCompact(plain)
	clear(spotter)
	if p := sync(); p.Handoffs != 3 || p.Compactions != 3 || p.Messages != 0 {
		t.Errorf("sync after new records pushed %+v, want 3 handoffs, 3 compactions, no message", p)
	}
	// The sessions' lists, the audits and every handoff again; the meters
	// of the sessions with new records (the others' messages and records
	// are as compared above: the sync sent no message, and the audits
	// list every compaction).
	sameAnswers(t, home, local, url, codex, plain, spotter)
}

// sameAnswers compares the --json answers of the read commands on the
// local ledger and on the server (see TestSyncSameAnswers for what may
// differ by design): the meters of the sessions metered (all if none is
// named). The built binary answers: what is compared is what sync wrote,
// and the read commands of every session on both sides would cost several
// times more under the race detector.
func sameAnswers(t *testing.T, home, local, url string, metered ...string) {
	t.Helper()
	answer := func(db string, args ...string) any {
		t.Helper()
		r := execLedger(t, home, "", "", nil, append([]string{"--db", db}, args...)...)
		if r.code != 0 {
			t.Fatalf("ledger %s on %s: exit %d: %s", strings.Join(args, " "), db, r.code, r.stderr)
		}
		var v any
		decodeJSON(t, r.stdout, &v)
		return v
	}
	// Handoffs are the same one on both sides when they are of the same
	// session, made at the same time, by the same trigger.
	key := func(h map[string]any) string { return fmt.Sprint(h["session"], h["created_at"], h["trigger"]) }
	serverID := map[string]any{}
	for _, h := range answer(url, "handoff", "list", "--json").([]any) {
		serverID[key(h.(map[string]any))] = h.(map[string]any)["id"]
	}
	toServer := map[string]any{}
	localHandoffs := answer(local, "handoff", "list", "--json").([]any)
	for _, h := range localHandoffs {
		h := h.(map[string]any)
		id, ok := serverID[key(h)]
		if !ok {
			t.Errorf("handoff %v (%s) is not on the server", h["id"], key(h))
			continue
		}
		toServer[fmt.Sprint(h["id"])] = id
	}
	// norm puts the local answer in the server's ids and leaves out what
	// is a machine's own.
	// A handoff's id is its "id", or a compaction's "handoff_id", or the
	// "id" of an audit --loss row's "handoff".
	var norm func(v any, handoff bool) any
	norm = func(v any, handoff bool) any {
		switch v := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, x := range v {
				switch {
				case k == "path" || k == "compaction":
					continue
				case x != nil && (k == "handoff_id" || k == "id" && (handoff || v["created_at"] != nil && v["session"] != nil)):
					id, ok := toServer[fmt.Sprint(x)]
					if !ok {
						t.Errorf("handoff %v: not among the handoffs", x)
					}
					x = id
				}
				out[k] = norm(x, k == "handoff")
			}
			return out
		case []any:
			out := make([]any, len(v))
			for i, x := range v {
				out[i] = norm(x, false)
			}
			return out
		}
		return v
	}
	commands := [][]string{{"sessions", "--json"}, {"audit", "--json"}, {"audit", "--loss", "--json"}, {"handoff", "list", "--json"}}
	var sessions []struct{ ID string }
	b, _ := json.Marshal(answer(local, "sessions", "--json"))
	decodeJSON(t, string(b), &sessions)
	for _, h := range localHandoffs {
		commands = append(commands, []string{"handoff", "show", fmt.Sprint(h.(map[string]any)["session"]), "--json"})
	}
	for _, s := range sessions {
		if len(metered) == 0 || slices.Contains(metered, s.ID) {
			commands = append(commands, []string{"meter", s.ID, "--json"})
		}
	}
	for _, c := range commands {
		want, got := norm(answer(local, c...), false), answer(url, c...)
		// The server's own ids: the handoff "id" of a server answer is
		// already the server's; strip what norm strips.
		got = stripOwn(got)
		if !reflect.DeepEqual(want, got) {
			w, _ := json.MarshalIndent(want, "", " ")
			g, _ := json.MarshalIndent(got, "", " ")
			t.Errorf("ledger %s differs:\nlocal (in the server's ids)\n%s\nserver\n%s", strings.Join(c, " "), firstDiff(string(w), string(g)), firstDiff(string(g), string(w)))
		}
	}
}

// stripOwn leaves out of an answer the keys that are a machine's own.
func stripOwn(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			if k != "path" && k != "compaction" {
				out[k] = stripOwn(x)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = stripOwn(x)
		}
		return out
	}
	return v
}

// firstDiff is a from the first line where it differs from b, a few lines.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	i := 0
	for i < len(al) && i < len(bl) && al[i] == bl[i] {
		i++
	}
	start := max(0, i-6)
	return strings.Join(al[start:min(len(al), i+6)], "\n")
}

// TestSyncSendsRecordsCompletedLater: a compaction record pushed before it
// was complete is completed on the server by the next sync. PreCompact
// writes its record before the compaction reaches the transcript; a sync
// sends it; then the transcript's boundary completes it here (pre_tokens,
// the summary, post_tokens from the next response's usage), and the next
// sync must carry that, though the record's id is below the server's mark
// (spotter-258c7280, an auto compaction at line 1286).
func TestSyncSendsRecordsCompletedLater(t *testing.T) {
	t.Parallel()
	const session = "258c7280-ae70-4798-800f-63464d01a85d"
	url := storetest.MigratedPG(t)
	home := t.TempDir()
	local := storetest.MigratedFile(t, filepath.Join(home, "local.db"))
	lines, boundary := boundaryOf(t, filepath.Join(corpusDir(t), "claude", "spotter-"+session+".jsonl"))
	path := filepath.Join(home, ".claude", "projects", "-home-USER-projects-spotter", session+".jsonl")
	os.MkdirAll(filepath.Dir(path), 0o700)
	write := func(ls [][]byte) {
		if err := os.WriteFile(path, bytes.Join(ls, nil), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sync := func() {
		t.Helper()
		if r := ledgerEnv(t, home, nil, "--db", local, "sync", "--to", url, "--json"); r.code != 0 {
			t.Fatalf("sync: %s", r.stderr)
		}
	}
	write(lines[:boundary])
	in := hookJSON(t, map[string]any{"session_id": session, "transcript_path": path, "cwd": home,
		"hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": nil})
	if r := newCmd(home, in).run("--db", local, "hook"); r.code != 0 || r.stderr != "" {
		t.Fatalf("PreCompact: exit %d, stderr %q", r.code, r.stderr)
	}
	sync()
	write(lines)
	ingestBin(t, home, local, path) // completes the record here; what sync does next is the subject
	if rows := auditRows(t, home, local); len(rows) != 1 || rows[0].PreTokens == nil || rows[0].Summary == 0 {
		t.Fatalf("the hook's record was not completed here: %+v", rows)
	}
	sync()
	sameAnswers(t, home, local, url)
}
