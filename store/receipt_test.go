package store

import (
	"context"
	"testing"
	"time"
)

// TestHookReceipts: receipts are stored and listed newest first, by
// session; under a lock deadline, a receipt gives up waiting for another
// connection's write lock then (the hook then logs it elsewhere), and the
// connection it used goes back to the pool with the usual busy_timeout.
func TestHookReceipts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTemp(t)
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for i, r := range []HookReceipt{
		{SessionID: "s1", Event: "Stop", At: at, MS: 12, Outcome: OutcomeOK, Detail: "ingested 3 messages"},
		{SessionID: "s2", Event: "SessionEnd", At: at.Add(time.Second), MS: 1001, Outcome: OutcomeDeferred, Detail: "lock held"},
		{SessionID: "", Event: "", At: at.Add(2 * time.Second), Outcome: OutcomeFailed, Detail: "hook input is not JSON"},
	} {
		if err := s.AddHookReceipt(ctx, r); err != nil {
			t.Fatalf("receipt %d: %v", i, err)
		}
	}
	all, err := s.HookReceipts(ctx, ReceiptFilter{})
	if err != nil || len(all) != 3 || all[0].Outcome != OutcomeFailed || all[2].Detail != "ingested 3 messages" || !all[2].At.Equal(at) {
		t.Errorf("all receipts: %+v, %v", all, err)
	}
	if one, _ := s.HookReceipts(ctx, ReceiptFilter{SessionID: "s2"}); len(one) != 1 || one[0].MS != 1001 {
		t.Errorf("s2's receipts: %+v", one)
	}
	if two, _ := s.HookReceipts(ctx, ReceiptFilter{Since: at.Add(time.Second), Limit: 1}); len(two) != 1 || two[0].Event != "" {
		t.Errorf("since, limit 1: %+v", two)
	}

	other, err := Open(ctx, s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.db.BeginTxx(ctx, nil) // immediate: the write lock
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = s.AddHookReceipt(WithLockDeadline(ctx, start.Add(100*time.Millisecond)), HookReceipt{Event: "Stop", At: at, Outcome: OutcomeOK})
	if !IsBusy(err) || time.Since(start) > 2*time.Second {
		t.Errorf("under a held lock: %v after %v; want busy soon after 100 ms", err, time.Since(start))
	}
	tx.Rollback()
	var timeout int
	for range 4 { // every pooled connection
		if err := s.db.Get(&timeout, `PRAGMA busy_timeout`); err != nil || timeout != defaultBusyTimeout {
			t.Errorf("busy_timeout %d (%v), want %d", timeout, err, defaultBusyTimeout)
		}
	}
}
