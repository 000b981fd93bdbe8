package store

import (
	"context"
	"math/rand/v2"
	"time"
)

// Retries of a transaction that SQLite refused as busy. busy_timeout (in
// the DSN) already waits up to 5 s inside SQLite for most locks; what gets
// past it (a WAL recovery, switching a fresh file to WAL while another
// process opens it, a writer that held the lock longer than the timeout)
// is retried here, whole, after a pause with full jitter so that processes
// that collided do not collide again in step.
const (
	retryAttempts = 5
	retryBase     = 20 * time.Millisecond
	retryCap      = time.Second
)

// Retry runs fn, and runs it again while it fails with a busy error, up to
// retryAttempts times in all, sleeping a random time up to 20 ms, 40 ms,
// ... (at most 1 s) between attempts. fn must be a whole transaction (or
// start from nothing each time): a busy error means it wrote nothing. Any
// other error, and the last busy one, is returned as it is; a done ctx, or
// a lock deadline passed (WithLockDeadline), stops the waiting.
func Retry(ctx context.Context, fn func() error) error {
	return retry(ctx, retryAttempts, retryBase, retryCap, fn)
}

func retry(ctx context.Context, attempts int, base, ceiling time.Duration, fn func() error) error {
	var err error
	by, bounded := lockDeadline(ctx)
	for i := range attempts {
		if err = fn(); !IsBusy(err) || i == attempts-1 || bounded && time.Now().After(by) {
			return err
		}
		wait := min(ceiling, base<<i)
		t := time.NewTimer(rand.N(wait) + 1)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
	return err
}
