package store

import (
	"context"
	"testing"
	"time"

	"github.com/agentledger/ledger/handoff"
)

// TestSaveResumeStatesUnderALockDeadline: a resume state stored under a
// lock deadline (a hook's, or a resume storing what it extracted) gives up
// waiting for another connection's write lock then, as busy, instead of
// waiting out busy_timeout (5 s) and its retries.
func TestSaveResumeStatesUnderALockDeadline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTemp(t)
	other, err := Open(ctx, s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.db.BeginTxx(ctx, nil) // immediate: the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	start := time.Now()
	err = s.SaveResumeStates(WithLockDeadline(ctx, start.Add(100*time.Millisecond)),
		[]ResumeState{{SessionID: "s1", Key: "k", Doc: handoff.Doc{Task: "t"}}})
	if !IsBusy(err) || time.Since(start) > 2*time.Second {
		t.Errorf("under a held lock: %v after %v; want busy soon after 100 ms", err, time.Since(start))
	}
}
