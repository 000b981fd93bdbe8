package transcript

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestPassOverLongLineAcrossReads: reads with a deadline far too short
// for a long line pass over it across as many reads as it takes (each
// goes on from where the last got to, through the State a cursor keeps),
// count it as skipped once, never yield it, and then read on; nothing
// before or after it is lost. (The built binary's hook test proves the
// default limits on a 150 MB line in one run; here the skim window is cut
// to 0.1 ms and the floor to 1 MB, so that a 16 MB line takes many.)
func TestPassOverLongLineAcrossReads(t *testing.T) {
	oldSkim, oldFloor := skimFor, skipFloor
	skimFor, skipFloor = 100*time.Microsecond, 1<<20
	defer func() { skimFor, skipFloor = oldSkim, oldFloor }()
	msg := func(uuid, text string) string {
		b, _ := json.Marshal(map[string]any{"type": "user", "uuid": uuid, "sessionId": "s", "timestamp": "2026-03-02T09:00:00Z",
			"message": map[string]any{"role": "user", "content": text}})
		return string(b) + "\n"
	}
	var data bytes.Buffer
	data.WriteString(msg("a", "before the long line"))
	data.WriteString(`{"type":"user","uuid":"long","sessionId":"s","message":{"role":"user","content":"` + strings.Repeat("x", 16<<20) + "\"}}\n")
	data.WriteString(msg("b", "after the long line"))
	r := bytes.NewReader(data.Bytes())

	st, start, line := State{Format: FormatClaude}, int64(0), 1
	var texts []string
	skipped, reads, skims := 0, 0, 0
	// Each read has a millisecond; one that got nothing done (a loaded
	// machine, the race detector: its time gone before it started) gets
	// twice the last, up to 50 ms, still far too little to read 16 MB.
	budget := time.Millisecond
	for ; start < int64(data.Len()) && reads < 10000; reads++ {
		ctx, cancel := context.WithTimeout(context.Background(), budget)
		before, beforeSkim := start, st.Skim
		r.Seek(start, 0)
		res, err := Read(ctx, r, &st, start, line, func(rec Record) error {
			if rec.Message != nil {
				texts = append(texts, rec.Message.Text())
			}
			return nil
		})
		cancel()
		if err != nil && ctx.Err() == nil {
			t.Fatalf("read %d: %v", reads, err)
		}
		skipped += res.Skipped
		start, line = res.End, res.NextLine
		if st.Skim != nil {
			skims++
		}
		if start == before && (st.Skim == nil || beforeSkim != nil && st.Skim.Past == beforeSkim.Past) {
			budget = min(2*budget, 50*time.Millisecond)
		} else {
			budget = time.Millisecond
		}
		// Through JSON, as the cursor keeps it between hook runs.
		b, _ := json.Marshal(st)
		st = State{}
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatal(err)
		}
	}
	if start != int64(data.Len()) || skipped != 1 || len(texts) != 2 || texts[0] != "before the long line" || texts[1] != "after the long line" {
		t.Fatalf("after %d reads: at %d of %d, %d skipped, messages %.80q", reads, start, data.Len(), skipped, texts)
	}
	if skims == 0 {
		t.Errorf("the long line was passed over in one read: the test does not exercise passing over across reads")
	}
	t.Logf("%d reads, %d of them stopped inside the long line", reads, skims)
}

// TestLongLineUnderTheFloorIsLeft: a line under skipFloor that a read's
// deadline interrupts is left for the next read, which reads it whole
// (cut, as any line over 4 MB): a read with little time, on a loaded
// machine, never loses a line it could have read.
func TestLongLineUnderTheFloorIsLeft(t *testing.T) {
	var data bytes.Buffer
	data.WriteString(`{"type":"user","uuid":"long","sessionId":"s","timestamp":"2026-03-02T09:00:00Z","message":{"role":"user","content":"` +
		strings.Repeat("y", 8<<20) + " needle\"}}\n")
	st := State{Format: FormatClaude}
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	res, _ := Read(ctx, bytes.NewReader(data.Bytes()), &st, 0, 1, func(Record) error { return nil })
	if res.Skipped != 0 || res.End != 0 || st.Skim != nil {
		t.Fatalf("a read with 1 ms: %+v, skim %+v; want the line left for the next read", res, st.Skim)
	}
	var got []Record
	res, err := Read(context.Background(), bytes.NewReader(data.Bytes()), &st, 0, 1, func(r Record) error {
		got = append(got, r)
		return nil
	})
	if err != nil || res.Skipped != 0 || len(got) != 1 || got[0].Message == nil || !strings.HasSuffix(got[0].Message.Text(), "needle") {
		t.Errorf("the next read: %v, %+v, %d records", err, res, len(got))
	}
}
