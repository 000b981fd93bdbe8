package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/store"
)

// TestStopWaitsForTheTurnsLastAnswer: Qwen Code fires Stop while the last
// records of the turn may still be in its write queue. The recorded run's
// transcript, cut after the tool call, is what the hook finds; the tool's
// result and the answer its Stop input names are appended once the hook
// has read the first part (as Qwen Code's queue writes them): the hook
// reads them too, within its budget. When they never come, the receipt
// says the rest is left for the next event, and the hook still ends
// within its budget.
func TestStopWaitsForTheTurnsLastAnswer(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "..", "testdata", "agents", "qwen-0.24.4")
	raw, err := os.ReadFile(filepath.Join(dir, "2b788ca2-da3e-4837-8559-64db64b96aa9.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(raw, []byte("\n"))
	head, tail := bytes.Join(lines[:5], nil), bytes.Join(lines[5:9], nil) // through the tool call; its result and the answer
	stop, err := os.ReadFile(filepath.Join(dir, "hooks", "008-Stop.json"))
	if err != nil {
		t.Fatal(err)
	}
	const session = "2b788ca2-da3e-4837-8559-64db64b96aa9"
	for _, tc := range []struct {
		name   string
		append bool
	}{{"the answer is written during the hook", true}, {"the answer never comes", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, s, home := hookEngine(t)
			// The subject is what the hook waits for, not how fast a
			// loaded machine starts: a budget of 5 s for Stop.
			e.hookScale = 5
			path := filepath.Join(home, ".qwen", "projects", "p", "chats", session+".jsonl")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, head, 0o644); err != nil {
				t.Fatal(err)
			}
			var in map[string]any
			if err := json.Unmarshal(stop, &in); err != nil {
				t.Fatal(err)
			}
			in["transcript_path"] = path
			payload, _ := json.Marshal(in)

			ctx := context.Background()
			done := make(chan HookRun, 1)
			start := time.Now()
			go func() { done <- e.RunHook(ctx, bytes.NewReader(payload), HookOptions{Agent: "qwen"}) }()
			if tc.append {
				// Once the hook has read the first part, the agent's
				// queue writes the rest.
				for {
					if ms, err := s.Messages(ctx, session, 0); err == nil && len(ms) > 0 {
						break
					}
					select {
					case run := <-done:
						t.Fatalf("the hook ended before reading anything: %+v", run)
					case <-time.After(5 * time.Millisecond):
					}
				}
				f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.Write(tail)
				f.Close()
			}
			run := <-done
			ms, err := s.Messages(ctx, session, 0)
			if err != nil {
				t.Fatal(err)
			}
			var answered bool
			for _, m := range ms {
				answered = answered || strings.Contains(m.Text(), "Done: wrote the file.")
			}
			switch {
			case tc.append && (!answered || run.Receipt.Outcome != store.OutcomeOK || !strings.Contains(run.Receipt.Detail, "more messages, once the agent had written the turn's last answer")):
				t.Errorf("answer stored %v; receipt %s: %s", answered, run.Receipt.Outcome, run.Receipt.Detail)
			case !tc.append && (answered || run.Receipt.Outcome != store.OutcomeDeferred || !strings.Contains(run.Receipt.Detail, "did not hold the turn's last answer")):
				t.Errorf("answer stored %v; receipt %s: %s", answered, run.Receipt.Outcome, run.Receipt.Detail)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("the hook took %v, past its budget of 5 s", took)
			}
		})
	}
}
