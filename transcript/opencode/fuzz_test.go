package opencode

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentledger/ledger/transcript"
)

// FuzzDecode decodes a message row's JSON and two parts' as the reader
// does: whatever the columns hold, no panic; every record is of the
// session, a message has a uuid, and decoding the same rows again gives
// the same records.
func FuzzDecode(f *testing.F) {
	for _, s := range [][3]string{
		{`{"role":"user","time":{"created":1}}`, `{"type":"text","text":"hi"}`, `{"type":"compaction","auto":true}`},
		{`{"role":"assistant","modelID":"m","time":{"created":1,"completed":2},"tokens":{"input":1,"output":2,"reasoning":3,"cache":{"read":4,"write":5}}}`,
			`{"type":"tool","tool":"write","callID":"c","state":{"status":"completed","input":{"filePath":"/a"},"output":"ok"}}`,
			`{"type":"tool","tool":"bash","callID":"d","state":{"status":"error","input":{},"error":"boom"}}`},
		{`{"role":"assistant","mode":"compaction","summary":true,"time":{"completed":3}}`, `{"type":"text","text":"## Goal"}`, `{"type":"step-finish","tokens":{"input":1}}`},
		{`{"role":"user","summary":{"diffs":[]}}`, `{"type":"file","mime":"image/png","filename":"a.png"}`, `{"type":"subtask","agent":"general","prompt":"p"}`},
		{`{"role":"assistant","time":{"completed":1}}`, `{"type":"reasoning","text":"hm"}`, `{"type":"tool","tool":"x"}`},
		{`[1]`, `{"type":7}`, `null`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]), []byte(s[2]))
	}
	f.Fuzz(func(t *testing.T, msg, p1, p2 []byte) {
		row := Row{ID: "msg_1", Created: 5, Data: msg, Parts: []PartRow{{ID: "prt_1", Created: 6, Data: p1}, {ID: "prt_2", Data: p2}}}
		_ = Settled(row)
		run := func() ([]transcript.Record, Cursor) {
			cur := Cursor{Last: "prev"}
			d := decoder{session: "ses", cur: &cur, skip: func(string) {}}
			return d.decode(row, nil), cur
		}
		recs, cur := run()
		for _, r := range recs {
			switch {
			case r.Message != nil:
				if r.Message.SessionID != "ses" || r.Message.UUID == "" || r.Message.ParentUUID == "" {
					t.Fatalf("message %+v", r.Message)
				}
				if _, err := json.Marshal(r.Message); err != nil {
					t.Fatal(err)
				}
			case r.Boundary != nil:
				if r.Boundary.SessionID != "ses" || r.Boundary.UUID == "" {
					t.Fatalf("boundary %+v", r.Boundary)
				}
			case r.Session != nil:
				if r.Session.ID != "ses" {
					t.Fatalf("session %+v", r.Session)
				}
			default:
				t.Fatal("empty record")
			}
		}
		again, cur2 := run()
		if !reflect.DeepEqual(recs, again) || !reflect.DeepEqual(cur, cur2) {
			t.Fatal("decoding is not deterministic")
		}
	})
}
